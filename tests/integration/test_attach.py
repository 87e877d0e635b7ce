"""attach: threads present at attach time and threads created later, a
target that exits while attached, Ctrl-C and SIGTERM (results still written,
marked incomplete), SIGKILL (no probe left behind), and processes that are
not the target are not slowed."""
import os
import signal
import statistics
import subprocess
import time

from common import Skip, bpf_ids, live_bpf_ids  # noqa: F401

BOTH_MECHANISMS = True
from readiness import wait_attached, wait_for, wait_serving

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
        wait_serving(target, threads=3)
        proc, out = start_attach(ctx, target.pid, "-d", "1", "-r", "func:handle_request")
        wait_ok(proc)
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    assert run["clock_reads"]["mechanism"] == ctx.mechanism
    if ctx.mechanism == "breakpoint":  # per-thread debug registers
        assert run["probe"]["threads"] == 3, run["probe"]
    assert run["complete"] is True and run["end_reason"] == "duration"
    uniform(run, 2)
    assert run["request"]["count"] > 1000  # three threads at <= 1000/s each


def test_threads_created_after_attach(ctx):
    # Two threads start 1.5 s after the target, long after attach, and each
    # serves N requests; the target then exits by itself.
    target = start_target(ctx, "clock_gettime", 2, 2 * N, 2, 1500)
    try:
        wait_serving(target)
        proc, out = start_attach(ctx, target.pid, "-r", "func:handle_request")
        wait_ok(proc)
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    if ctx.mechanism == "breakpoint":  # the rest came by inheritance
        assert run["probe"]["threads"] == 1, run["probe"]
    assert run["end_reason"] == "target-exit" and run["complete"] is True
    uniform(run, 2)
    # The late threads' 2 * (N - 1) requests are all in, each with its reads.
    assert run["request"]["count"] >= 2 * (N - 1), run["request"]


def test_target_exits_while_attached(ctx):
    # 1000 requests (over 1 s): the target outlives the attach (~0.1 s here)
    # on a host several times slower. Had clockprof not noticed the exit,
    # its window would have ended at -d 30 with end_reason "duration"; how
    # soon it notices is a figure of `make bench`, not asserted here.
    target = start_target(ctx, "mix", 1, 1000)
    wait_serving(target)
    proc, out = start_attach(ctx, target.pid, "-d", "30", "-r", "func:handle_request")
    wait_ok(proc)
    target.wait()
    run = ctx.load_json(out)
    assert run["end_reason"] == "target-exit" and run["complete"] is True
    uniform(run, 6)


def _interrupted(ctx, sig):
    target = start_target(ctx, "time", 1, 0)
    try:
        wait_serving(target)
        proc, out = start_attach(ctx, target.pid, "-r", "func:handle_request")
        wait_attached(proc)
        # The window to interrupt: ~900 requests at <= 1000/s (> 100 asserted).
        time.sleep(1)
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


def loaded_programs(ids):
    """Those of ids that the kernel still has loaded."""
    return ids & live_bpf_ids("prog")


def code_changed(pid):
    """How many bytes of pid's code differ from its files' bytes at the same
    offsets: a uprobe's breakpoint is an int3 written into the code. Read
    through /proc/PID/mem and /proc/PID/map_files (a deleted file too)."""
    changed = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or "x" not in fields[1] or not fields[5].startswith("/"):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            with open(f"/proc/{pid}/map_files/{fields[0]}", "rb") as f:
                f.seek(int(fields[2], 16))
                want = f.read(hi - lo)
            mem.seek(lo)
            have = mem.read(len(want))
            changed += sum(a != b for a, b in zip(have, want))
    return changed


def test_probes_out_of_the_code_when_clockprof_returns(ctx):
    # clockprof hands its uprobes' release to the kernel and returns once
    # the target's code is its files' again (lib/probe/links/uprobe_removal.h);
    # without CAP_SYS_ADMIN (no mount namespace of its own) it closes them
    # as before. Either way, looked at the moment it exits, no breakpoint
    # may be left in the target's code.
    out = os.path.join(ctx.tmp, "run.json")
    target = start_target(ctx, "clock_gettime", 1, 0)
    try:
        wait_serving(target)
        assert code_changed(target.pid) == 0, "the target's code differs from its files before attach"
        for prefix in ([], [], ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"]):
            proc = subprocess.Popen([*prefix, ctx.clockprof, "attach", "-q", "-o", out, "-d", "300ms",
                                     "-r", "func:handle_request", str(target.pid)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_attached(proc)
            assert code_changed(target.pid) > 0, "no breakpoint seen in the target's code while attached"
            wait_ok(proc)
            left = code_changed(target.pid)
            assert left == 0, (f"{left} byte(s) of the target's code still changed after clockprof "
                               f"returned {' '.join(prefix[:2])}")
            uniform(ctx.load_json(out), 1)
    finally:
        target.kill()
        target.wait()


def test_sigkill_leaves_no_probe(ctx):
    target = start_target(ctx, "clock_gettime", 1, 0)
    try:
        wait_serving(target)
        proc, _ = start_attach(ctx, target.pid, "-r", "func:handle_request")
        wait_attached(proc)
        ids, _ = bpf_ids(proc.pid)
        assert loaded_programs(ids), "expected clockprof's programs while attached"
        proc.kill()
        proc.wait()
        # The kernel frees a killed process's programs asynchronously.
        wait_for(lambda: not loaded_programs(ids),
                 "clockprof's BPF programs to be unloaded after its SIGKILL", interval=0.1)
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
    # Alone, attached, alone, ... over `cycles` attach cycles: each attached
    # measurement has an unattached one seconds before and after it. The
    # median of the cycles' ratios is asserted, so one cycle disturbed by
    # other load on the host cannot fail the test, while a probe that slowed
    # every process (a uprobe trap costs ~100x a vDSO read) shows in every
    # cycle. The bound is x2: far below what a leaked probe costs, far above
    # what a busy 2-core host does to a 300,000-call loop (x1.36 was seen
    # with parallel builds running).
    cycles = 3
    kinds = ("vdso", "syscall")
    target = start_target(ctx, "mix", 1, 0)
    try:
        wait_serving(target)
        alone = [{k: loop_ns(ctx, k) for k in kinds}]
        during = []
        for _ in range(cycles):
            proc, _ = start_attach(ctx, target.pid, "-d", "30", "-r", "func:handle_request")
            wait_attached(proc)
            during.append({k: loop_ns(ctx, k) for k in kinds})
            proc.send_signal(signal.SIGINT)
            wait_ok(proc)
            alone.append({k: loop_ns(ctx, k) for k in kinds})
    finally:
        target.kill()
        target.wait()
    for k in kinds:
        ratios = [during[i][k] / min(alone[i][k], alone[i + 1][k]) for i in range(cycles)]
        ratio = statistics.median(ratios)
        print(f"    unrelated {k} loop: {statistics.median(a[k] for a in alone):.1f} ns/call "
              f"alone, {statistics.median(d[k] for d in during):.1f} while clockprof is "
              f"attached elsewhere (x{ratio:.2f} median of "
              f"{', '.join(f'x{r:.2f}' for r in ratios)})")
        assert ratio < 2.0, f"{k}: x{ratio:.2f} (cycles: {ratios})"
