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


_BREAKPOINTS = {}


def require_breakpoints(ctx):
    """Skips (with clockprof's own reason) where hardware breakpoints do not
    fire: clockprof's start-up self-test says so with exit 3."""
    import subprocess
    if "why" not in _BREAKPOINTS:
        proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "--mechanism",
                               "breakpoint", "--", "true"], capture_output=True, text=True,
                              timeout=60)
        _BREAKPOINTS["why"] = None if proc.returncode == 0 else proc.stderr.strip()
    if _BREAKPOINTS["why"]:
        raise Skip(_BREAKPOINTS["why"])
