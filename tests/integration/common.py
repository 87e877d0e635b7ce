"""Shared helpers for integration tests: `from common import Skip`."""
import os
import re
import struct
import subprocess

from readiness import wait_for


class Skip(Exception):
    """Raised by a test that cannot run here; the message says why."""


def site_line(target_source, marker):
    """The line of tests/targets/TARGET_SOURCE whose comment names
    SITE:marker (the lines the targets read at, by construction)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "targets", target_source)
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if re.search(r"SITE:%s\b" % re.escape(marker), text):
                return number
    raise AssertionError(f"no SITE:{marker} in {path}")


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


def fd_infos(pid):
    """The fields of each of process pid's fds (/proc/PID/fdinfo), as
    {name: text} dicts; none once it has gone."""
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                yield dict((k, v.strip()) for k, v in
                           (line.split(":", 1) for line in f if ":" in line))
        except OSError:
            pass


def bpf_ids(pid):
    """The BPF programs and links process pid holds (from its fdinfo), so
    that another clockprof running meanwhile is not mistaken for it."""
    progs, links = set(), set()
    for info in fd_infos(pid):
        if "prog_id" in info:
            progs.add(int(info["prog_id"]))
        if "link_id" in info:
            links.add(int(info["link_id"]))
    return progs, links


def live_bpf_ids(kind):
    out = subprocess.run(["bpftool", kind, "show"], capture_output=True, text=True).stdout
    return {int(line.split(":")[0]) for line in out.splitlines()
            if line and line[0].isdigit()}


def segments_end(f):
    """Where each executable PT_LOAD segment of the ELF file f ends in the
    file (p_offset + p_filesz): past it, in the same page, the vDSO patch
    leaves the trampolines of the functions it redirected (inert once
    switched back, documented), which are not the file's code."""
    f.seek(0)
    head = f.read(64)
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    ends = []
    for i in range(phnum):
        f.seek(phoff + i * phentsize)
        p_type, p_flags, p_offset, _, _, p_filesz = struct.unpack("<IIQQQQ", f.read(40))
        if p_type == 1 and p_flags & 1:
            ends.append(p_offset + p_filesz)
    return ends


def springboard_at(have, i, past):
    """Whether byte i of have (a mapping's bytes) is in a near jump whose
    target is at or past offset past (the segment's end, where the vDSO
    patch puts its trampolines): a springboard it left in the padding
    between two functions, inert once the site is switched back."""
    for j in range(max(0, i - 4), i + 1):
        if have[j] == 0xE9 and j + 5 <= len(have):
            rel, = struct.unpack_from("<i", have, j + 1)
            if j + 5 + rel >= past:
                return j
    return None


INT3 = 0xCC


def code_changed(pid, breakpoints_only=False, jumps_too=False):
    """How many bytes of pid's code differ from its files' bytes at the same
    offsets: a uprobe's breakpoint is an int3 written into the code, a
    redirect's jump too (breakpoints_only: the int3s alone). Read through
    /proc/PID/mem and /proc/PID/map_files (a deleted file too). The unused
    end of a segment's last page is not code (segments_end), and a
    springboard the patch left in padding is inert (springboard_at); but
    a live redirect's near jump to its trampoline there looks the same:
    jumps_too counts those bytes as well (while the window is open)."""
    changed = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or "x" not in fields[1] or not fields[5].startswith("/"):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            off = int(fields[2], 16)
            with open(f"/proc/{pid}/map_files/{fields[0]}", "rb") as f:
                ends = segments_end(f)
                f.seek(off)
                want = f.read(hi - lo)
            mem.seek(lo)
            have = mem.read(len(want))
            code = [e - off for e in ends if off < e <= off + len(want)]
            past = max(code) if code else len(want) + (1 << 40)
            if code:
                have, want = have[:past], want[:past]
            i = 0
            while i < min(len(have), len(want)):
                if have[i] != want[i]:
                    j = None if jumps_too else springboard_at(have, i, past)
                    if j is not None:
                        i = j + 5
                        continue
                    changed += not breakpoints_only or have[i] == INT3
                i += 1
    return changed


def accountable_kib(pid):
    """What process pid is charged to the kernel's commit (Committed_AS):
    its mappings flagged accountable ("ac" in smaps' VmFlags), in KiB. Of
    this process alone, unlike Committed_AS, which the host's others move
    (the tests' and tests/bench/attach_cost.py's measure)."""
    total = size = 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if line.startswith("Size:"):
                size = int(line.split()[1])
            elif line.startswith("VmFlags:") and "ac" in line.split()[1:]:
                total += size
    return total


def tree(pid):
    """pid and the processes descended from it now."""
    parents = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parents[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                pass
    out = [pid]
    for p in out:
        out += [c for c, pp in parents.items() if pp == p]
    return out


def attach_until_exit(ctx, argv, *opts, env=None):
    """`clockprof attach OPTS` to argv, started here, for a window that
    ends as the target does: a number of requests, not of seconds (the
    requests a window of seconds holds follow the host's speed, and a
    loaded host's held too few). The attach's result; the target must
    have exited 0."""
    target = subprocess.Popen(argv)
    try:
        wait_for(lambda: "/libc.so.6" in open(f"/proc/{target.pid}/maps").read(),
                 "the target's loader")
        proc = ctx.run("attach", *opts, target.pid, env=env)
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
        assert target.wait(timeout=60) == 0, f"the target exited {target.returncode}"
        return proc
    finally:
        if target.poll() is None:
            target.kill()
            target.wait(timeout=30)
