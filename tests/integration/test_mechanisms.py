"""The two ways clockprof sees reads: uprobes (the default, every host) and
hardware breakpoints on the vDSO entries (hosts where they fire). Each
proves itself at start-up; where both fire they agree on every bundled
target; uprobes follow libraries loaded later, reach files deleted since
they were mapped, count Go's runtime reads, and name the calls they cannot
see."""
import os
import shutil
import subprocess

from common import Skip, require_breakpoints, rust_target
from readiness import wait_serving

N = 80


def profile(ctx, command, *opts, mechanism="uprobe"):
    out = os.path.join(ctx.tmp, f"run-{mechanism}.json")
    proc = ctx.run("run", "-q", "--mechanism", mechanism, "-e", "none", "-o", out, *opts,
                   "--", *command)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return ctx.load_json(out)


def test_self_test_proves_the_mechanism(ctx):
    run = profile(ctx, [ctx.target("reads_target"), "mix", 1, 20], "-r", "func:handle_request")
    assert run["clock_reads"]["mechanism"] == "uprobe"
    assert run["host"]["breakpoints_fire"] is None  # not tested
    st = run["probe"]["selftest"]
    assert st["hits"] == st["calls"] > 0, st
    out = os.path.join(ctx.tmp, "bp.json")
    proc = ctx.run("run", "-q", "--mechanism", "breakpoint", "-e", "none", "-o", out, "--",
                   ctx.target("reads_target"), "mix", 1, 20)
    if proc.returncode == 0:
        bp = ctx.load_json(out)
        assert bp["host"]["breakpoints_fire"] is True
        assert bp["clock_reads"]["mechanism"] == "breakpoint"
    else:
        # A host where the kernel accepts breakpoints that never fire: one
        # line naming the mechanism and what to do, exit 3, no run written.
        assert proc.returncode == 3, proc.stderr
        assert "hardware breakpoints do not fire on this host" in proc.stderr, proc.stderr
        assert "--mechanism uprobe" in proc.stderr and proc.stderr.count("\n") == 1
        assert not os.path.exists(out)


def test_unknown_mechanism_is_a_usage_error(ctx):
    proc = ctx.run("run", "--mechanism", "kprobe", "--", "true")
    assert proc.returncode == 2 and "uprobe, breakpoint, patch or auto" in proc.stderr, proc.stderr


def bundled(ctx):
    """(name, command, boundary) for every bundled reference target."""
    t = ctx.target
    cases = [(f"reads_target {m}", [t("reads_target"), m, 2, N], "func:handle_request")
             for m in ("clock_gettime", "clocks", "gettimeofday", "time", "timespec_get",
                       "syscall", "cputime", "wrapper", "mix")]
    cases += [
        ("static mix", [t("reads_target_static"), "mix", 1, N], "func:handle_request"),
        ("chrono", [t("chrono_target"), 2, N], "func:handle_request"),
        ("callsites", [t("callsites_target"), N, 1000], "func:handle_request"),
        ("callsites nofp", [t("callsites_target_nofp"), N, 1000], "func:handle_request"),
        ("callsites cpp", [t("callsites_cpp_target"), N, 1000], "func:handle_request"),
        ("callsites lib", [t("callsites_lib_target"), N, 1000], "func:handle_request"),
    ]
    try:
        cases.append(("rust", [rust_target(ctx), 2, N], "func:rust_target::handle_request"))
    except Skip:
        pass
    if os.path.exists(os.path.join(ctx.targets, "go_target")):
        cases.append(("go", [t("go_target"), "mix", 0, N], "func:main.handleRequest"))
    return cases


def per_request(run):
    cr = run["clock_reads"]
    sites = sorted((s["function"], s["file"], s["line"], s["via"], s["in_requests"])
                   for s in run["call_sites"] if s["in_requests"])
    return {"per_op": cr["per_op"], "requests": run["request"]["count"],
            "histogram": run["per_request"]["histogram"], "sites": sites}


def all_sites(run):
    return sorted((s["function"], s["file"], s["line"], s["via"], s["count"])
                  for s in run["call_sites"])


