"""Shared helpers for integration tests: `from common import Skip`."""
import os
import subprocess


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


def bpf_ids(pid):
    """The BPF programs and links process pid holds (from its fdinfo), so
    that another clockprof running meanwhile is not mistaken for it."""
    progs, links = set(), set()
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return progs, links
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        progs.add(int(line.split()[1]))
                    elif line.startswith("link_id:"):
                        links.add(int(line.split()[1]))
        except OSError:
            pass
    return progs, links


def live_bpf_ids(kind):
    out = subprocess.run(["bpftool", kind, "show"], capture_output=True, text=True).stdout
    return {int(line.split(":")[0]) for line in out.splitlines()
            if line and line[0].isdigit()}
