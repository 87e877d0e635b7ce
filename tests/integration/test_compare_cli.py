"""`clockprof compare` at the command line, on synthetic run files written
into ctx.tmp (no privileges or BPF needed): exit codes 0/1/2, the bounds
file's line numbers in errors, markdown and annotation escaping, and the
$GITHUB_STEP_SUMMARY append."""
import hashlib
import json
import os
import random

HOSTILE = ["tick`s", "pi|pe", "new\nline", "::error::pwned", "100%", "cr\rlf",
           "<b>html</b>", "@mention"]


def write_run(path, measures, clocksource="tsc", build_id="b1", complete=True,
              reads=300, requests=None, warnings=(), cpu="test cpu", doc_extra=None):
    doc = {
        "schema": "clockprof.run/1",
        "tool": {"name": "clockprof", "version": "0.1.0"},
        "complete": complete, "duration_s": 2.0,
        "started_at": "2026-11-29T21:00:00Z",
        "target": {"pid": 42, "comm": "srv", "exe": "/usr/bin/srv",
                   "build_id": build_id, "cmdline": ["srv"]},
        "host": {"kernel": "6.1.0", "cpu": cpu, "clocksource": clocksource,
                 "pmu": False, "tool_version": "0.1.0"},
        "request": None if requests is None else {"spec": "func:h", "count": requests},
        "ops": 100,
        "clock_reads": {"total": reads},
        "measures": {},
        "warnings": list(warnings),
    }
    for name, (value, kind, better) in measures.items():
        doc["measures"][name] = {"value": value, "unit": "reads/op" if kind == "exact" else "ns/op",
                                 "kind": kind, "better": better}
    doc.update(doc_extra or {})
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def make_side(ctx, side, n, reads=3, time_scale=1.0, seed=1, extra=None):
    rng = random.Random(seed)
    paths = []
    for i in range(n):
        m = {"clock_reads/op": (reads, "exact", "lower"),
             "task-clock/op": (1e6 * time_scale * rng.lognormvariate(0, 0.01), "sampled", "lower")}
        m.update(extra or {})
        paths.append(write_run(os.path.join(ctx.tmp, f"{side}-{i}.json"), m))
    return paths


def compare(ctx, base, head, *args, **kw):
    return ctx.run("compare", "--base", *base, "--head", *head, *args, **kw)


def test_within_bounds_exits_0(ctx):
    base = make_side(ctx, "base", 6, seed=1)
    head = make_side(ctx, "head", 6, seed=2)
    out = os.path.join(ctx.tmp, "verdict.json")
    p = compare(ctx, base, head, "-o", out, "--color=never")
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    assert v["schema"] == "clockprof.verdict/1"
    assert v["status"] == "pass"
    assert v["base"]["runs"] == 6 and v["head"]["runs"] == 6
    assert v["summary"]["measures"] == 2 and v["summary"]["regressed"] == 0
    assert v["bounds"]["file"] is None
    assert "pass: 0 of 2 measures outside bounds" in p.stdout
    assert "\033[" not in p.stdout


def test_exact_regression_exits_1(ctx):
    base = make_side(ctx, "base", 1, reads=3)
    head = make_side(ctx, "head", 1, reads=4)
    out = os.path.join(ctx.tmp, "verdict.json")
    p = compare(ctx, base, head, "-o", out)
    assert p.returncode == 1, (p.returncode, p.stderr)
    v = ctx.load_json(out)
    assert v["status"] == "fail"
    m = {x["name"]: x for x in v["measures"]}["clock_reads/op"]
    assert m["status"] == "regressed" and m["bound"] == "+0"
    assert m["base"]["median"] == 3 and m["head"]["median"] == 4
    assert "REGRESSED" in p.stdout and "\u25b2" in p.stdout