def test_mechanisms_agree_on_every_bundled_target(ctx):
    require_breakpoints(ctx)
    for name, command, boundary in bundled(ctx):
        up = profile(ctx, command, "-r", boundary)
        bp = profile(ctx, command, "-r", boundary, mechanism="breakpoint")
        a, b = per_request(up), per_request(bp)
        if name == "go":  # its runtime's own reads outside requests vary
            a.pop("sites"), b.pop("sites")
        else:  # whole-life totals: every read of the target, both ways
            for key in ("total", "by_entry", "by_clock", "by_path"):
                assert up["clock_reads"][key] == bp["clock_reads"][key], (name, key)
        assert a == b, (name, a, b)
        print(f"    {name}: {a['per_op']} reads/request both ways")


def test_patch_agrees_with_uprobes_on_every_bundled_target(ctx):
    """The vDSO patch against uprobes, every bundled target: the same
    requests, reads per request and histogram, and the same call sites
    (function, file:line, wrapper) with the same reads inside requests;
    for all but Go (whose runtime reads outside requests vary from run to
    run) the same totals by entry, clock and path, and by call site, over
    the target's whole life."""
    for name, command, boundary in bundled(ctx):
        up = profile(ctx, command, "-r", boundary)
        pt = profile(ctx, command, "-r", boundary, mechanism="patch")
        a, b = per_request(up), per_request(pt)
        if name != "go":
            for key in ("total", "by_entry", "by_clock", "by_path"):
                assert up["clock_reads"][key] == pt["clock_reads"][key], (name, key)
            assert all_sites(up) == all_sites(pt), (name, all_sites(up), all_sites(pt))
        assert a == b, (name, a, b)
        assert pt["probe"]["hits"] <= up["probe"]["hits"], name
        print(f"    {name}: {a['per_op']} reads/request both ways; traps "
              f"{up['probe']['hits']} -> {pt['probe']['hits']}")


def test_requests_closed_in_the_target_agree_with_the_uprobe_boundary(ctx):
    """The func: boundary closed inside the target (the vDSO patch's
    redirect, run --no-inherit: nothing traps) against a uprobe boundary
    (--mechanism uprobe), every bundled target: the same requests, reads
    per request and histogram, the same totals by entry, clock and path,
    and the same call sites with the same reads inside requests; reads
    through syscall() are in them too (redirected, not trapped). Go's
    too, past its stack check, by goroutine both ways (its requests and
    their sites: outside them, the runtime's monitor thread reads the
    clock at its own pace, so whole-life totals differ run to run). One
    target's boundary cannot be redirected (callsites_cpp_target's
    handle_request: its prologue's instructions are 2-4 bytes long, or
    straddle an aligned word, before its first branch, and no padding is
    within a short jump for a springboard): it stays a uprobe, said."""
    for name, command, boundary in bundled(ctx):
        up = profile(ctx, command, "-r", boundary)
        pt = profile(ctx, command, "-r", boundary, "--no-inherit", mechanism="patch")
        a, b = per_request(up), per_request(pt)
        assert a == b, (name, a, b)
        for key in ("total", "by_entry", "by_clock", "by_path"):
            assert name == "go" or up["clock_reads"][key] == pt["clock_reads"][key], (name, key)
        assert name == "go" or all_sites(up) == all_sites(pt), (name, all_sites(up), all_sites(pt))
        if name == "callsites cpp":
            assert any(w.startswith("the request boundary is a uprobe") for w in pt["warnings"]), \
                (name, pt["warnings"])
            continue
        assert pt["probe"]["hits"] == 0, (name, pt["probe"], pt["warnings"])
        assert not pt["warnings"], (name, pt["warnings"])
        print(f"    {name}: {a['per_op']} reads/request both ways; traps "
              f"{up['probe']['hits']} -> {pt['probe']['hits']}")


