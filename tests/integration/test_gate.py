"""End to end: real runs of a reference target under `clockprof ab`, judged by
`clockprof compare`. k reads per request against k+1 must fail naming
clock_reads/op; the same build on both sides must pass."""

BOTH_MECHANISMS = True  # run again with --mechanism breakpoint where it fires
import glob
import os
import subprocess

from common import Skip
from common import site_line as source_line

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def ab(ctx, base_k, head_k, runs=2):
    d = os.path.join(ctx.tmp, "runs")
    t = ctx.target("reads_target")
    proc = ctx.run("ab", runs, d, "-r", "func:handle_request", "-e", "none",
                   "--", t, "clock_gettime", base_k, 80, "--", t, "clock_gettime", head_k, 80)
    assert proc.returncode == 0, proc.stderr
    assert len(glob.glob(os.path.join(d, "base-*.json"))) == runs
    return d


def compare(ctx, d, *args):
    verdict = os.path.join(ctx.tmp, "verdict.json")
    md = os.path.join(ctx.tmp, "summary.md")
    html = os.path.join(ctx.tmp, "report.html")
    proc = ctx.run("compare", "--base", *sorted(glob.glob(os.path.join(d, "base-*.json"))),
                   "--head", *sorted(glob.glob(os.path.join(d, "head-*.json"))),
                   "-o", verdict, "--markdown", md, "--html", html, *args)
    assert os.path.getsize(html) > 0
    return proc, ctx.load_json(verdict), open(md).read()


def test_one_more_read_per_request_fails_the_gate(ctx):
    proc, verdict, md = compare(ctx, ab(ctx, 2, 3))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert verdict["status"] == "fail"
    bad = {m["name"] for m in verdict["measures"] if m["status"] == "regressed"}
    assert "clock_reads/op" in bad and "clock_reads.clock_gettime/op" in bad, bad
    assert "clock_reads/op" in md


def site_line(marker):
    return source_line("reads_target.c", marker)


def test_a_regressed_site_measure_names_the_line_that_gained(ctx):
    # The read is in read_once(), inlined into handle_request: the line
    # named is handle_request's own that calls it, not read_once's.
    d = ab(ctx, 2, 3)
    line = site_line("read_once_call")
    proc, verdict, md = compare(ctx, d, "--github", "--source-root", ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    m = {m["name"]: m for m in verdict["measures"]}
    site = m["clock_reads@handle_request/op"]
    assert site["status"] == "regressed", site
    # The line read 2 times per request and now 3: named, and nothing else.
    assert [(x["repo_path"], x["line"], x["base"], x["head"]) for x in site["lines"]] == \
        [("tests/targets/reads_target.c", line, 2, 3)], site["lines"]
    assert "lines" not in m["clock_reads/op"], m["clock_reads/op"]
    assert "`tests/targets/reads_target.c` line %d (2 -> 3)" % line in md, md
    errors = [l for l in proc.stdout.splitlines()
              if l.startswith("::error ") and "clock_reads@handle_request" in l]
    assert len(errors) == 1 and \
        errors[0].startswith("::error file=tests/targets/reads_target.c,line=%d,title=" % line), errors
    where = "tests/targets/reads_target.c:%d (2 -> 3)" % line
    assert errors[0].endswith("; gained reads at " + where), errors
    # The terminal names it as well, after the table.
    assert "\nclock_reads@handle_request/op gained reads at %s\n" % where in proc.stdout, proc.stdout
    html = open(os.path.join(ctx.tmp, "report.html")).read()
    assert "gained at <code>tests/targets/reads_target.c:%d</code>" % line in html


# A checkout of a program built out of tree, as meson and `cmake -S .. -B
# build` with relative paths do: DWARF names the file "../src/server.c",
# relative to the compile directory build/. The read in now(), inlined,
# runs once more per request at an existing line of handle_request in head.
SERVER_C = """#include <time.h>
#include <unistd.h>
static inline long now(void)
{
\tstruct timespec ts;

\tclock_gettime(CLOCK_MONOTONIC, &ts);
\treturn ts.tv_nsec;
}
volatile long sink;
__attribute__((noinline)) void handle_request(void)
{
\tfor (int i = 0; i < %d; i++) sink += now();
\tsink += now();
}
int main(void)
{
\tfor (int i = 0; i < 80; i++) { handle_request(); usleep(1000); }
\treturn 0;
}
"""
LOOP_LINE = 13


def out_of_tree_build(ctx, side, reads):
    """ctx.tmp/SIDE/src/server.c built in ctx.tmp/SIDE/build as `cc ../src/server.c`."""
    root = os.path.join(ctx.tmp, side)
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, "build"))
    with open(os.path.join(root, "src", "server.c"), "w") as f:
        f.write(SERVER_C % reads)
    subprocess.run(["cc", "-O2", "-g", "-o", "server", "../src/server.c"], check=True,
                   cwd=os.path.join(root, "build"))
    return root