def test_sampled_regression_and_bounds_file(ctx):
    base = make_side(ctx, "base", 10, seed=1)
    head = make_side(ctx, "head", 10, time_scale=1.2, seed=2)
    bounds = os.path.join(ctx.tmp, ".clockprof-bounds")
    text = "# test bounds\nclock_reads/op +0\ntask-clock/op +10%\nunused* +1%\n* +5%\n"
    with open(bounds, "w") as f:
        f.write(text)
    out = os.path.join(ctx.tmp, "verdict.json")
    p = compare(ctx, base, head, "--bounds", bounds, "-o", out)
    assert p.returncode == 1, p.stderr
    v = ctx.load_json(out)
    assert v["bounds"]["file"] == bounds
    assert v["bounds"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    m = {x["name"]: x for x in v["measures"]}["task-clock/op"]
    assert m["status"] == "regressed"
    assert m["bound_rule"]["line"] == 3
    assert 15 < m["change_pct"]["point"] < 25
    assert m["p_value"] < 0.001 and m["p_adjusted"] is not None
    assert any("line 4 'unused* +1%' matches no measure" in w for w in v["warnings"])


def test_bad_bounds_line_exits_2(ctx):
    base = make_side(ctx, "base", 1)
    head = make_side(ctx, "head", 1)
    bounds = os.path.join(ctx.tmp, "bounds")
    with open(bounds, "w") as f:
        f.write("# ok\nclock_reads/op +0\ntask-clock/op 5%\n")
    out = os.path.join(ctx.tmp, "verdict.json")
    p = compare(ctx, base, head, "--bounds", bounds, "-o", out)
    assert p.returncode == 2
    assert f"{bounds}:3: bad bound '5%'" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1
    assert not os.path.exists(out)


def test_invalid_input_exits_2(ctx):
    base = make_side(ctx, "base", 1)
    head = make_side(ctx, "head", 1)
    bad = os.path.join(ctx.tmp, "bad.json")
    with open(bad, "w") as f:
        f.write("{not json")
    p = compare(ctx, base, [bad])
    assert p.returncode == 2 and "bad.json: invalid JSON" in p.stderr, p.stderr
    p = compare(ctx, base, [os.path.join(ctx.tmp, "missing.json")])
    assert p.returncode == 2 and "missing.json" in p.stderr
    other = os.path.join(ctx.tmp, "other.json")
    with open(other, "w") as f:
        json.dump({"schema": "something/1"}, f)
    p = compare(ctx, base, [other])
    assert p.returncode == 2 and "not a clockprof run file" in p.stderr
    p = compare(ctx, base, head, "--bounds", os.path.join(ctx.tmp, "nope"))
    assert p.returncode == 2 and "cannot read bounds file" in p.stderr
    p = compare(ctx, base, head, "-o", os.path.join(ctx.tmp, "no/such/dir/v.json"))
    assert p.returncode == 2


def test_usage_errors_and_help(ctx):
    base = make_side(ctx, "base", 1)
    p = ctx.run("compare", "--base", *base)
    assert p.returncode == 2 and "--head" in p.stderr
    p = ctx.run("compare", base[0])
    assert p.returncode == 2 and "not an option" in p.stderr
    p = ctx.run("compare", "--frobnicate")
    assert p.returncode == 2 and "unknown option" in p.stderr
    p = compare(ctx, base, base, "--color=sometimes")
    assert p.returncode == 2 and "--color" in p.stderr
    for p in (ctx.run("compare", "--help"), ctx.run("compare", "-h")):
        assert p.returncode == 0 and p.stdout.startswith("usage: clockprof compare")
        assert p.stderr == ""


def test_base_equals_form_and_globbed_files(ctx):
    base = make_side(ctx, "base", 3)
    head = make_side(ctx, "head", 3)
    out = os.path.join(ctx.tmp, "v.json")
    p = ctx.run("compare", f"--base={base[0]}", base[1], base[2], "--head", *head, "-o", out)
    assert p.returncode == 0, p.stderr
    assert ctx.load_json(out)["base"]["runs"] == 3


def test_inconclusive_and_fail_on_inconclusive(ctx):
    # 3 runs a side cannot give an interval: inconclusive, says 4 are needed.
    base = make_side(ctx, "base", 3, seed=1)
    head = make_side(ctx, "head", 3, time_scale=1.3, seed=2)
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, head, "-o", out)
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    assert v["status"] == "inconclusive"
    m = {x["name"]: x for x in v["measures"]}["task-clock/op"]
    assert m["status"] == "inconclusive" and m["runs_needed"] == 4
    p = compare(ctx, base, head, "--fail-on-inconclusive")
    assert p.returncode == 1


def test_clocksource_mismatch(ctx):
    base = make_side(ctx, "base", 5)
    head = [write_run(os.path.join(ctx.tmp, f"h{i}.json"),
                      {"clock_reads/op": (3, "exact", "lower"),
                       "task-clock/op": (1e6 + i, "sampled", "lower")}, clocksource="hpet")
            for i in range(5)]
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, head, "-o", out)
    v = ctx.load_json(out)
    assert p.returncode == 0
    assert v["env_mismatch"][0]["field"] == "clocksource"
    assert v["env_mismatch"][0]["base"] == ["tsc"] and v["env_mismatch"][0]["head"] == ["hpet"]
    m = {x["name"]: x for x in v["measures"]}
    assert m["task-clock/op"]["status"] == "inconclusive"
    assert m["clock_reads/op"]["status"] == "within"


def hostile_sides(ctx):
    extra_b = {n: (1, "exact", "lower") for n in HOSTILE}
    extra_h = {n: (2, "exact", "lower") for n in HOSTILE}
    base = make_side(ctx, "base", 1, extra=extra_b)
    head = make_side(ctx, "head", 1, extra=extra_h)
    return base, head