def test_go_requests_by_goroutine_with_the_patch(ctx):
    """go_target goroutines: 4 goroutines x N requests of 3 reads, moved
    between two threads after every request. Counted inside the target,
    reads are filed by goroutine, and so are requests, closed in the
    target with no trap (the redirect past handleRequest's start, the
    goroutine found as the read's count finds it): every one of the
    4 x (N - 1) has its 3 reads (cut by thread, as uprobes cut them, they
    spread over 3-5), at the program's own calls of time.Now and
    time.Since, file:line (Go's API is a clock wrapper too; Go's units have
    no address ranges libdwfl can look up)."""
    if not os.path.exists(os.path.join(ctx.targets, "go_target")):
        raise Skip("no Go compiler on this machine (make test-deps installs golang-go)")
    n = 2000
    run = profile(ctx, [ctx.target("go_target"), "goroutines", 4, n, 20000],
                  "-r", "func:main.handleRequest", mechanism="patch")
    assert run["probe"]["hits"] == 0 and not run["warnings"], (run["probe"], run["warnings"])
    assert run["request"]["count"] == 4 * (n - 1), run["request"]
    assert run["per_request"]["histogram"] == [[3, 4 * (n - 1)]], run["per_request"]
    src = open(os.path.join(os.path.dirname(__file__), "..", "targets", "go_target.go")).read()
    line = {call: src[:src.index(call)].count("\n") + 1
            for call in ("sink += time.Now()", "sink += int64(time.Since(start))")}
    sites = sorted((s["function"], os.path.basename(s["file"] or ""), s["line"], s["in_requests"])
                   for s in run["call_sites"] if s["in_requests"])
    assert sites == [("main.readNow", "go_target.go", line["sink += time.Now()"], 2 * 4 * (n - 1)),
                     ("main.readSince", "go_target.go", line["sink += int64(time.Since(start))"], 4 * (n - 1))], sites


def test_go_runtime_reads_counted_exactly(ctx):
    if not os.path.exists(os.path.join(ctx.targets, "go_target")):
        raise Skip("no Go compiler on this machine (make test-deps installs golang-go)")
    # go_target.go: `now K` reads 2K (REALTIME + MONOTONIC per time.Now),
    # `since K` K MONOTONIC, `mix` 3 per request, on its one serving thread.
    for mode, k, reads in (("now", 2, 4), ("since", 3, 3), ("mix", 0, 3)):
        run = profile(ctx, [ctx.target("go_target"), mode, k, N], "-r", "func:main.handleRequest")
        assert run["request"]["count"] == N - 1, run["request"]
        assert run["per_request"]["histogram"] == [[reads, N - 1]], (mode, run["per_request"])
        sites = {s["function"]: s["in_requests"] for s in run["call_sites"] if s["in_requests"]}
        assert sum(sites.values()) == reads * (N - 1), sites
    # REALTIME is read only by time.Now: exact over the whole life too.
    run = profile(ctx, [ctx.target("go_target"), "now", 1, N], "-r", "func:main.handleRequest")
    assert run["clock_reads"]["by_clock"]["CLOCK_REALTIME"] == N + 1  # + start-up's Now


def test_library_loaded_after_attach_is_followed(ctx):
    lib = ctx.target("libdl_clock.so")
    run = profile(ctx, [ctx.target("dlopen_target"), lib, 200, 200], "-r", "func:handle_request")
    # 1 read per request before the dlopen, 4 after (two of them through
    # the new library's own gettimeofday PLT stub).
    assert run["per_request"]["histogram"] == [[1, 200], [4, 199]], run["per_request"]
    assert run["clock_reads"]["by_entry"] == {"clock_gettime": 600, "gettimeofday": 400}
    in_lib = [s for s in run["call_sites"] if s["module"] == lib]
    assert sorted((s["function"], s["line"], s["count"]) for s in in_lib) == [
        ("dl_clock_read", 14, 200), ("dl_clock_read", 15, 200), ("dl_clock_read", 16, 200)]


def test_a_library_that_cannot_be_probed_is_said_once(ctx):
    """dlopen_target loads a library whose own syscall() takes no uprobe
    (an int3 first: the kernel refuses it). It is said once: not again at
    each look for libraries (the patch's, every 50 ms, each then polling
    the target 100 ms for an exit), which filled the run's 8 warnings and
    left none for anything else. The program's reads are counted all the
    same: 1 a request (the library reads none)."""
    lib = ctx.target("libunprobed_syscall.so")
    for mechanism in ("patch", "uprobe"):
        run = profile(ctx, [ctx.target("dlopen_target"), lib, 300, 300], mechanism=mechanism)
        said = [w for w in run["warnings"] if "could not be probed" in w]
        assert len(said) == 1, (mechanism, run["warnings"])
        assert run["clock_reads"]["total"] == 600, (mechanism, run["clock_reads"])