def test_a_line_built_out_of_tree_is_named_from_its_compile_directory(ctx):
    base, head = out_of_tree_build(ctx, "base", 2), out_of_tree_build(ctx, "head", 3)
    d = os.path.join(ctx.tmp, "runs")
    proc = ctx.run("ab", 2, d, "-r", "func:handle_request", "-e", "none",
                   "--", os.path.join(base, "build", "server"),
                   "--", os.path.join(head, "build", "server"))
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(os.path.join(d, "head-1.json"))
    sites = [(s["file"], s["inlined_at"], s["comp_dir"]) for s in run["call_sites"]]
    assert ("../src/server.c", {"file": "../src/server.c", "line": LOOP_LINE},
            os.path.join(head, "build")) in sites, sites
    # Run from elsewhere: the source root alone says where the checkout is.
    proc, verdict, md = compare(ctx, d, "--github", "--source-root", head)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    site = {m["name"]: m for m in verdict["measures"]}["clock_reads@handle_request/op"]
    assert [(x["repo_path"], x["line"], x["base"], x["head"]) for x in site["lines"]] == \
        [("src/server.c", LOOP_LINE, 2, 3)], site["lines"]
    where = "src/server.c:%d (2 -> 3)" % LOOP_LINE
    assert "`src/server.c` line %d (2 -> 3)" % LOOP_LINE in md, md
    assert "\nclock_reads@handle_request/op gained reads at %s\n" % where in proc.stdout, proc.stdout
    errors = [l for l in proc.stdout.splitlines()
              if l.startswith("::error ") and "clock_reads@handle_request" in l]
    assert len(errors) == 1 and errors[0].startswith(
        "::error file=src/server.c,line=%d,title=" % LOOP_LINE), errors
    html = open(os.path.join(ctx.tmp, "report.html")).read()
    assert "gained at <code>src/server.c:%d</code>" % LOOP_LINE in html
    # The base checkout is not the root given: its file is in no file=.
    proc, verdict, _ = compare(ctx, d, "--github", "--source-root", base)
    errors = [l for l in proc.stdout.splitlines()
              if l.startswith("::error ") and "clock_reads@handle_request" in l]
    assert len(errors) == 1 and errors[0].startswith("::error title="), errors


def test_same_build_passes(ctx):
    proc, verdict, _ = compare(ctx, ab(ctx, 2, 2))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdict["status"] == "pass"
    assert verdict["summary"]["regressed"] == 0


def test_run_exits_with_the_commands_failure(ctx):
    out = os.path.join(ctx.tmp, "run.json")
    p = ctx.run("run", "-q", "-e", "none", "-o", out, "--", "sh", "-c", "exit 7")
    assert p.returncode == 7, p.stderr
    assert "exit code 7" in p.stderr
    assert ctx.load_json(out)["target"]["exit_status"] == {"code": 7}
    p = ctx.run("run", "-q", "-e", "none", "-o", out, "--", "sh", "-c", "kill -SEGV $$")
    assert p.returncode == 128 + 11, p.stderr
    # Ended by clockprof (the window's duration): not the command's failure.
    p = ctx.run("run", "-q", "-e", "none", "-d", "0.3", "-o", out, "--", "sleep", "30")
    assert p.returncode == 0, p.stderr


def test_ab_stops_at_the_first_failing_run(ctx):
    d = os.path.join(ctx.tmp, "runs")
    t = ctx.target("reads_target")
    p = ctx.run("ab", 4, d, "-e", "none",
                "--", t, "clock_gettime", 2, 20, "--", "sh", "-c", "exit 2")
    assert p.returncode == 2, p.stderr
    assert "head run 1 of 4" in p.stderr and "exit code 2" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(d, "base-2.json"))