def test_markdown_escaping_and_step_summary(ctx):
    base, head = hostile_sides(ctx)
    md = os.path.join(ctx.tmp, "summary.md")
    summary = os.path.join(ctx.tmp, "step_summary.md")
    with open(summary, "w") as f:
        f.write("previous step\n")
    env = dict(os.environ, GITHUB_STEP_SUMMARY=summary)
    p = compare(ctx, base, head, "--markdown", md, env=env)
    assert p.returncode == 1, p.stderr
    text = open(md).read()
    assert text.startswith("### clockprof: **FAIL**")
    # judged: the hostile names, clock_reads/op and task-clock/op (1 run: inconclusive)
    assert f"{len(HOSTILE)} of {len(HOSTILE) + 2} measures outside bounds" in text
    assert "\r" not in text
    assert "``tick`s``" in text
    assert "`pi\\|pe`" in text
    assert "`new\\nline`" in text
    assert "`<b>html</b>`" in text and "`@mention`" in text
    assert "<details><summary>All" in text
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| measure"):
            cells, i = 0, 0
            while i < len(line):
                if line[i] == "\\":
                    i += 2
                    continue
                cells += line[i] == "|"
                i += 1
            assert cells in (7, 8), line
    assert len(text.encode()) < 1 << 20
    appended = open(summary).read()
    assert appended == "previous step\n" + text


def test_github_annotations_cannot_inject(ctx):
    base, head = hostile_sides(ctx)
    p = compare(ctx, base, head, "--github")
    assert p.returncode == 1
    lines = p.stdout.split("\n")
    assert lines[0].startswith("::stop-commands::")
    token = lines[0][len("::stop-commands::"):]
    assert len(token) == 32
    end = lines.index(f"::{token}::")
    after = [x for x in lines[end + 1:] if x]
    # Outside the stop-commands block, only our own commands start a line.
    assert all(x.startswith("::error title=clockprof%3A ") for x in after), after
    assert len(after) == len(HOSTILE) + 0  # clock_reads/op is within
    # Even inside the block the table never starts a line with "::".
    assert not any(x.lstrip().startswith("::error::pwned") for x in lines)
    assert "\\x3a:error::pwned" in p.stdout
    joined = "\n".join(after)
    assert "%3A%3Aerror%3A%3Apwned" in joined     # ':' escaped in the title
    assert "Measure '100%25'" in joined            # '%' escaped in the message
    assert "\r" not in p.stdout


def test_many_regressions_capped_at_ten(ctx):
    names = {f"m{i:02d}/op": (1, "exact", "lower") for i in range(13)}
    worse = {k: (2, "exact", "lower") for k in names}
    base = make_side(ctx, "base", 1, extra=names)
    head = make_side(ctx, "head", 1, extra=worse)
    p = compare(ctx, base, head, "--github", "-q")
    assert p.returncode == 1
    errors = [x for x in p.stdout.splitlines() if x.startswith("::error ")]
    notices = [x for x in p.stdout.splitlines() if x.startswith("::notice ")]
    assert len(errors) == 10 and len(notices) == 1
    assert "3 more measures regressed" in notices[0]


def test_added_and_removed_reported(ctx):
    base = make_side(ctx, "base", 1, extra={"gone/op": (1, "exact", "lower")})
    head = make_side(ctx, "head", 1, extra={"new/op": (1, "exact", "lower")})
    out = os.path.join(ctx.tmp, "v.json")
    # A measure every base run had is gone from the head: a broken head
    # fails the gate unless the bounds file allows it by name.
    p = compare(ctx, base, head, "-o", out)
    assert p.returncode == 1, p.stderr
    v = ctx.load_json(out)
    m = {x["name"]: x for x in v["measures"]}
    assert m["gone/op"]["status"] == "removed" and m["new/op"]["status"] == "added"
    assert m["gone/op"]["fails_gate"] and v["summary"]["removed_not_allowed"] == 1
    assert "removed-ok gone/op" in m["gone/op"]["reason"]
    bounds = os.path.join(ctx.tmp, "bounds")
    with open(bounds, "w") as f:
        f.write("removed-ok gone/*\nnew/* +1\n")
    p = compare(ctx, base, head, "-o", out, "--bounds", bounds)
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    assert v["summary"]["outside_bounds"] == 0 and not v["warnings"], v["warnings"]


def test_verdict_to_stdout(ctx):
    base = make_side(ctx, "base", 1)
    head = make_side(ctx, "head", 1)
    p = compare(ctx, base, head, "-o", "-")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["schema"] == "clockprof.verdict/1"
    assert "measures outside bounds" in p.stderr


def test_html_report(ctx):
    base = make_side(ctx, "base", 4, seed=1)
    head = make_side(ctx, "head", 4, seed=2)
    html = os.path.join(ctx.tmp, "report.html")
    p = compare(ctx, base, head, "--html", html)
    assert p.returncode == 0, p.stderr
    with open(html) as f:
        assert "<html" in f.read(4096).lower()


