"""Call sites: every read attributed, exactly, to the first frame in the
program's own code, past the vDSO, libc and libstdc++'s clock wrappers, in
binaries with and without frame pointers, C++ templates, and a program's
own shared library. Expected counts per function come from the targets'
sources (tests/targets/callsites_*)."""

BOTH_MECHANISMS = True  # run again with --mechanism breakpoint where it fires
import os
import re
import signal
import subprocess

from code_frames import frames_outside_code, read_maps
from common import Skip, rust_target, site_line
from readiness import wait_attached, wait_paced_requests, wait_serving

N = 60  # requests; the targets exit after them


def profile(ctx, name):
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-o", out, "-r", "func:handle_request", "--",
                   ctx.target(name), N, 1000)
    assert proc.returncode == 0, proc.stderr
    return ctx.load_json(out)


def by_function(run):
    """{(function, via): count over the whole window}."""
    sites = {}
    for s in run["call_sites"]:
        key = (s["function"], s["via"])
        sites[key] = sites.get(key, 0) + s["count"]
    return sites


def check_sites_add_up(run):
    assert sum(s["count"] for s in run["call_sites"]) == run["clock_reads"]["total"]
    assert sum(s["in_requests"] for s in run["call_sites"]) == run["clock_reads"]["in_requests"]


def check_c_target(run):
    check_sites_add_up(run)
    assert by_function(run) == {
        ("handle_request", "clock_gettime"): 2 * N,
        ("read_mono", "clock_gettime"): N,
        ("read_wall_twice", "gettimeofday"): 2 * N,
        ("read_time", "time"): N,
        ("read_timespec", "timespec_get"): N,
    }, by_function(run)
    inlined = [s for s in run["call_sites"] if s["function"] == "handle_request"]
    assert all(s["inlined"] == ["now_ns"] for s in inlined), inlined
    # now_ns inlined at two lines of handle_request: two sites, each named
    # at its own line there too (run-json.md: inlined_at).
    assert sorted((s["line"], s["inlined_at"]["line"], s["count"]) for s in inlined) == [
        (site_line("callsites_target.c", "now_ns"), site_line("callsites_target.c", m), N)
        for m in ("inline1", "inline2")], inlined
    assert all(s["inlined_at"]["file"] == s["file"] for s in inlined), inlined
    assert all(s["inlined_at"] is None for s in run["call_sites"] if not s["inlined"])
    for s in run["call_sites"]:
        assert s["file"].endswith("callsites_target.c") and s["line"] > 0, s
    m = run["measures"]
    assert m["clock_reads@handle_request/op"]["value"] == 2
    assert m["clock_reads@read_wall_twice/op"]["value"] == 2
    assert m["clock_reads@read_timespec/op"]["value"] == 1


def test_c_with_frame_pointers(ctx):
    check_c_target(profile(ctx, "callsites_target"))


def test_c_without_frame_pointers(ctx):
    check_c_target(profile(ctx, "callsites_target_nofp"))


def test_cxx_templates_demangled(ctx):
    run = profile(ctx, "callsites_cpp_target")
    check_sites_add_up(run)
    sites = by_function(run)
    assert sites[("app::wall_seconds()", "std::chrono::system_clock::now")] == N, sites
    timers = {f: c for (f, via), c in sites.items() if f.startswith("app::Timer<")}
    assert len(timers) == 2 and all(c == N for c in timers.values()), sites
    assert any("std::vector<int, std::allocator<int> > const&" in f for f in timers), timers


def test_program_own_library(ctx):
    run = profile(ctx, "callsites_lib_target")
    check_sites_add_up(run)
    assert by_function(run) == {("lib_read_clock", "clock_gettime"): 2 * N}, by_function(run)
    assert run["call_sites"][0]["module"].endswith("libcallsites.so")


NESTED_INLINE = r"""#include <stdio.h>
#include <time.h>
static inline __attribute__((always_inline)) long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* SITE:now_ns */
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}
static inline __attribute__((always_inline)) long stamp(void)
{
	return now_ns() + 1; /* SITE:stamp */
}
__attribute__((noinline)) long handle_request(int i)
{
	long a = stamp(); /* SITE:first */
	long b = stamp(); /* SITE:second */
	return a + b + i;
}
int main(void)
{
	long s = 0;
	for (int i = 0; i < 50; i++)
		s += handle_request(i);
	printf("%ld\n", s & 1);
	return 0;
}
"""


