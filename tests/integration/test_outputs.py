"""Where clockprof's outputs go, under hostile and unlucky conditions
(issue 30, items 1-3): a symlink is opened as given, as a shell's `>`
opens it, never resolved and renamed over; a FIFO with no reader is
waited for before anything is launched, and Ctrl-C/SIGTERM end the wait;
when one output fails, verdict.json is not put in place."""
import gzip
import json
import os
import signal
import subprocess
import time

from common import Skip
from readiness import wait_for, wait_serving

NOBODY = 65534
GUARD = 60  # s; a guard against a hang, never reached when things work


def make_runs(ctx):
    """One base and one head run file, as `clockprof compare` takes them."""
    from test_compare_cli import make_side
    return make_side(ctx, "base", 1), make_side(ctx, "head", 1)


def every_output(ctx, path):
    """Each output option of each command, writing to path: (name, argv)."""
    base, head = make_runs(ctx)
    gate = ["compare", "--base", *base, "--head", *head]
    run = ["run", "-q", "-e", "none"]
    tail = ["--", "touch", os.path.join(ctx.tmp, "launched")]
    return [("compare -o", [*gate, "-o", path]),
            ("compare --markdown", [*gate, "--markdown", path]),
            ("compare --html", [*gate, "--html", path]),
            ("report -o", ["report", base[0], "-o", path]),
            ("run -o", [*run, "-o", path, *tail]),
            ("run --html", [*run, "--html", path, *tail]),
            ("run --folded", [*run, "--folded", path, *tail]),
            ("run --speedscope", [*run, "--speedscope", path, *tail]),
            ("run --pprof", [*run, "--pprof", path, *tail])]


def victim_file(ctx, name, owner=0):
    path = os.path.join(ctx.tmp, name)
    with open(path, "w") as f:
        f.write("victim")
    os.chown(path, owner, owner)
    os.chmod(path, 0o644)
    return path


def test_symlink_planted_in_sticky_dir_is_not_followed_past_the_kernel(ctx):
    # As nobody: `ln -s /root/victim /tmp/evil.json`; as root: `-o
    # /tmp/evil.json`. With fs.protected_symlinks=1 a shell's `>` gets
    # "Permission denied"; clockprof resolved the link itself and renamed
    # its temp file over the victim.
    if os.geteuid() != 0:
        raise Skip("needs root, to be the user whom the link must not fool")
    # Where the host leaves it off, the test turns it on for its own time
    # (the kernel's refusal is what clockprof must not walk around).
    with open("/proc/sys/fs/protected_symlinks") as f:
        was = f.read().strip()
    if was == "0":
        with open("/proc/sys/fs/protected_symlinks", "w") as f:
            f.write("1")
    try:
        _planted_symlink_refused(ctx)
    finally:
        if was == "0":
            with open("/proc/sys/fs/protected_symlinks", "w") as f:
                f.write("0")


def _planted_symlink_refused(ctx):
    sticky = os.path.join(ctx.tmp, "sticky")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    victim = victim_file(ctx, "victim.txt")
    evil = os.path.join(sticky, "evil.json")
    os.symlink(victim, evil)
    os.lchown(evil, NOBODY, NOBODY)
    for name, argv in every_output(ctx, evil):
        proc = ctx.run(*argv, timeout=GUARD)
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and "Permission denied" in lines[0] and evil in lines[0], \
            (name, proc.stderr)
        with open(victim) as f:
            assert f.read() == "victim", name
        assert os.path.islink(evil), name
        assert not os.path.exists(os.path.join(ctx.tmp, "launched")), name


def test_symlink_is_written_through_in_place(ctx):
    # Where the kernel lets root follow the link (not in a sticky
    # directory), the file it names is written in place, as by `>`: the
    # same file (inode, owner, mode), the link still a link. The old code
    # renamed a new root-owned file over it.
    victim = victim_file(ctx, "theirs.json", owner=NOBODY)
    before = os.stat(victim)
    link = os.path.join(ctx.tmp, "link.json")
    os.symlink(victim, link)
    os.lchown(link, NOBODY, NOBODY)
    for name, argv in every_output(ctx, link):
        if name.startswith("run") and name != "run -o":
            continue  # the same path through the same code; one run is enough
        proc = ctx.run(*argv, timeout=GUARD)
        assert proc.returncode == 0, (name, proc.stderr)
        after = os.stat(victim)
        assert (after.st_ino, after.st_uid, after.st_mode) == \
            (before.st_ino, before.st_uid, before.st_mode), name
        assert os.path.islink(link), name
        with open(victim) as f:
            assert f.read() not in ("", "victim"), name


