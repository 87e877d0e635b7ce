"""attach: threads present at attach time and threads created later, a
target that exits while attached, Ctrl-C and SIGTERM (results still written,
marked incomplete), SIGKILL (no probe left behind), and processes that are
not the target are not slowed."""
import os
import signal
import subprocess
import time

from common import Skip  # noqa: F401

N = 150


def start_target(ctx, *args):
    return subprocess.Popen([ctx.target("reads_target"), *map(str, args)])


def start_attach(ctx, pid, *opts):
    out = os.path.join(ctx.tmp, "run.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-o", out, *map(str, opts), str(pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def wait_ok(proc, timeout=60):
    stdout, stderr = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}: {stderr}"
    return stdout


def uniform(run, reads):
    """Every complete request read the clock exactly `reads` times."""
    hist = run["per_request"]["histogram"]
    assert len(hist) == 1 and hist[0][0] == reads, hist
    assert run["clock_reads"]["per_op"] == reads


def test_threads_before_attach(ctx):
    target = start_target(ctx, "clock_gettime", 2, 0, 2, 0)
    try:
        time.sleep(0.5)  # all three threads are serving
        proc, out = start_attach(ctx, target.pid, "-d", "1", "-r", "func:handle_request")
        wait_ok(proc)
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    assert run["probe"]["threads"] == 3, run["probe"]
    assert run["complete"] is True and run["end_reason"] == "duration"
    uniform(run, 2)
    assert run["request"]["count"] > 1000  # three threads at <= 1000/s each


def test_threads_created_after_attach(ctx):
    # Two threads start 1.5 s after the target, long after attach, and each
    # serves N requests; the target then exits by itself.
    target = start_target(ctx, "clock_gettime", 2, 2 * N, 2, 1500)
    try:
        time.sleep(0.2)
        proc, out = start_attach(ctx, target.pid, "-r", "func:handle_request")
        wait_ok(proc)
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    assert run["probe"]["threads"] == 1, run["probe"]
    assert run["end_reason"] == "target-exit" and run["complete"] is True
    uniform(run, 2)
    # The late threads' 2 * (N - 1) requests are all in, each with its reads.
    assert run["request"]["count"] >= 2 * (N - 1), run["request"]


def test_target_exits_while_attached(ctx):
    target = start_target(ctx, "mix", 1, 400)
    time.sleep(0.1)
    start = time.monotonic()
    proc, out = start_attach(ctx, target.pid, "-d", "30", "-r", "func:handle_request")
    wait_ok(proc)
    target.wait()
    assert time.monotonic() - start < 10, "clockprof did not notice the exit"
    run = ctx.load_json(out)
    assert run["end_reason"] == "target-exit" and run["complete"] is True
    uniform(run, 6)


def _interrupted(ctx, sig):
    target = start_target(ctx, "time", 1, 0)
    try:
        time.sleep(0.1)
        proc, out = start_attach(ctx, target.pid, "-r", "func:handle_request")
        time.sleep(1.5)
        proc.send_signal(sig)
        wait_ok(proc)
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    assert run["complete"] is False and run["end_reason"] == "signal"
    assert run["request"]["count"] > 100
    uniform(run, 1)


def test_ctrl_c_writes_incomplete_run(ctx):
    _interrupted(ctx, signal.SIGINT)


def test_sigterm_writes_incomplete_run(ctx):
    _interrupted(ctx, signal.SIGTERM)


def our_bpf_programs():
    out = subprocess.run(["bpftool", "prog", "show"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines()
            if "on_vdso_entry" in line or "on_boundary_fun" in line or "on_syscall_func" in line]


def test_sigkill_leaves_no_probe(ctx):
    target = start_target(ctx, "clock_gettime", 1, 0)
    try:
        time.sleep(0.1)
        proc, _ = start_attach(ctx, target.pid, "-r", "func:handle_request")
        time.sleep(1.5)
        assert our_bpf_programs(), "expected clockprof's programs while attached"
        proc.kill()
        proc.wait()
        for _ in range(50):
            if not our_bpf_programs():
                break
            time.sleep(0.1)
        assert not our_bpf_programs(), our_bpf_programs()
        # Stale breakpoints would hold the target's debug registers (a new
        # attach would fail) or double its counts: attach again, exactly.
        proc, out = start_attach(ctx, target.pid, "-d", "1", "-r", "func:handle_request")
        wait_ok(proc)
        uniform(ctx.load_json(out), 1)
    finally:
        target.kill()
        target.wait()


def loop_ns(ctx, kind):
    """Best of three runs of clock_loop: ns per call in an unrelated process."""
    loop = ctx.target("clock_loop")
    return min(float(subprocess.run([loop, kind, "300000"], capture_output=True,
                                    text=True, check=True).stdout) for _ in range(3))


def test_other_processes_not_slowed(ctx):
    target = start_target(ctx, "mix", 1, 0)
    try:
        before = {k: loop_ns(ctx, k) for k in ("vdso", "syscall")}
        proc, _ = start_attach(ctx, target.pid, "-d", "30", "-r", "func:handle_request")
        time.sleep(1)
        during = {k: loop_ns(ctx, k) for k in ("vdso", "syscall")}
        proc.send_signal(signal.SIGINT)
        wait_ok(proc)
        after = {k: loop_ns(ctx, k) for k in ("vdso", "syscall")}
    finally:
        target.kill()
        target.wait()
    for k in before:
        base = min(before[k], after[k])
        ratio = during[k] / base
        print(f"    unrelated {k} loop: {base:.1f} ns/call alone, {during[k]:.1f} "
              f"while clockprof is attached elsewhere (x{ratio:.2f})")
        assert ratio < 1.25, f"{k}: x{ratio:.2f}"
