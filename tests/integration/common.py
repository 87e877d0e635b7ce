"""Shared helpers for integration tests: `from common import Skip`."""
import os


class Skip(Exception):
    """Raised by a test that cannot run here; the message says why."""


def rust_target(ctx):
    """tests/targets/rust_target.rs, built only where a Rust compiler is."""
    path = os.path.join(ctx.targets, "rust_target")
    if not os.path.exists(path):
        raise Skip("no Rust compiler on this machine (make test-deps installs Debian's rustc)")
    return path
