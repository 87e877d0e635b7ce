"""Faults: clockprof killed at bad moments, a target that dies, execs or
forks mid-window, a disk that fills, an output directory that vanishes.
clockprof must never harm the target or the system: no held or orphaned
command, no command killed by a planted breakpoint, no BPF program left
behind, no temp file, no half-written output."""
import ctypes
import os
import random
import signal
import subprocess
import time

from common import Skip

PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


class Subreaper:
    """Makes this process the reaper of orphans, so that a command whose
    clockprof was killed becomes our child and its end can be seen."""

    def __enter__(self):
        if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise Skip("prctl(PR_SET_CHILD_SUBREAPER) failed")
        return self

    def __exit__(self, *exc):
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def tracer_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def wait_held(cp, deadline):
    """The pid of cp's command once cp holds it (traces it), else None."""
    while time.monotonic() < deadline and cp.poll() is None:
        for c in children(cp.pid):
            if tracer_of(c) == cp.pid:
                return c
        time.sleep(0.0005)
    return None


def test_run_killed_while_held(ctx):
    # SIGKILL to clockprof while it holds its command (exec stop, entry
    # point with the int3 planted, probes attaching): the command must die
    # with it (SIGKILL), never of SIGTRAP, never run on orphaned.
    rng = random.Random(12)
    killed = 0
    with Subreaper():
        for trial in range(12):
            cp = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "--",
                                   "sleep", "2"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            cmd = wait_held(cp, time.monotonic() + 20)
            assert cmd, f"trial {trial}: never saw the command held"
            time.sleep(rng.random() * 0.02)
            still_held = tracer_of(cmd) == cp.pid
            os.kill(cp.pid, signal.SIGKILL)
            cp.wait()
            _, status = os.waitpid(cmd, 0)
            if not still_held:
                continue        # released just before the kill: may run on
            killed += 1
            assert os.WIFSIGNALED(status), \
                f"trial {trial}: held command outlived clockprof (status {status:#x})"
            assert os.WTERMSIG(status) == signal.SIGKILL, \
                f"trial {trial}: held command died of {signal.Signals(os.WTERMSIG(status)).name}"
    assert killed >= 6, f"only {killed} of 12 kills landed while the command was held"


def own_children():
    out = []
    for tid in os.listdir("/proc/self/task"):
        out += children_of_task(os.getpid(), int(tid))
    return out


def children_of_task(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def test_stop_signal_at_random_early_moments(ctx):
    # SIGINT/SIGTERM in clockprof's first moments (parsing, BPF loading,
    # launching): never a silent death; the window cut short is written
    # (marked incomplete) or the failure is reported, and the command does
    # not survive.
    rng = random.Random(5)
    out = os.path.join(ctx.tmp, "run.json")
    with Subreaper():
        for trial in range(16):
            if os.path.exists(out):
                os.unlink(out)
            sig = rng.choice([signal.SIGINT, signal.SIGTERM])
            # from 5 ms on: before that the dynamic loader may not be done
            # with clockprof (main has not begun; nothing can block yet)
            delay = 0.005 + rng.random() * 0.12
            cp = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o", out, "--",
                                   "sleep", "3"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
            cp.send_signal(sig)
            _, err = cp.communicate(timeout=30)
            what = f"trial {trial}: {sig.name} after {delay * 1000:.0f} ms"
            assert cp.returncode >= 0, f"{what}: clockprof died of it silently"
            if cp.returncode == 0:
                doc = ctx.load_json(out)
                assert doc["complete"] is False and doc["end_reason"] == "signal", \
                    f"{what}: {doc['complete']} {doc.get('end_reason')}"
            else:
                assert err.startswith("clockprof: "), f"{what}: exit {cp.returncode}, no message"
            time.sleep(0.05)
            left = [c for c in own_children() if c != cp.pid]
            for c in left:
                os.kill(c, signal.SIGKILL)
                os.waitpid(c, 0)
            assert not left, f"{what}: the command outlived clockprof"