def test_ab_with_no_load_gets_no_verdict(ctx):
    """A server profiled with nothing driving it (the CI example's load
    step broken or missing): reads_target with one late thread and a long
    delay waits, serving no request, for the whole window, like a server
    no client reaches. ab says so at each run; compare refuses the runs,
    exit 2, even without --fail-on-inconclusive, and writes no
    verdict.json (it used to pass: "0 of 1 measures outside bounds")."""
    d = os.path.join(ctx.tmp, "runs")
    t = ctx.target("reads_target")
    idle = [t, "clock_gettime", 2, 1, 1, 600000]
    p = ctx.run("ab", 2, d, "-d", "300ms", "-r", "func:handle_request", "-e", "none",
                "--", *idle, "--", *idle)
    assert p.returncode == 0, p.stderr
    for name in ("base run 1 of 2", "head run 1 of 2", "base run 2 of 2", "head run 2 of 2"):
        assert f"warning: ab: {name} saw no complete request" in p.stderr, p.stderr
    verdict = os.path.join(ctx.tmp, "verdict.json")
    p = ctx.run("compare", "--base", *sorted(glob.glob(os.path.join(d, "base-*.json"))),
                "--head", *sorted(glob.glob(os.path.join(d, "head-*.json"))), "-o", verdict)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no base run saw a complete request" in p.stderr, p.stderr
    assert not os.path.exists(verdict)


def test_request_boundary_compared_as_resolved(ctx):
    """run.json records the boundary as resolved: func:handle_request and
    func:./reads_target:handle_request are one boundary (compare judges
    them), func:libc:clock_gettime another (compare refuses, exit 2)."""
    runs = {}
    for name, spec in (("plain", "func:handle_request"),
                       ("path", "func:./reads_target:handle_request"),
                       ("libc", "func:libc:clock_gettime")):
        out = os.path.join(ctx.tmp, f"{name}.json")
        ctx.run("run", "-q", "-d", "300ms", "-e", "none", "-r", spec, "-o", out, "--",
                "./reads_target", "clock_gettime", 5, check=True, cwd=ctx.targets)
        runs[name] = ctx.load_json(out)["request"]["boundary"]
    assert runs["plain"] == runs["path"], runs
    assert runs["plain"]["main_executable"] and runs["plain"]["symbol"] == "handle_request", runs
    assert not runs["libc"]["main_executable"], runs
    assert runs["libc"]["file"].split("/")[-1].startswith("libc"), runs
    tmp = lambda n: os.path.join(ctx.tmp, f"{n}.json")  # noqa: E731
    p = ctx.run("compare", "--base", tmp("plain"), "--head", tmp("path"))
    assert p.returncode == 0, p.stderr
    p = ctx.run("compare", "--base", tmp("plain"), "--head", tmp("libc"))
    assert p.returncode == 2 and "request boundary" in p.stderr, p.stderr


def test_one_more_read_moves_reads_not_task_clock_when_nothing_traps(ctx):
    """Issue 27's gate: 10 runs a side of a target whose head reads the
    clock once more per request (work_target: 2 against 3 reads, then a
    fixed ~20 us of work), counters in the same window as the reads. With
    the vDSO patch nothing traps (the boundary is closed in the target):
    clock_reads/op regresses, and task-clock/op, the program's own CPU per
    request, does not: the change's interval reaches down to +2% or less
    (one read is ~25 ns of ~20 us). With a uprobe boundary it was flagged
    +13% (a trap a request). Not its point estimate against a fixed
    margin: a loaded host moves that (-3.0% once, two busy loops beside)
    where the interval widens with the noise instead. Not with the other
    mechanisms, which trap by design."""
    if ctx.mechanism not in (None, "patch", "auto"):
        raise Skip(f"--mechanism {ctx.mechanism} traps at every read by design")
    d = os.path.join(ctx.tmp, "runs")
    t = ctx.target("work_target")
    proc = ctx.run("ab", 10, d, "--mechanism", "patch", "-r", "func:serve_one", "-e",
                   "task-clock", "--", t, 2, 3000, "--", t, 3, 3000)
    assert proc.returncode == 0, proc.stderr
    for path in glob.glob(os.path.join(d, "*.json")):
        run = ctx.load_json(path)
        assert run["probe"]["hits"] == 0, (path, run["probe"], run["warnings"])
        assert run["windows"]["counters"]["probes"] == "all, none trapping (counted in the target)"
    proc, verdict, _ = compare(ctx, d)
    by = {m["name"]: m for m in verdict["measures"]}
    assert by["clock_reads/op"]["status"] == "regressed", by["clock_reads/op"]
    tc = by["task-clock/op"]
    assert tc["status"] != "regressed", tc
    assert tc["change_pct"]["lo"] <= 2.0, tc["change_pct"]
    print(f"    task-clock/op {tc['change_pct']['point']:+.2f}% ({tc['status']}), "
          f"clock_reads/op {by['clock_reads/op']['change_pct']['point']:+.1f}%")
