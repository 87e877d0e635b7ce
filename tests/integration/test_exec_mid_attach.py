"""An attach that spans an exec of its target (lib/probe/mech/patch/):
the process clockprof planned for is gone, its pid now runs a new image.
Where the new image's vDSO lies where the old one did (no address space
randomization: `setarch -R`, kernel.randomize_va_space=0, as under a
debugger), the checks by address alone (the vDSO in place, executable)
pass, but the stub clockprof wrote into the old image is not in the new
one: a thread sent there ran the new vDSO's zero padding and the target
died of SIGSEGV (4 of 6 tries of 15 attaches each). Whatever clockprof
says, the target must live."""
import shutil
import signal
import subprocess
import time

from common import Skip

TRIES = 25


def test_an_exec_during_attach_never_kills_the_target(ctx):
    if not shutil.which("setarch"):
        raise Skip("no setarch")
    target = subprocess.Popen(["setarch", "-R", ctx.target("exec_loop_target")])
    try:
        time.sleep(0.2)
        for i in range(TRIES):
            proc = ctx.run("attach", "--mechanism", "patch", "-q", "-e", "none", "-d", "0.05",
                           str(target.pid))
            assert target.poll() is None, (
                f"the target died ({target.returncode}) at attach {i + 1}: {proc.stderr}")
    finally:
        if target.poll() is None:
            target.send_signal(signal.SIGKILL)
        target.wait()


def test_an_attach_refused_by_an_exec_says_so(ctx):
    """With address space randomization (the default) the new image's
    vDSO lies elsewhere: an attach that meets the exec is refused, but it
    said whatever the step it was at met, "process N has exited" while N
    lived on among them (the review of stop 56). Each refusal now names
    the exec."""
    target = subprocess.Popen([ctx.target("exec_loop_target")])
    misnamed = []
    try:
        time.sleep(0.2)
        for _ in range(TRIES):
            proc = ctx.run("attach", "--mechanism", "patch", "-q", "-e", "none", "-d", "0.05",
                           str(target.pid))
            assert target.poll() is None, f"the target died ({target.returncode}): {proc.stderr}"
            if proc.returncode and "exec()ed another program" not in proc.stderr:
                misnamed.append(proc.stderr.strip())
    finally:
        if target.poll() is None:
            target.send_signal(signal.SIGKILL)
        target.wait()
    assert not misnamed, f"{len(misnamed)} of {TRIES} refusals did not say the exec: {misnamed[:3]}"