def test_validator_errors_are_one_escaped_line(ctx):
    # A measure name from a run file is quoted in the validator's error:
    # a newline or a bidi override in it must not reach stderr raw.
    path = write_run(os.path.join(ctx.tmp, "bad.json"), {})
    with open(path) as f:
        doc = json.load(f)
    doc["measures"]["a\n::error title=INJ::x\u202e\x1b[2J"] = 5
    with open(path, "w") as f:
        json.dump(doc, f)
    proc = ctx.run("compare", "--base", path, "--head", path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("clockprof: "), proc.stderr
    assert "a\\n::error title=INJ::x\\u202e\\x1b[2J" in lines[0], lines[0]


def sampled_runs(ctx, prefix, n, scale=1.0, seed=1, cv=0.01, **kw):
    rng = random.Random(seed)
    return [write_run(os.path.join(ctx.tmp, f"{prefix}-{i}.json"),
                      {"task-clock/op": (1e6 * scale * rng.lognormvariate(0, cv), "sampled", "lower")},
                      **kw)
            for i in range(n)]


def test_duplicate_runs_refused(ctx):
    base = make_side(ctx, "base", 3)
    head = make_side(ctx, "head", 3, seed=2)
    p = compare(ctx, base, [head[0], head[1], head[0]])
    assert p.returncode == 2, p.stderr
    assert "same run" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    # A copy under another name is the same run too.
    copy = os.path.join(ctx.tmp, "copy.json")
    with open(base[0]) as f, open(copy, "w") as g:
        g.write(f.read())
    p = compare(ctx, base + [copy], head)
    assert p.returncode == 2 and "same run" in p.stderr, p.stderr


def test_incomplete_runs_left_out(ctx):
    base = sampled_runs(ctx, "b", 6)
    good = sampled_runs(ctx, "h", 6, seed=2)
    cut = sampled_runs(ctx, "cut", 2, scale=3.0, seed=3, complete=False)
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, good + cut, "-o", out)
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    assert sorted(x["file"] for x in v["excluded_runs"]) == sorted(cut)
    m = {x["name"]: x for x in v["measures"]}["task-clock/op"]
    assert m["head"]["n"] == 6 and m["status"] == "within", m
    # Every head run cut short: nothing to judge them by.
    p = compare(ctx, base, cut, "-o", out)
    v = ctx.load_json(out)
    assert v["status"] == "inconclusive", v["status"]
    assert any("no complete head run" in r for r in v["inconclusive_reasons"])
    assert sorted(x["file"] for x in v["excluded_runs"]) == sorted(cut)


def test_side_of_cut_short_runs_is_not_judged(ctx):
    """A head whose every run was cut short must not fail (or pass) the gate
    on what it measured: inconclusive, its runs in excluded_runs, exit 0
    (1 with --fail-on-inconclusive); some cut-short runs are left out and
    the rest judged."""
    base = [write_run(os.path.join(ctx.tmp, f"b-{i}.json"),
                      {"clock_reads/op": (3, "exact", "lower"), "calls.f/op": (1, "exact", "lower")},
                      build_id=f"b{i}") for i in range(3)]
    cut = [write_run(os.path.join(ctx.tmp, f"cut-{i}.json"), {"clock_reads/op": (4, "exact", "lower")},
                     build_id=f"c{i}", complete=False) for i in range(3)]
    good = [write_run(os.path.join(ctx.tmp, f"h-{i}.json"),
                      {"clock_reads/op": (3, "exact", "lower"), "calls.f/op": (1, "exact", "lower")},
                      build_id=f"h{i}") for i in range(2)]
    out = os.path.join(ctx.tmp, "v.json")
    for extra, code in (((), 0), (("--fail-on-inconclusive",), 1)):
        p = compare(ctx, base, cut, "-o", out, *extra)
        assert p.returncode == code, (extra, p.returncode, p.stderr)
        v = ctx.load_json(out)
        assert v["status"] == "inconclusive", v["status"]
        assert sorted(x["file"] for x in v["excluded_runs"]) == sorted(cut)
        assert any("no complete head run" in r for r in v["inconclusive_reasons"])
        ms = {x["name"]: x for x in v["measures"]}
        assert all(m["status"] == "inconclusive" and not m["fails_gate"] for m in ms.values()), ms
        assert ms["clock_reads/op"]["head"]["median"] == 4   # shown, not judged
    p = compare(ctx, base, good + cut, "-o", out, "--fail-on-inconclusive")
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    assert v["status"] == "pass" and v["inconclusive_reasons"] == [], v
    assert sorted(x["file"] for x in v["excluded_runs"]) == sorted(cut)


