"""Shared helpers for integration tests: `from common import Skip`."""


class Skip(Exception):
    """Raised by a test that cannot run here; the message says why."""
