"""clockprof inside a pid namespace of its own (a container, `unshare
--pid`): getpid(), /proc and the PID given are numbers in that namespace,
where the BPF program's bpf_get_current_pid_tgid() gives the host's. The
counts must be as exact as on the host, the self-test's included (it said
"uprobes do not fire on this host" before)."""
import os
import shutil
import signal
import subprocess

from common import Skip
from readiness import task_state, wait_for

N = 120  # requests the target serves, then exits
K = 5    # clock reads per request (reads_target clock_gettime K)


def unshare(*cmd):
    if not shutil.which("unshare") or not shutil.which("nsenter"):
        raise Skip("util-linux's unshare and nsenter are needed")
    return ["unshare", "--pid", "--fork", "--mount-proc", *map(str, cmd)]


def test_run_inside_pid_namespace(ctx):
    # `run` in the namespace: the target is launched there, clockprof is
    # pid 1, the target pid 2; the whole of its life is counted.
    out = os.path.join(ctx.tmp, "run.json")
    proc = subprocess.run(unshare(ctx.clockprof, "run", "-q", "-o", out, "-r", "func:handle_request",
                                  "--", ctx.target("reads_target"), "clock_gettime", K, N),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    run = ctx.load_json(out)
    assert run["complete"] is True and run["end_reason"] == "target-exit", run["end_reason"]
    cr = run["clock_reads"]
    assert cr["total"] == N * K, cr
    assert cr["in_requests"] == (N - 1) * K, cr
    assert cr["per_op"] == K, cr
    assert run["request"]["count"] == N - 1, run["request"]
    assert run["per_request"]["histogram"] == [[K, N - 1]]


def host_pid_of_child(parent):
    """The host pid of the one child of process `parent`."""
    def child():
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                pids = f.read().split()
        except OSError:
            return None
        return int(pids[0]) if pids else None
    return wait_for(child, f"the child of unshare (pid {parent})")


def test_attach_to_pid1_of_namespace(ctx):
    # The target is the namespace's pid 1; clockprof joins its pid and mount
    # namespaces (so /proc is the namespace's) and attaches to "1" for a
    # while (when pid 1 exits, the kernel kills every process in its
    # namespace, clockprof included).
    ns = subprocess.Popen(unshare(ctx.target("reads_target"), "clock_gettime", K))
    target = None
    try:
        target = host_pid_of_child(ns.pid)
        wait_for(lambda: "/libc.so.6" in open(f"/proc/{target}/maps").read() and
                 task_state(f"/proc/{target}/stat") == "S", "reads_target to serve")
        out = os.path.join(ctx.tmp, "run.json")
        proc = subprocess.run(["nsenter", "--target", str(target), "--pid", "--mount",
                               ctx.clockprof, "attach", "-q", "-o", out, "-d", "1",
                               "-r", "func:handle_request", "1"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    finally:
        # A namespace's pid 1 takes only SIGKILL, and unshare's death
        # would leave it running.
        if target:
            os.kill(target, signal.SIGKILL)
        ns.kill()
        ns.wait()
    run = ctx.load_json(out)
    assert run["target"]["pid"] == 1, run["target"]
    assert run["complete"] is True and run["end_reason"] == "duration", run["end_reason"]
    # Attached while it served: every complete request read exactly K times.
    assert run["clock_reads"]["per_op"] == K, run["clock_reads"]
    assert run["per_request"]["histogram"] == [[K, run["request"]["count"]]], run["per_request"]
    assert run["request"]["count"] > 10, run["request"]
    assert run["clock_reads"]["in_requests"] == K * run["request"]["count"]


def test_proc_of_another_namespace_is_refused(ctx):
    # In a pid namespace whose /proc is still the host's, the pids clockprof
    # is given are not the ones it is known by: refused, saying why.
    unshare()  # skips without util-linux
    proc = subprocess.run(["unshare", "--pid", "--fork", ctx.clockprof, "run", "-q", "-e", "none",
                           "-o", os.path.join(ctx.tmp, "r.json"), "--", "true"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, f"exit {proc.returncode}: {proc.stderr}"
    assert "/proc is not mounted for it" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr


def test_target_in_nested_namespace_is_refused(ctx):
    # From inside a pid namespace, the program can name only tasks of that
    # very namespace: a target in one nested inside it is refused, saying
    # so, where it used to be counted as nothing.
    script = (f'unshare --pid --fork {ctx.target("reads_target")} clock_gettime {K} & u=$!; c=; '
              f'while [ -z "$c" ]; do c=$(cat /proc/$u/task/$u/children); done; '
              f'{ctx.clockprof} attach -q -d 1 -o {ctx.tmp}/r.json $c; rc=$?; kill -9 $c; exit $rc')
    proc = subprocess.run(unshare("sh", "-c", script), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, f"exit {proc.returncode}: {proc.stderr}"
    assert "in a pid namespace nested inside clockprof's" in proc.stderr, proc.stderr
    assert not os.path.exists(f"{ctx.tmp}/r.json")