def waiting_for_reader(proc, what):
    """Waits until proc says it waits for a reader of its output FIFO, or
    is found blocked in the kernel's open of it (as the old code was, deaf
    to signals); returns what it said on stderr so far."""
    os.set_blocking(proc.stderr.fileno(), False)
    seen = []

    def waiting():
        try:
            chunk = os.read(proc.stderr.fileno(), 4096)
        except BlockingIOError:
            chunk = b""
        seen.append(chunk.decode(errors="replace"))
        if "waiting for a reader of" in "".join(seen):
            return True
        if proc.poll() is not None:
            raise AssertionError(f"{what} ended ({proc.returncode}): {''.join(seen)!r}")
        try:
            with open(f"/proc/{proc.pid}/wchan") as f:
                return f.read() == "wait_for_partner"
        except OSError:
            return False

    wait_for(waiting, f"{what} to wait for a reader", timeout=GUARD)
    os.set_blocking(proc.stderr.fileno(), True)
    return "".join(seen)


def ends_on(proc, sig, what):
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=GUARD)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{what} still running {GUARD} s after {sig.name}") from None
    rest = proc.stderr.read().decode(errors="replace")
    return code, rest


def fifo(ctx, name="out.fifo"):
    path = os.path.join(ctx.tmp, name)
    os.mkfifo(path)
    return path


