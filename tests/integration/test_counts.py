"""Exact clock-read counts against reference targets (tests/targets/).

Every expectation below follows from the target's source: reads_target.c
documents the reads per request of each mode. `run` holds the command until
the probes are in place and the target exits by itself after N requests per
thread, so even whole-window totals are exact: N * reads, and N - 1 complete
requests per thread (a thread's first interval is not a request).
"""

# Run again with --mechanism breakpoint where it fires, and with the patch.
MECHANISMS = ("uprobe", "breakpoint", "patch")
import os

from common import rust_target

N = 120  # requests per thread

# mode, K, reads per request by entry, by path, by clock
MODES = {
    "clock_gettime": (2, {"clock_gettime": 2}, {"vdso": 2}, {"CLOCK_MONOTONIC": 2}),
    "clocks": (1, {"clock_gettime": 6}, {"vdso": 6},
               {"CLOCK_REALTIME": 1, "CLOCK_MONOTONIC": 1, "CLOCK_MONOTONIC_RAW": 1,
                "CLOCK_REALTIME_COARSE": 1, "CLOCK_MONOTONIC_COARSE": 1,
                "CLOCK_BOOTTIME": 1}),
    "gettimeofday": (3, {"gettimeofday": 3}, {"vdso": 3}, {"CLOCK_REALTIME": 3}),
    "time": (2, {"time": 2}, {"vdso": 2}, {"CLOCK_REALTIME": 2}),
    "timespec_get": (2, {"clock_gettime": 2}, {"vdso": 2}, {"CLOCK_REALTIME": 2}),
    "syscall": (1, {"clock_gettime": 1, "gettimeofday": 1, "time": 1}, {"syscall": 3},
                {"CLOCK_MONOTONIC": 1, "CLOCK_REALTIME": 2}),
    "cputime": (1, {"clock_gettime": 2}, {"syscall": 2},
                {"CLOCK_PROCESS_CPUTIME_ID": 1, "CLOCK_THREAD_CPUTIME_ID": 1}),
    "mix": (1, {"clock_gettime": 4, "gettimeofday": 1, "time": 1},
            {"vdso": 4, "syscall": 2},
            {"CLOCK_MONOTONIC": 1, "CLOCK_REALTIME": 4, "CLOCK_PROCESS_CPUTIME_ID": 1}),
}


def profile(ctx, command, *opts):
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-o", out, *opts, "--", *command)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return ctx.load_json(out)


def scaled(counts, factor):
    return {k: v * factor for k, v in counts.items()}


def check_exact(run, per_request, by_entry, by_path, by_clock, threads=1):
    """Whole-window and per-request figures of a run that saw all of the
    target's life, with `threads` threads each serving N requests."""
    requests = threads * (N - 1)
    reads = sum(by_entry.values())
    assert reads == per_request
    assert run["complete"] is True and run["end_reason"] == "target-exit", run["end_reason"]
    assert run["target"]["exit_status"] == {"code": 0}
    assert run["request"]["count"] == requests, run["request"]
    cr = run["clock_reads"]
    assert cr["total"] == threads * N * reads, cr
    assert cr["in_requests"] == requests * reads, cr
    assert cr["per_op"] == reads, cr
    assert cr["by_entry"] == scaled(by_entry, threads * N), cr["by_entry"]
    assert cr["by_path"] == scaled(by_path, threads * N), cr["by_path"]
    assert cr["by_clock"] == scaled(by_clock, threads * N), cr["by_clock"]
    assert run["per_request"]["histogram"] == [[reads, requests]], run["per_request"]
    m = run["measures"]
    assert m["clock_reads/op"]["value"] == reads and m["clock_reads/op"]["kind"] == "exact"
    for entry in ("clock_gettime", "gettimeofday", "time"):
        assert m[f"clock_reads.{entry}/op"]["value"] == by_entry.get(entry, 0), entry
    assert m["clock_reads.via_syscall/op"]["value"] == by_path.get("syscall", 0)


def _mode_test(mode, binary="reads_target"):
    def test(ctx):
        k, entries, paths, clocks = MODES[mode]
        run = profile(ctx, [ctx.target(binary), mode, k, N], "-r", "func:handle_request")
        check_exact(run, sum(entries.values()), entries, paths, clocks)
    return test


for _mode in MODES:
    globals()[f"test_mode_{_mode}"] = _mode_test(_mode)

test_static_binary_mix = _mode_test("mix", "reads_target_static")
test_static_binary_syscall = _mode_test("syscall", "reads_target_static")


def test_cxx_chrono(ctx):
    run = profile(ctx, [ctx.target("chrono_target"), 2, N], "-r", "func:handle_request")
    check_exact(run, 4, {"clock_gettime": 4}, {"vdso": 4},
                {"CLOCK_MONOTONIC": 2, "CLOCK_REALTIME": 2})