def test_helper_inlined_into_inlined_helper(ctx):
    """stamp() inlined at two lines of handle_request, now_ns() inlined
    into stamp(): the whole chain, and each read named at the line of
    handle_request that calls stamp(), not at stamp()'s call of now_ns()."""
    src = os.path.join(ctx.tmp, "nested.c")
    exe = os.path.join(ctx.tmp, "nested")
    with open(src, "w") as f:
        f.write(NESTED_INLINE)
    subprocess.run(["cc", "-O2", "-g", "-o", exe, src], check=True)
    line = {m.group(1): n for n, text in enumerate(NESTED_INLINE.splitlines(), 1)
            for m in [re.search(r"SITE:(\w+)", text)] if m}
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-o", out, "--", exe)
    assert proc.returncode == 0, proc.stderr
    sites = ctx.load_json(out)["call_sites"]
    got = sorted((s["function"], s["line"], s["inlined"], s["inlined_at"]["line"], s["count"])
                 for s in sites)
    assert got == [("handle_request", line["now_ns"], ["stamp", "now_ns"], line[m], 50)
                   for m in ("first", "second")], sites


def marked_sites(source):
    """{via: line} of a target's lines marked "SITE:<via>"."""
    sites = {}
    for number, line in enumerate(open(source), 1):
        m = re.search(r"// SITE:(\w+)", line)
        if m:
            sites[m.group(1)] = number
    return sites


def check_wrapper_sites(ctx, name):
    """clock() and ftime() (glibc and musl), and musl's gettimeofday, time
    and timespec_get, all call clock_gettime themselves: each read is named
    at the caller's line, via the function the caller called."""
    if not os.path.exists(ctx.target(name)):
        raise Skip(f"{name} not built (musl-gcc not installed: make test-deps)")
    run = profile(ctx, name)
    check_sites_add_up(run)
    source = os.path.join(os.path.dirname(__file__), "..", "targets", "wrapper_sites_target.c")
    want = {via: ("handle_request", "wrapper_sites_target.c", line, N)
            for via, line in marked_sites(source).items()}
    got = {s["via"]: (s["function"], os.path.basename(s["file"] or ""), s["line"], s["count"])
           for s in run["call_sites"]}
    assert len(want) == 5 and got == want, (got, run["warnings"])
    assert not [w for w in run["warnings"] if "cannot step out" in w], run["warnings"]


def test_wrappers_calling_clock_gettime_glibc(ctx):
    check_wrapper_sites(ctx, "wrapper_sites_target")


def test_wrappers_calling_clock_gettime_static_musl(ctx):
    check_wrapper_sites(ctx, "wrapper_sites_target_musl_static")


# The leaf is where the mechanism saw the read: the vDSO entry for a
# breakpoint; for a uprobe, libc's clock_gettime itself or the caller's PLT
# stub of gettimeofday/time (their IFUNCs jump straight into the vDSO).
LEAVES = {
    "breakpoint": {"clock_gettime": "clock_gettime;__vdso_clock_gettime",
                   "time": "__vdso_time", "gettimeofday": "__vdso_gettimeofday"},
    "uprobe": {"clock_gettime": "clock_gettime", "time": "time@plt",
               "gettimeofday": "gettimeofday@plt"},
}


def expected_stacks(mechanism, n=N):
    leaf = LEAVES[mechanism]
    return {
        f"main;callsites_main;handle_request;now_ns;{leaf['clock_gettime']}": 2 * n,
        f"main;callsites_main;handle_request;read_mono;{leaf['clock_gettime']}": n,
        f"main;callsites_main;handle_request;read_time;{leaf['time']}": n,
        f"main;callsites_main;handle_request;read_timespec;timespec_get;{leaf['clock_gettime']}": n,
        f"main;callsites_main;handle_request;read_wall_twice;{leaf['gettimeofday']}": 2 * n,
    }


def folded_from_main(path):
    stacks = {}
    for line in open(path).read().splitlines():
        frames, count = line.rsplit(" ", 1)
        frames = frames.split(";")
        stacks[";".join(frames[frames.index("main"):])] = int(count)
    return stacks