def test_a_library_loaded_after_one_that_cannot_be_probed_is_named(ctx):
    """The patch's looks for libraries after one that could not be probed:
    the next look came 20 times as long as the failed one took, and it
    took the 100 ms it waits for the target's exit: 2 s, and dlopen_target,
    which uses the library it loads 100 ms later for 0.65 s and exits, had
    its reads named by their address alone, in no file. The looks are
    spaced by what reading the maps takes, not by a file's probing."""
    lib = ctx.target("libdl_clock.so")
    run = profile(ctx, [ctx.target("dlopen_target"), lib, 200, 300,
                        ctx.target("libunprobed_syscall.so")], mechanism="patch")
    assert run["clock_reads"]["total"] == 1400, run["clock_reads"]
    in_lib = sum(s["count"] for s in run["call_sites"] if s.get("module") == lib)
    assert in_lib == 900, (run["call_sites"], run["warnings"])


def test_library_loaded_after_attach_has_whole_stacks(ctx):
    # With --stacks the rules are built again with the new library (in the
    # background; the window's loop goes on): every read has a stack, and
    # the library's reads go down to main like the rest.
    lib = ctx.target("libdl_clock.so")
    folded = os.path.join(ctx.tmp, "dl.folded")
    run = profile(ctx, [ctx.target("dlopen_target"), lib, 200, 200], "-r", "func:handle_request",
                  "--folded", folded)
    assert run["per_request"]["histogram"] == [[1, 200], [4, 199]], run["per_request"]
    stacks = dict(line.rsplit(" ", 1) for line in open(folded).read().splitlines())
    assert sum(map(int, stacks.values())) == run["clock_reads"]["total"] == 1000, stacks
    in_lib = {frames: int(n) for frames, n in stacks.items() if "dl_clock_read" in frames}
    assert sum(in_lib.values()) == 600, stacks
    assert all(";main;" in frames for frames in in_lib), in_lib


def test_calls_without_plt_stub_are_named(ctx):
    run = profile(ctx, [ctx.target("reads_target_noplt"), "mix", 1, N], "-r",
                  "func:handle_request")
    warned = [w for w in run["warnings"] if "without a PLT stub" in w]
    assert len(warned) == 1 and "gettimeofday and time" in warned[0], run["warnings"]
    assert "reads_target_noplt" in warned[0] and "--mechanism breakpoint" in warned[0]
    # What uprobes do see is still exact: the 4 clock_gettime-family reads.
    assert run["clock_reads"]["per_op"] == 4, run["clock_reads"]


def test_executable_deleted_after_start_is_still_probed(ctx):
    exe = os.path.join(ctx.tmp, "gone_target")
    shutil.copy(ctx.target("reads_target"), exe)
    target = subprocess.Popen([exe, "mix", "1", "0"], stdout=subprocess.DEVNULL)
    try:
        wait_serving(target)
        os.unlink(exe)
        out = os.path.join(ctx.tmp, "run.json")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.5", "-o", out,
                       "-r", "func:handle_request", target.pid)
        assert proc.returncode == 0, proc.stderr
    finally:
        target.kill()
        target.wait()
    run = ctx.load_json(out)
    hist = run["per_request"]["histogram"]
    assert len(hist) == 1 and hist[0][0] == 6, hist


def test_per_offset_uprobes_count_exactly(ctx):
    # Kernels before 6.6 have no uprobe_multi links: clockprof then places
    # one uprobe per offset. CLOCKPROF_UPROBE_MULTI=0 takes that path here;
    # the self-test and the counts must be the same either way.
    env = dict(os.environ, CLOCKPROF_UPROBE_MULTI="0")
    for name, command, boundary in bundled(ctx)[:3] + [b for b in bundled(ctx) if b[0] == "callsites lib"]:
        out = os.path.join(ctx.tmp, "per-offset.json")
        proc = ctx.run("run", "-q", "--mechanism", "uprobe", "-e", "none", "-o", out, "-r", boundary,
                       "--", *command, env=env)
        assert proc.returncode == 0, (name, proc.stderr)
        old, new = ctx.load_json(out), profile(ctx, command, "-r", boundary)
        assert old["probe"]["selftest"]["hits"] == old["probe"]["selftest"]["calls"] > 0
        assert per_request(old) == per_request(new), (name, per_request(old), per_request(new))
        assert old["clock_reads"]["total"] == new["clock_reads"]["total"], name