def test_rust_std_time(ctx):
    # Per request: 2 Instant::now() and 1 SystemTime::now(), through Rust's
    # std and libc; the boundary is a Rust path, not a C symbol.
    run = profile(ctx, [rust_target(ctx), 2, N], "-r", "func:rust_target::handle_request")
    check_exact(run, 3, {"clock_gettime": 3}, {"vdso": 3},
                {"CLOCK_MONOTONIC": 2, "CLOCK_REALTIME": 1})


def test_threads_started_after_launch(ctx):
    # Two threads start 300 ms in; each serves N requests like main.
    run = profile(ctx, [ctx.target("reads_target"), "clock_gettime", 2, N, 2],
                  "-r", "func:handle_request")
    check_exact(run, 2, {"clock_gettime": 2}, {"vdso": 2}, {"CLOCK_MONOTONIC": 2},
                threads=3)


def test_probe_counts_own_wrapper(ctx):
    run = profile(ctx, [ctx.target("reads_target"), "wrapper", 3, N],
                  "-r", "func:handle_request", "--probe", "my_now")
    check_exact(run, 3, {"clock_gettime": 3}, {"vdso": 3}, {"CLOCK_MONOTONIC": 3})
    assert run["measures"]["calls.my_now/op"]["value"] == 3
    assert run["extra_probes"][0]["calls"] == 3 * N
    # An extra probe is reported apart: it never adds to the read total.
    assert run["clock_reads"]["total"] == 3 * N


def test_syscall_boundary(ctx):
    # The pacing nanosleep() is glibc's clock_nanosleep syscall, once per request.
    run = profile(ctx, [ctx.target("reads_target"), "mix", 1, N],
                  "-r", "syscall:clock_nanosleep")
    assert run["request"]["count"] == N - 1
    assert run["clock_reads"]["per_op"] == 6
    assert run["per_request"]["histogram"] == [[6, N - 1]]
    # Traced at sys_enter, which every process's syscalls pay for, it says
    # so, once; closed at the C library's function, there is nothing to say.
    said = [w for w in run["warnings"] if "sys_enter" in w]
    assert len(said) == (0 if run["request"]["closed_in_target"] else 1), run["warnings"]


def test_library_function_boundary(ctx):
    # glibc exports clock_nanosleep under several versioned names and
    # __clock_nanosleep; deduplicated by offset, each call is one boundary.
    run = profile(ctx, [ctx.target("reads_target"), "gettimeofday", 2, N],
                  "-r", "func:libc:clock_nanosleep")
    assert run["request"]["count"] == N - 1, run["request"]
    assert run["per_request"]["histogram"] == [[2, N - 1]]


def test_ops_divisor(ctx):
    run = profile(ctx, [ctx.target("reads_target"), "time", 1, N], "--ops", N)
    assert run["ops"] == N and run["ops_source"] == "--ops"
    assert run["request"] is None and run["per_request"] is None
    assert run["clock_reads"]["per_op"] == 1
    assert run["measures"]["clock_reads/op"]["value"] == 1


def test_no_boundary_reports_rate(ctx):
    run = profile(ctx, [ctx.target("reads_target"), "time", 1, N])
    assert run["ops"] is None and run["clock_reads"]["per_op"] is None
    assert run["clock_reads"]["total"] == N
    assert "clock_reads/s" in run["measures"]


def test_copied_boundary_is_said(ctx):
    # step() is inlined into main and handle() cloned (handle.constprop.0)
    # for its direct calls: a boundary on either symbol sees only the calls
    # through a pointer, every 4th request, so its "requests" hold four
    # calls each. The counts are what they are; the run must say why.
    target = ctx.target("inlined_boundary_target")
    for spec, said in (("func:step", "inlined into its callers at 1 place(s) "
                                     "(inlined_boundary_target.c:"),
                       ("func:handle", "cloned by the compiler 1 time(s) "
                                       "(handle.constprop.0)")):
        run = profile(ctx, [target, N], "-r", spec)
        assert run["request"]["count"] == N // 4 - 1, run["request"]
        copied = [w for w in run["warnings"] if "pass no boundary" in w]
        assert len(copied) == 1 and said in copied[0], run["warnings"]
    # A --probe on it counts the pointer's calls alone: said too.
    run = profile(ctx, [target, N], "--ops", N, "--probe", "step")
    assert run["extra_probes"][0]["calls"] == N // 4, run["extra_probes"]
    copied = [w for w in run["warnings"] if "--probe step is inlined" in w]
    assert len(copied) == 1 and "calls.step/op falls short" in copied[0], run["warnings"]
    # A function called only out of line is one boundary per call: nothing said.
    run = profile(ctx, [ctx.target("reads_target"), "time", 1, N], "-r", "func:handle_request")
    assert not [w for w in run["warnings"] if "pass no boundary" in w], run["warnings"]