def test_runs_that_measured_nothing_are_refused(ctx):
    """No verdict from no evidence: no clock read in any run of either
    side, or a side with a boundary and no complete request in any run,
    exits 2 with one line naming the side and what it lacks, and writes
    no verdict.json, markdown or report (the gate used to pass such runs,
    or call them inconclusive, which passes without
    --fail-on-inconclusive). One side reading nothing is judged."""
    out = os.path.join(ctx.tmp, "v.json")
    md = os.path.join(ctx.tmp, "v.md")
    html = os.path.join(ctx.tmp, "v.html")
    outputs = ("-o", out, "--markdown", md, "--html", html, "--github")
    fed = dict(requests=50)
    blind = (sampled_runs(ctx, "b", 5, reads=0, **fed),
             sampled_runs(ctx, "h", 5, seed=2, reads=0, **fed))
    idle_head = sampled_runs(ctx, "ih", 5, seed=3, requests=0)
    for base, head, says in ((*blind, "neither side read the clock"),
                             (blind[0], idle_head, "no head run saw a complete request")):
        for extra in ((), ("--fail-on-inconclusive",)):
            p = compare(ctx, base, head, *outputs, *extra)
            assert p.returncode == 2, (says, p.returncode, p.stdout, p.stderr)
            assert says in p.stderr and p.stderr.count("\n") == 1, p.stderr
            assert "::" not in p.stdout, p.stdout
            for path in (out, md, html):
                assert not os.path.exists(path), path
    # The head removed every read: a result, judged and written.
    reading = sampled_runs(ctx, "r", 5, seed=4, **fed)
    p = compare(ctx, reading, blind[1], "-o", out)
    assert p.returncode == 0, p.stderr
    assert ctx.load_json(out)["status"] == "pass"


def test_like_run_warnings_are_merged_into_one_line(ctx):
    # Each run of a build says its probe overhead, with its own figure: one
    # line per side, the figures as a range, not one line per run.
    def overhead(pct):
        return [f"probe overhead is about {pct}% of the target's CPU time in the clock "
                "window: timings there are inflated, counts are exact"]
    base = [write_run(os.path.join(ctx.tmp, f"ob-{i}.json"), {"reads/op": (3, "exact", "lower")},
                      reads=300 + i, warnings=overhead(84 + 3 * i) if i < 3 else ())
            for i in range(6)]
    head = [write_run(os.path.join(ctx.tmp, f"oh-{i}.json"), {"reads/op": (3, "exact", "lower")},
                      build_id="b2", warnings=overhead([100, 84, 91, 97, 88, 95][i]))
            for i in range(6)]
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, head, "-o", out)
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    said = [w for w in v["warnings"] if "probe overhead" in w]
    assert said == ["base runs (3 of 6): probe overhead is about 84-90% of the target's CPU "
                    "time in the clock window: timings there are inflated, counts are exact",
                    "head runs (6 of 6): probe overhead is about 84-100% of the target's CPU "
                    "time in the clock window: timings there are inflated, counts are exact"], said
    shown = [line for line in (p.stdout + p.stderr).splitlines() if "probe overhead" in line]
    assert len(shown) <= 2, shown


def test_other_host_fingerprint_is_not_judged(ctx):
    base = sampled_runs(ctx, "b", 6)
    head = sampled_runs(ctx, "h", 6, scale=1.3, seed=2, cpu="other cpu")
    out = os.path.join(ctx.tmp, "v.json")
    md = os.path.join(ctx.tmp, "v.md")
    p = compare(ctx, base, head, "-o", out, "--markdown", md, "--color=never")
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    m = {x["name"]: x for x in v["measures"]}["task-clock/op"]
    assert m["status"] == "inconclusive" and "(cpu)" in m["reason"], m["reason"]
    assert v["env_mismatch"][0]["field"] == "cpu"
    # Said in the table and in the markdown, each its way.
    assert 'environment differs: cpu base ["test cpu"], head ["other cpu"] (inconclusive)\n' \
        in p.stdout, p.stdout
    text = open(md).read()
    assert '- Environment differs: cpu base `["test cpu"]`, head `["other cpu"]` (sampled ' \
        'measures inconclusive)\n' in text, text


def test_step_summary_failure_keeps_the_exit_code(ctx):
    base = make_side(ctx, "base", 1, extra={"x/op": (1, "exact", "lower")})
    head = make_side(ctx, "head", 1, extra={"x/op": (2, "exact", "lower")})
    env = dict(os.environ, GITHUB_STEP_SUMMARY=os.path.join(ctx.tmp, "no", "such", "dir"))
    p = compare(ctx, base, head, "--github", "-q", env=env)
    assert p.returncode == 1, p.stderr
    assert "GITHUB_STEP_SUMMARY not written" in p.stderr
    assert any(x.startswith("::error ") for x in p.stdout.splitlines()), p.stdout