def test_stacks_without_frame_pointers_by_cfi(ctx):
    folded = os.path.join(ctx.tmp, "clock.folded")
    proc = ctx.run("run", "-q", "--folded", folded, "--", ctx.target("callsites_target_nofp"),
                   N, 1000)
    assert proc.returncode == 0, proc.stderr
    assert folded_from_main(folded) == expected_stacks(ctx.counted(stacks=True))


def test_stacks_folded_and_speedscope(ctx):
    folded = os.path.join(ctx.tmp, "clock.folded")
    speed = os.path.join(ctx.tmp, "clock.speedscope.json")
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-o", out, "-r", "func:handle_request", "--folded", folded,
                   "--speedscope", speed, "--", ctx.target("callsites_target"), N, 1000)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    lines = open(folded).read().splitlines()
    assert lines == sorted(lines), lines
    check_c_target(run)  # call sites unchanged by --stacks
    stacks = folded_from_main(folded)
    assert sum(stacks.values()) == run["clock_reads"]["total"] == 7 * N
    # The whole path, root first; the vDSO entry is the leaf.
    assert stacks == expected_stacks(ctx.counted(stacks=True)), stacks
    doc = ctx.load_json(speed)
    assert doc["$schema"].endswith("file-format-schema.json")
    profile = doc["profiles"][0]
    assert sum(profile["weights"]) == 7 * N
    assert sum(s["count"] for s in run["stacks"]) == 7 * N


def stacks_of_nofp_target(ctx, rate, env=None, requests=N):
    """`run --stacks` of the C target without frame pointers at rate
    requests a second (0: no pause): its folded lines, whole, and its
    run.json."""
    folded = os.path.join(ctx.tmp, "clock.folded")
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-o", out, "--folded", folded, "--",
                   ctx.target("callsites_target_nofp"), requests, rate,
                   env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr
    return open(folded).read().splitlines(), ctx.load_json(out), folded


def test_stacks_from_copies_are_the_programs_own(ctx):
    # Every function's rules held back for the whole window: each read's
    # stack is the program's copy of it, walked by clockprof. Against a run
    # whose rules are in place a few ms in (the program walks nearly every
    # stack), the folded stacks must be the same to the letter, roots
    # (_start, __libc_start_main) included.
    copied, run, path = stacks_of_nofp_target(ctx, 1000, {"CLOCKPROF_STACK_RULES_AFTER_WINDOW": "1"})
    assert folded_from_main(path) == expected_stacks(ctx.counted(stacks=True))
    assert run["probe"]["stacks_from_copies"] == 7 * N, run["probe"]
    assert run["probe"]["stack_rules_s"] is None, run["probe"]
    walked, run, _ = stacks_of_nofp_target(ctx, 50)
    assert walked == copied, (walked, copied)
    # The rules are put in place during the window, or on a slow enough
    # host after it; when, and so how many reads came before them, is the
    # host's speed: only what follows from either is asserted.
    probe = run["probe"]
    if probe["stack_rules_s"] is None:
        assert probe["stacks_from_copies"] == 7 * N, probe
    else:
        assert 0 <= probe["stack_rules_s"] < run["duration_s"], probe
        assert probe["stacks_from_copies"] <= 7 * N, probe


def test_stacks_of_a_command_that_exits_at_once(ctx):
    # Gone a few ms into the window, long before the rules are built: its
    # modules were captured while it was held, so every stack is whole, and
    # its exit is not taken for a library clockprof failed to probe.
    _, run, path = stacks_of_nofp_target(ctx, 0, requests=3)
    assert folded_from_main(path) == expected_stacks(ctx.counted(stacks=True), 3)
    assert run["end_reason"] == "target-exit"
    assert not [w for w in run["warnings"] if "probe overhead" not in w], run["warnings"]