def stopped_while_waiting(ctx, argv, sig, what):
    """Starts clockprof argv whose output is a FIFO nobody reads, waits for
    its notice, sends sig: it must end, exit 2, saying why."""
    proc = subprocess.Popen([ctx.clockprof, *map(str, argv)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        seen = waiting_for_reader(proc, what)
        code, rest = ends_on(proc, sig, what)
    finally:
        if proc.poll() is None:
            proc.kill()  # SIGKILL: what the old code needed
            proc.wait()
    assert code == 2, (what, code, seen + rest)
    assert "interrupted while waiting for a reader" in rest, (what, seen + rest)
    return seen + rest


def test_run_output_fifo_without_reader_ends_on_sigterm(ctx):
    # `mkfifo f; clockprof run -o f -- CMD`: the open waited for a reader
    # with the stop signals blocked, after the command had run; only
    # SIGKILL ended it. Now it waits before launching, and SIGTERM ends it.
    marker = os.path.join(ctx.tmp, "launched")
    path = fifo(ctx)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        stopped_while_waiting(ctx, ["run", "-d", "1", "-e", "none", "-o", path, "--",
                                    "touch", marker], sig, f"run ({sig.name})")
        assert not os.path.exists(marker), "the command was launched before the output was open"
    # Any output option, not only -o.
    stopped_while_waiting(ctx, ["run", "-e", "none", "--folded", path, "--", "touch", marker],
                          signal.SIGINT, "run --folded")
    assert not os.path.exists(marker)


def read_run_through_fifo(ctx, option, path):
    """What a reader of FIFO path gets from `run OPTION path` on a target
    of 3 reads; clockprof must wait for the reader and then exit 0."""
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", option, path, "--",
                             ctx.target("reads_target"), "time", "1", "3"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert "waiting for a reader of" in waiting_for_reader(proc, f"run {option}")
        with open(path, "rb") as f:
            data = f.read()
        assert proc.wait(timeout=GUARD) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return data


def test_run_output_fifo_reader_gets_the_run(ctx):
    data = read_run_through_fifo(ctx, "-o", fifo(ctx))
    assert json.loads(data)["clock_reads"]["total"] == 3, data[:200]


def test_attach_output_fifo_without_reader_ends_on_sigint(ctx):
    target = subprocess.Popen([ctx.target("reads_target"), "time", "1", "0"])
    try:
        wait_serving(target)
        path = fifo(ctx)
        stopped_while_waiting(ctx, ["attach", "-d", "1", "-e", "none", "-o", path,
                                    target.pid], signal.SIGINT, "attach")
        # The target was never touched: still running, not stopped.
        assert target.poll() is None
    finally:
        target.kill()
        target.wait()


def test_compare_output_fifo_without_reader_ends_on_sigterm(ctx):
    # compare has no window: SIGTERM killed it in the kernel's open, by the
    # signal, not with an exit code.
    base, head = make_runs(ctx)
    path = fifo(ctx)
    verdict = os.path.join(ctx.tmp, "v.json")
    stopped_while_waiting(ctx, ["compare", "--base", *base, "--head", *head, "-o", verdict,
                                "--markdown", path], signal.SIGTERM, "compare")
    assert not os.path.exists(verdict)


def old_verdict(ctx, name="v.json"):
    path = os.path.join(ctx.tmp, name)
    with open(path, "w") as f:
        f.write("older verdict")
    return path


def test_failed_output_leaves_no_verdict_in_place(ctx):
    # Disk full on --html after v.json was put in place: v.json said the
    # gate passed (exit 0), clockprof exited 2. /dev/full fails the HTML
    # the same way, after the verdict was written.
    base, head = make_runs(ctx)
    for opt in ("--html", "--markdown"):
        verdict = old_verdict(ctx)
        proc = ctx.run("compare", "--base", *base, "--head", *head, "-o", verdict,
                       opt, "/dev/full")
        assert proc.returncode == 2, (opt, proc.stderr)
        assert "/dev/full" in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
        with open(verdict) as f:
            assert f.read() == "older verdict", opt
        assert not [n for n in os.listdir(ctx.tmp) if n.startswith(".clockprof")]


def test_full_disk_leaves_no_verdict_in_place(ctx):
    if os.geteuid() != 0:
        raise Skip("mounting a small tmpfs needs root")
    base, head = make_runs(ctx)
    small = os.path.join(ctx.tmp, "small")
    os.mkdir(small)
    # 32 KiB: the verdict (~3 KB) and an older one fit, the HTML (~46 KB) does not.
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", small],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        raise Skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        verdict = old_verdict(ctx, "small/v.json")
        proc = ctx.run("compare", "--base", *base, "--head", *head, "-o", verdict,
                       "--html", os.path.join(small, "report.html"))
        assert proc.returncode == 2, (proc.returncode, proc.stderr)
        assert "No space left on device" in proc.stderr, proc.stderr
        with open(verdict) as f:
            assert f.read() == "older verdict"
        assert os.listdir(small) == ["v.json"], os.listdir(small)
    finally:
        subprocess.run(["umount", small], check=True)


def test_run_keeps_what_it_measured_when_a_report_fails(ctx):
    # run.json holds the measurement and is put in place last; a derived
    # output that fails says so (exit 2) without costing it.
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--html", "/dev/full", "--",
                   ctx.target("reads_target"), "time", 1, 3)
    assert proc.returncode == 2, proc.stderr
    assert "/dev/full" in proc.stderr, proc.stderr
    assert ctx.load_json(out)["clock_reads"]["total"] == 3


def test_run_pprof_fifo_reader_gets_the_profile(ctx):
    # --pprof is an output like the others: a FIFO is written as what it
    # is, and its reader gets the whole gzip-compressed profile.
    data = read_run_through_fifo(ctx, "--pprof", fifo(ctx, "pprof.fifo"))
    assert b"clock_reads" in gzip.decompress(data), data[:20]


def test_run_metrics_fifo_reader_gets_the_text(ctx):
    # --metrics-file is an output like the others: a FIFO waits for its
    # reader before the launch and gets the final text (docs/metrics.md).
    data = read_run_through_fifo(ctx, "--metrics-file", fifo(ctx, "metrics.fifo")).decode()
    reads = [line for line in data.splitlines() if line.startswith("clockprof_clock_reads_total{")]
    assert sum(int(line.rsplit(" ", 1)[1]) for line in reads) == 3, data[:400]