def test_interval_shown_with_its_ends_and_tiny_exact_changes(ctx):
    base = sampled_runs(ctx, "b", 8)
    head = sampled_runs(ctx, "h", 8, scale=1.25, seed=2)
    p = compare(ctx, base, head, "--color=never")
    assert p.returncode == 1, p.stderr
    row = [x for x in p.stdout.splitlines() if x.startswith("task-clock/op")][0]
    assert "±" not in p.stdout and "nan" not in p.stdout.lower()
    assert "% [+" in row, row
    base = make_side(ctx, "base", 1, extra={"x/op": (7, "exact", "lower")})
    head = make_side(ctx, "head", 1, extra={"x/op": (7.0000001, "exact", "lower")})
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, head, "-o", out)
    m = {x["name"]: x for x in ctx.load_json(out)["measures"]}["x/op"]
    assert "7 -> 7.0000001" in m["reason"], m["reason"]
    assert m["status"] == "regressed"


def test_negative_bound_demands_an_improvement(ctx):
    bounds = os.path.join(ctx.tmp, "bounds")
    with open(bounds, "w") as f:
        f.write("task-clock/op -5%\nclock_reads/op -1\n")
    base = make_side(ctx, "base", 10, seed=1)
    same = make_side(ctx, "same", 10, seed=2)
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, same, "--bounds", bounds, "-o", out)
    assert p.returncode == 1, p.stderr
    m = {x["name"]: x["status"] for x in ctx.load_json(out)["measures"]}
    assert m == {"task-clock/op": "regressed", "clock_reads/op": "regressed"}, m
    faster = make_side(ctx, "fast", 10, seed=3, reads=2, time_scale=0.8)
    p = compare(ctx, base, faster, "--bounds", bounds, "-o", out)
    assert p.returncode == 0, p.stderr


def test_straddler_within_bound_is_listed_not_inconclusive(ctx):
    # Estimate about +3% under the +5% bound; 6 noisy runs cannot rule
    # out more than +5%: listed, and the verdict still passes.
    base = sampled_runs(ctx, "b", 6, seed=11, cv=0.03)
    head = sampled_runs(ctx, "h", 6, scale=1.03, seed=12, cv=0.03)
    out = os.path.join(ctx.tmp, "v.json")
    md = os.path.join(ctx.tmp, "v.md")
    p = compare(ctx, base, head, "-o", out, "--markdown", md, "--color=never")
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    m = {x["name"]: x for x in v["measures"]}["task-clock/op"]
    assert m["status"] == "within" and m["not_excluded"].startswith("+"), m
    assert v["status"] == "pass", v["status"]
    assert "not enough runs to exclude: task-clock/op +" in p.stdout
    assert "not enough runs to exclude" in open(md).read()


def boundary_run(ctx, name, spec, boundary, reads_per_op, ops_source="request", **kw):
    request = {"spec": spec, "count": 100}
    if boundary is not None:
        request["boundary"] = boundary
    return write_run(os.path.join(ctx.tmp, name), {"clock_reads/op": (reads_per_op, "exact", "lower")},
                     build_id=name, reads=100 * reads_per_op,
                     doc_extra={"request": request, "ops_source": ops_source,
                                "clock_reads": {"total": 100 * reads_per_op,
                                                "in_requests": 100 * reads_per_op,
                                                "per_op": reads_per_op}}, **kw)