def test_stacks_stay_in_the_targets_code(ctx):
    # tests/targets/deep_stack_target.c: a stack deeper than the walk goes
    # (every frame the target's code, kept), and a read from a function
    # without CFI whose rbp points at ASCII on its stack: the walk reads
    # "0x313a2a2072657671" as a return address. That stack is cut there,
    # lost_read its root, and counted in probe.stacks_truncated.
    target = subprocess.Popen([ctx.target("deep_stack_target"), "0", "200"],
                              stdout=subprocess.DEVNULL)
    out = os.path.join(ctx.tmp, "run.json")
    try:
        wait_serving(target)
        maps = read_maps(target.pid)
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--stacks",
                                 "-d", "60", "-o", out, str(target.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        wait_paced_requests(target, 10)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        target.kill()
        target.wait()
    assert proc.returncode == 0, err
    run = ctx.load_json(out)
    assert not frames_outside_code(run, maps), frames_outside_code(run, maps)
    lost = [s for s in run["stacks"] if "lost_read" in s["frames"]]
    deep = [s for s in run["stacks"] if "read_deep" in s["frames"]]
    assert lost and deep, run["stacks"]
    leaf = LEAVES[ctx.counted(stacks=True)]["clock_gettime"].split(";")
    for s in lost:
        assert s["frames"] == ["lost_read", *leaf], s
    for s in deep:
        # as deep as the walk goes (CP_STACK_DEPTH): none of it cut
        top = len(leaf) + 1
        assert s["frames"][-top:] == ["read_deep", *leaf], s
        assert set(s["frames"][:-top]) == {"recurse"} and len(s["frames"]) == 32, s
    assert run["probe"]["stacks_truncated"] == sum(s["count"] for s in lost), \
        (run["probe"], lost)
    assert any("stacks are cut short" in w for w in run["warnings"]), run["warnings"]


def test_stripped_binary_with_separate_debug_file(ctx):
    # The boundary symbol and the call sites both come from the debug file
    # found through .gnu_debuglink.
    check_c_target(profile(ctx, "callsites_target_stripped"))


# Left-overs of mangling: a v0 symbol, a legacy hash, a legacy $...$ escape.
MANGLED = re.compile(r"(^|;)_R|::h[0-9a-f]{16}|\$[A-Za-z0-9]+\$")


def test_rust_sites_and_stacks(ctx):
    # Rust's std is compiled with v0 mangling, the program with the legacy
    # scheme: the std clock wrappers are stepped out of by name either way,
    # and every frame reads as Rust prints it.
    out = os.path.join(ctx.tmp, "run.json")
    folded = os.path.join(ctx.tmp, "clock.folded")
    proc = ctx.run("run", "-q", "-o", out, "--folded", folded, "-r",
                   "func:rust_target::handle_request", "--", rust_target(ctx), 2, N)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    check_sites_add_up(run)
    sites = {f: c for (f, via), c in by_function(run).items()}
    assert sites == {"rust_target::read_instant": 2 * N,
                     "rust_target::handle_request": N}, by_function(run)
    for s in run["call_sites"]:
        # Which std function the program called (Instant::now may be a tail
        # call into the platform's Timespec::now) depends on the release.
        assert s["via"].startswith("std::") and s["via"].endswith("::now"), s
        assert not MANGLED.search(s["via"]), s
        assert s["file"].endswith("rust_target.rs") and s["line"] > 0, s
    assert run["measures"]["clock_reads@rust_target::read_instant/op"]["value"] == 2
    stacks = folded_from_main(folded)
    assert sum(stacks.values()) == 3 * N, stacks
    for frames in stacks:
        assert "rust_target::main;rust_target::handle_request" in frames, frames
        assert not MANGLED.search(frames), frames


def test_debug_files_are_looked_for_on_this_machine_only(ctx):
    # libstdc++, libm, libgcc_s have no debug file here: libdwfl's search
    # for one ends in libdebuginfod (dlopen()ed with curl and GnuTLS, ~6 ms,
    # and a download where DEBUGINFOD_URLS is set) unless clockprof knows
    # first that none is on the machine. --stacks reads every module's.
    target = subprocess.Popen([ctx.target("callsites_cpp_target"), "1000000", "200"],
                              stdout=subprocess.DEVNULL)
    try:
        wait_serving(target)
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "--stacks", "-d", "30",
                                 "-o", os.path.join(ctx.tmp, "run.json"), str(target.pid)],
                                env=dict(os.environ, DEBUGINFOD_URLS="http://127.0.0.1:9"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        maps = open(f"/proc/{proc.pid}/maps").read()
        # Stacks come from reads in the window: at 200 requests a second,
        # a window closed at once may hold none (seen once in CI).
        wait_paced_requests(target, 5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        target.kill()
        target.wait()
    assert proc.returncode == 0, err
    assert "libdebuginfod" not in maps, "clockprof loaded libdebuginfod before its window"
    run = ctx.load_json(os.path.join(ctx.tmp, "run.json"))
    assert run["stacks"], (f"no stacks of {run['clock_reads']['total']} reads "
                           f"in {run['duration_s']:.3f} s")
