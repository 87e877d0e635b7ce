"""A patched process that gives its vDSO's private copy back to the kernel
(madvise(MADV_DONTNEED) over [vdso]) gets the kernel's own pages: the
entries read original, and every read after counts nowhere. The run said
nothing and gave the reads before as the whole: a count presented as
exact that is not (the review of stop 56). Under attach the window's end
finds the sites as the kernel has them and says so. Under run a process
that exits meanwhile takes its vDSO with it before anything is looked at
(docs/patch.md says so)."""
import signal
import subprocess
import time

from readiness import wait_attached


def test_a_dropped_vdso_copy_is_said(ctx):
    target = subprocess.Popen([ctx.target("vdso_dontneed_target"), "signal"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().strip() == "ready"
        out = f"{ctx.tmp}/dropped.json"
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-d", "1.5",
                                 "-o", out, str(target.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        time.sleep(0.3)
        target.send_signal(signal.SIGUSR1)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"exit {proc.returncode}: {err}"
        assert target.poll() is None, "the target died"
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    said = [w for w in run["warnings"] if "put its vDSO back" in w]
    assert run["clock_reads"]["mechanism"] == "patch", run["clock_reads"]
    assert said, f"counted {run['clock_reads']['total']} and said nothing: {run['warnings']}"