def test_runs_of_different_request_boundaries_are_refused(ctx):
    """5 reads per handle_request() against 1 per clock_gettime() call is
    no improvement: runs whose boundary differs as resolved (not as
    spelled), or whose ops_source differs, are refused with exit 2 naming
    the runs and the field, unless --allow-mismatch says it is meant; a
    mechanism mismatch stays refused even then."""
    main = {"kind": "func", "file": "/ci/base/srv", "main_executable": True, "symbol": "handle_request"}
    base = [boundary_run(ctx, f"base-{i}.json", "func:handle_request", main, 5) for i in range(2)]
    # Another spelling of the same function, of a build in another directory.
    same = dict(main, file="/ci/head/srv")
    head = [boundary_run(ctx, "same.json", "func:./srv:handle_request", same, 5)]
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, head, "-o", out)
    assert p.returncode == 0, p.stderr
    libc = {"kind": "func", "file": "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "main_executable": False, "symbol": "clock_gettime"}
    other = [boundary_run(ctx, "other.json", "func:libc:clock_gettime", libc, 1)]
    os.unlink(out)
    p = compare(ctx, base, other, "-o", out)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1, p.stderr
    assert "base-0.json" in p.stderr and "other.json" in p.stderr, p.stderr
    assert "request boundary" in p.stderr and "--allow-mismatch" in p.stderr, p.stderr
    assert not os.path.exists(out)
    p = compare(ctx, base, other, "-o", out, "--allow-mismatch")
    assert p.returncode == 0, p.stderr
    v = ctx.load_json(out)
    assert any("request boundary" in w and "--allow-mismatch" in w for w in v["warnings"]), v["warnings"]
    # Files written before request.boundary: compared by their spelling.
    old_base = [boundary_run(ctx, f"old-{i}.json", "func:handle_request", None, 5) for i in range(2)]
    p = compare(ctx, old_base, head, "-o", out)
    assert p.returncode == 0, p.stderr
    p = compare(ctx, old_base, [boundary_run(ctx, "old-libc.json", "func:libc:clock_gettime", None, 1)])
    assert p.returncode == 2 and "request boundary" in p.stderr, p.stderr
    # The same boundary, ops given by --ops on one side.
    ops = [boundary_run(ctx, "ops.json", "func:handle_request", main, 5, ops_source="--ops")]
    p = compare(ctx, base, ops)
    assert p.returncode == 2 and "ops_source" in p.stderr and "ops.json" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    p = compare(ctx, base, ops, "--allow-mismatch")
    assert p.returncode == 0, p.stderr
    # Never for a mechanism mismatch.
    bp = boundary_run(ctx, "bp.json", "func:handle_request", main, 5)
    with open(bp) as f:
        doc = json.load(f)
    doc["clock_reads"]["mechanism"] = "uprobe"
    with open(bp, "w") as f:
        json.dump(doc, f)
    p = compare(ctx, base, [bp], "--allow-mismatch")
    assert p.returncode == 2 and "counted with" in p.stderr, p.stderr


def test_values_no_run_can_hold_are_refused(ctx):
    """Negative reads/op, ops or totals, ops = 0 with per-op measures, and
    per-op values that disagree with the counts and ops: exit 2, one line
    naming the file and the member, before anything is judged."""
    base = [boundary_run(ctx, f"base-{i}.json", "func:h", None, 5) for i in range(2)]
    good = boundary_run(ctx, "good.json", "func:h", None, 5)
    out = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, base, [good], "-o", out)
    assert p.returncode == 0, p.stderr
    with open(good) as f:
        doc = json.load(f)
    cases = [
        ("measure", lambda d: d["measures"]["clock_reads/op"].update(value=-5),
         'measures["clock_reads/op"].value is negative'),
        ("ops", lambda d: d.update(ops=-3), "ops is negative"),
        ("total", lambda d: d["clock_reads"].update(total=-1), "clock_reads.total is negative"),
        ("count", lambda d: d["request"].update(count=-2), "request.count is negative"),
        ("zero", lambda d: d.update(ops=0), "ops is 0 but 1 measures are per op"),
        ("inreq", lambda d: d["clock_reads"].update(in_requests=300),
         "times ops 100 is 500, but clock_reads.in_requests is 300"),
        ("measure-per-op", lambda d: d["measures"]["clock_reads/op"].update(value=4),
         'measures["clock_reads/op"].value 4 times ops 100 is 400, but clock_reads.in_requests is 500'),
        ("perop", lambda d: d["clock_reads"].update(per_op=4),
         "clock_reads.per_op 4 times ops 100 is 400"),
    ]
    for name, change, message in cases:
        bad = json.loads(json.dumps(doc))
        change(bad)
        path = os.path.join(ctx.tmp, f"bad-{name}.json")
        with open(path, "w") as f:
            json.dump(bad, f)
        p = compare(ctx, base, [path], "-o", out)
        assert p.returncode == 2, (name, p.returncode, p.stdout, p.stderr)
        assert p.stderr.count("\n") == 1 and path in p.stderr and message in p.stderr, (name, p.stderr)
        p = ctx.run("report", path, "-o", os.path.join(ctx.tmp, "r.html"))
        assert p.returncode == 2 and message in p.stderr, (name, p.stderr)
    # Within rounding: 5.0004 reads/op over 100 ops is 500.04 reads.
    near = json.loads(json.dumps(doc))
    near["measures"]["clock_reads/op"]["value"] = 5.0004
    near["clock_reads"]["per_op"] = 5.0004
    with open(os.path.join(ctx.tmp, "near.json"), "w") as f:
        json.dump(near, f)
    p = compare(ctx, base, [os.path.join(ctx.tmp, "near.json")])
    assert p.returncode == 1 and "regressed" in p.stdout.lower(), (p.returncode, p.stderr)   # read, and judged


def cpp_symbol(size=20000):
    """A C++ function name as c++filt prints a deep template instantiation:
    <, >, &, *, commas and spaces, about `size` bytes."""
    t = "int"
    while len(t) < size:
        t = (f"std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
             f"std::allocator<char> >, std::vector<std::pair<{t}, double const*>&> >")
    name = f"void ns::Server<{t}>::handle(std::function<bool (char const&)>&&) const"
    assert len(name) >= size, len(name)
    return name


