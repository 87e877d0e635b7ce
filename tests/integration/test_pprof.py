"""--pprof (issue 29, items 3 and 4): the profile `go tool pprof` reads
holds exactly what run.json holds, and what the bundled target does by
construction (tests/targets/callsites_target.c: 7 reads a request, at the
lines its SITE: markers name): clock reads per call site at its file:line,
with the function it is inlined into; requests at the boundary function;
with --stacks, each whole stack, frame by frame with file:line. Read with
pprof itself (`go tool pprof -top` and `-traces`, Debian golang-go)."""
import json
import os
import re
import shutil
import subprocess

from common import Skip
from common import site_line as source_line

N = 60  # requests; the target exits after them
TOP_ROW = re.compile(r"^\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.+?)(?: \(inline\))?$")


def site_line(marker):
    return source_line("callsites_target.c", marker)


def go_pprof(*args):
    go = shutil.which("go")
    if not go:
        raise Skip("go is not installed (Debian golang-go): go tool pprof cannot read the profile")
    proc = subprocess.run([go, "tool", "pprof", *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PPROF_TMPDIR="/tmp"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def profile(ctx, *options, boundary="func:handle_request"):
    out, prof = os.path.join(ctx.tmp, "run.json"), os.path.join(ctx.tmp, "clock.pb.gz")
    proc = ctx.run("run", "-q", "-o", out, "-r", boundary, "--pprof", prof,
                   *options, "--", ctx.target("callsites_target"), N, 1000)
    assert proc.returncode == 0, proc.stderr
    with open(prof, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", "not gzip-compressed"
    return ctx.load_json(out), prof


def top(path, *args):
    """pprof -top -lines: {(function, "file:line" or ""): (flat, cum)}."""
    rows = {}
    # Every node: pprof leaves out those under 0.5% of the total by default.
    argv = ["-top", "-lines", "-nodecount=100000", "-nodefraction=0", *args, path]
    for line in go_pprof(*argv).splitlines():
        m = TOP_ROW.match(line)
        if not m or m.group(3).startswith("flat"):
            continue
        name, _, where = m.group(3).partition(" ")
        rows[(name, where)] = (int(m.group(1)), int(m.group(2)))
    return rows


def traces(path):
    """pprof -traces -lines: [(count, via label or None, [frame, ...] leaf
    first)], each frame "function file:line" as pprof prints it."""
    out, cur = [], None
    for line in go_pprof("-traces", "-lines", path).splitlines():
        if line.startswith("-----------+"):
            cur = {"via": None, "count": None, "frames": []}
            out.append(cur)
        elif cur is not None and line.strip().startswith("via:"):
            cur["via"] = line.split(":", 1)[1].strip()
        elif cur is not None and line.strip():
            head = line[:11].strip()
            if head:
                cur["count"] = int(head)
            cur["frames"].append(line[11:].strip().removesuffix(" (inline)"))
    return sorted((t["count"], t["via"], t["frames"]) for t in out if t["count"] is not None)


def where(file, line):
    return f"{file}:{line}" if file and line else (file or "")


def site_frames(s):
    """A call site's inline chain as pprof -traces prints it, innermost
    first: the function it is inlined into at inlined_at, those between
    without a line."""
    inner = f"{(s['inlined'] or [s['function']])[-1]} {where(s['file'], s['line'])}"
    outer = ([s["function"]] + s["inlined"][:-1])[::-1][:len(s["inlined"])]
    at = s["inlined_at"]
    if outer and at:
        outer[-1] = f"{outer[-1]} {where(at['file'], at['line'])}"
    return [inner] + outer


def test_call_sites_as_in_run_json_and_by_construction(ctx):
    run, prof = profile(ctx)
    # -top: each site's reads at its innermost function and file:line,
    # exactly run.json's, and what the target does.
    rows = top(prof)
    sites = {}
    for s in run["call_sites"]:
        name = s["inlined"][-1] if s["inlined"] else s["function"]
        key = (name, where(s["file"], s["line"]))
        sites[key] = sites.get(key, 0) + s["count"]
    flat = {k: v[0] for k, v in rows.items() if v[0]}
    assert flat == sites, (flat, sites)
    f = run["call_sites"][0]["file"]
    assert flat == {("now_ns", f"{f}:{site_line('now_ns')}"): 2 * N,
                    ("read_wall_twice", f"{f}:{site_line('read_wall_twice')}"): 2 * N,
                    ("read_mono", f"{f}:{site_line('read_mono')}"): N,
                    ("read_time", f"{f}:{site_line('read_time')}"): N,
                    ("read_timespec", f"{f}:{site_line('read_timespec')}"): N}, flat
    assert sum(flat.values()) == run["clock_reads"]["total"] == 7 * N
    # handle_request holds now_ns's reads, inlined into it at two lines.
    assert {k: v for k, v in rows.items() if k[0] == "handle_request"} == {
        ("handle_request", f"{f}:{site_line('inline1')}"): (0, N),
        ("handle_request", f"{f}:{site_line('inline2')}"): (0, N)}, rows
    # -traces: one trace per site: its count, the clock function called
    # (label via) and its inline chain, innermost first.
    want = sorted((s["count"], s["via"], site_frames(s)) for s in run["call_sites"])
    got = [t for t in traces(prof) if t[0]]
    assert got == want, (got, want)


def test_requests_at_the_boundary_function(ctx):
    run, prof = profile(ctx)
    rows = top(prof, "-sample_index=requests")
    assert {k: v for k, v in rows.items() if v[0]} == \
        {("handle_request", ""): (run["request"]["count"], run["request"]["count"])}, rows
    # Every request of the N but the first, partial one (before the
    # thread's first boundary), as run.json counts them.
    assert run["request"]["count"] == N - 1


def test_no_requests_samples_without_a_func_boundary(ctx):
    # A syscall: boundary has no function to put requests at: the profile
    # has none (docs/pprof.md); the reads are all there.
    run, prof = profile(ctx, boundary="syscall:clock_nanosleep")
    assert run["request"]["count"] > 0
    assert not any(v[0] for v in top(prof, "-sample_index=requests").values())
    assert sum(v[0] for v in top(prof).values()) == run["clock_reads"]["total"] == 7 * N


def test_stacks_frame_by_frame_with_file_and_line(ctx):
    run, prof = profile(ctx, "--stacks")
    want = []
    for st in run["stacks"]:
        frames = [f"{name} {where(src['file'], src['line'])}".strip()
                  for name, src in zip(st["frames"], st["sources"])]
        want.append((st["count"], None, frames[::-1]))
    got = [t for t in traces(prof) if t[0]]
    assert got == sorted(want), (got, sorted(want))
    assert sum(t[0] for t in got) == 7 * N
    # now_ns, inlined into handle_request twice: two stacks, told apart by
    # the line of handle_request each is inlined at.
    f = run["call_sites"][0]["file"]
    inline = [t for t in got if t[2][1] == f"now_ns {f}:{site_line('now_ns')}"]
    assert sorted(t[2][2] for t in inline) == [
        f"handle_request {f}:{site_line('inline1')}",
        f"handle_request {f}:{site_line('inline2')}"], inline
    assert [t[0] for t in inline] == [N, N], inline


def site_reads(record):
    """An interval record's reads by call site: a profile's samples. Mid-run
    the sites are read a moment after the totals (docs/run-json.md), so one
    interval's sites may hold a read its totals leave to the next."""
    return sum(site["count"] for site in record["call_sites"])


def interval_profiles(ctx, keep):
    """A paced run of -d 2 with --interval 0.3s and --pprof: run.json, the
    interval lines and the names of the interval profiles left, oldest
    first."""
    out, prof = os.path.join(ctx.tmp, "run.json"), os.path.join(ctx.tmp, "clock.pb.gz")
    lines = os.path.join(ctx.tmp, "intervals.jsonl")
    proc = ctx.run("run", "-q", "-d", "2", "-o", out, "-r", "func:handle_request",
                   "--interval", "0.3s", "--interval-output", lines, "--pprof", prof,
                   "--pprof-keep", keep, "--", ctx.target("callsites_target"), 0, 500)
    assert proc.returncode == 0, proc.stderr
    with open(lines) as f:
        records = [json.loads(line) for line in f]
    names = sorted(n for n in os.listdir(ctx.tmp)
                   if re.fullmatch(r"clock\.\d{8}T\d{6}\.\d{3}Z\.pb\.gz", n))
    return ctx.load_json(out), prof, records, [os.path.join(ctx.tmp, n) for n in names]


def test_interval_profiles_add_up_to_the_run(ctx):
    # --pprof with --interval (issue 29 item 3): one profile per interval,
    # every one kept here, whose reads add up to run.json's, as the
    # interval records' do; --pprof's own file holds the whole run.
    run, prof, records, series = interval_profiles(ctx, 1000)
    assert len(series) == len(records) >= 3, (len(series), len(records))
    per_file = [sum(v[0] for v in top(p).values()) for p in series]
    assert per_file == [site_reads(r) for r in records], per_file
    whole = sum(v[0] for v in top(prof).values())
    assert sum(per_file) == run["clock_reads"]["total"] == whole, \
        (per_file, run["clock_reads"]["total"], whole, [r.get("end_s") for r in records])
    requests = sum(sum(v[0] for v in top(p, "-sample_index=requests").values()) for p in series)
    assert requests == run["request"]["count"]


def test_interval_profiles_keep_the_newest(ctx):
    _, _, records, series = interval_profiles(ctx, 2)
    assert len(records) >= 3 and len(series) == 2, (len(records), series)
    # The newest two: the last interval's sites are in the last file.
    assert sum(v[0] for v in top(series[-1]).values()) == site_reads(records[-1])