def run_with_symbol(ctx, side, i, sym):
    path = write_run(os.path.join(ctx.tmp, f"{side}-{i}.json"),
                     {"clock_reads/op": (3, "exact", "lower"),
                      "task-clock/op": (1e6 + i, "sampled", "lower"),
                      f"clock_reads@{sym}/op": (2, "exact", "lower")})
    with open(path) as f:
        doc = json.load(f)
    doc["call_sites"] = [{"function": sym, "file": "srv.cc", "line": 7, "inlined": [],
                          "via": "clock_gettime", "module": "/usr/bin/srv", "build_id": "b1",
                          "count": 200, "in_requests": 200, "per_op": 2.0}]
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_a_20_kb_cpp_symbol_survives_compare_and_report(ctx):
    # Strings are capped at 64 KiB when read: a real long C++ name is
    # well within, and comes out whole in verdict.json and both reports.
    import html as htmlmod
    sym = cpp_symbol()
    base = [run_with_symbol(ctx, "base", i, sym) for i in range(3)]
    head = [run_with_symbol(ctx, "head", i, sym) for i in range(3)]
    verdict, page = os.path.join(ctx.tmp, "v.json"), os.path.join(ctx.tmp, "c.html")
    p = compare(ctx, base, head, "-o", verdict, "--html", page)
    assert p.returncode == 0, p.stderr
    with open(verdict) as f:
        names = [m["name"] for m in json.load(f)["measures"]]
    assert f"clock_reads@{sym}/op" in names, [len(n) for n in names]
    with open(page) as f:
        assert htmlmod.escape(sym, quote=False) in f.read()
    page = os.path.join(ctx.tmp, "r.html")
    p = ctx.run("report", base[0], "-o", page)
    assert p.returncode == 0, p.stderr
    with open(page) as f:
        text = f.read()
    assert htmlmod.escape(sym, quote=False) in text or json.dumps(sym)[1:-1] in text


def peak_rss_mb(ctx, *args):
    """Runs clockprof with args in a child of its own: exit code, stderr,
    and the most memory it held (MB)."""
    import subprocess
    import sys
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.stderr.write(p.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code, ctx.clockprof, *args],
                       capture_output=True, text=True, timeout=120)
    rc, kb = p.stdout.split()
    return int(rc), p.stderr, int(kb) / 1024


def test_a_string_over_64_kib_is_refused_naming_file_and_field(ctx):
    ok = write_run(os.path.join(ctx.tmp, "ok.json"), {"clock_reads/op": (3, "exact", "lower")})
    with open(ok) as f:
        doc = json.load(f)
    cases = []
    for name, edit, field in [
            ("cmdline", lambda d: d["target"]["cmdline"].append("y" * 70000),
             "target.cmdline[1] is a string of 70000 bytes"),
            ("key", lambda d: d["measures"].update({"z" * 70000: d["measures"]["clock_reads/op"]}),
             "a key in measures (line 1) is a string of 70000 bytes"),
            # 200 MB: refused as it is read, never held whole (it took
            # 603 MB in compare and made a 629 MB page in report).
            ("huge", lambda d: d["target"].update({"comm": "x" * (200 << 20)}),
             "a string in target (line 1) is longer than 64 KiB")]:
        d = json.loads(json.dumps(doc))
        edit(d)
        path = os.path.join(ctx.tmp, f"{name}.json")
        with open(path, "w") as f:
            json.dump(d, f)
        cases.append((path, field))
    for path, field in cases:
        for args in (["compare", "--base", path, "--head", ok, "-o", os.path.join(ctx.tmp, "v.json")],
                     ["report", path, "-o", os.path.join(ctx.tmp, "r.html")]):
            rc, err, mb = peak_rss_mb(ctx, *args)
            assert rc == 2, (args, err)
            assert err.count("\n") == 1 and f"{path}: {field}" in err, err
            assert "at most 65536 bytes" in err, err
            assert mb < 64, (args, mb)
        assert not os.path.exists(os.path.join(ctx.tmp, "v.json"))
        assert not os.path.exists(os.path.join(ctx.tmp, "r.html"))
    os.unlink(cases[-1][0])


def test_a_verdict_with_a_string_over_64_kib_is_refused(ctx):
    verdict = os.path.join(ctx.tmp, "v.json")
    p = compare(ctx, make_side(ctx, "base", 3), make_side(ctx, "head", 3), "-o", verdict)
    assert p.returncode == 0, p.stderr
    with open(verdict) as f:
        doc = json.load(f)
    doc["warnings"] = ["w" * 70000]
    with open(verdict, "w") as f:
        json.dump(doc, f)
    p = ctx.run("report", verdict, "-o", os.path.join(ctx.tmp, "r.html"))
    assert p.returncode == 2, p.stderr
    assert f"{verdict}: warnings[0] is a string of 70000 bytes" in p.stderr, p.stderr
