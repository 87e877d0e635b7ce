"""--interval (issue 29, item 1): one clockprof.interval/1 record per
interval as a JSON line, the last partial interval too, so that the records
of a run add up to its run.json exactly. reads_target does N requests of K
clock_gettime reads and exits (`run` ends at its exit), so the total is
known by construction: N * K reads, N - 1 complete requests."""
import json
import os
import signal
import subprocess

N = 1500        # requests; one per ms at most: ~1.5 s, several intervals
K = 2           # clock_gettime reads per request
INTERVAL = "0.3s"


def records(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return [json.loads(line) for line in lines]


def check_sequence(recs):
    """Consecutive intervals from 0, each starting where the last ended,
    the last (and only it) marked so."""
    assert len(recs) >= 3, f"{len(recs)} records for a ~1.5 s run at {INTERVAL}"
    for i, r in enumerate(recs):
        assert r["schema"] == "clockprof.interval/1", r["schema"]
        iv = r["interval"]
        assert iv["index"] == i, iv
        assert iv["last"] is (i == len(recs) - 1), iv
        if i:
            assert iv["start_s"] == recs[i - 1]["interval"]["end_s"], (recs[i - 1], iv)
        assert abs(iv["seconds"] - (iv["end_s"] - iv["start_s"])) < 1e-9, iv
        if not iv["last"]:
            # Due every 0.3 s from the window's start: never early; a late
            # one (a busy host) is followed by a shorter one, and the
            # slots a stall missed are skipped, not fired back to back.
            assert 0 < iv["seconds"] < 10.0, iv  # (a loaded host stalls)
            assert iv["end_s"] >= 0.3 * (i + 1) - 0.01, iv
            assert r["complete"] is False


def test_interval_records_add_up_to_the_run(ctx):
    target = ctx.target("reads_target")
    for mech in ("patch", "uprobe"):
        out = os.path.join(ctx.tmp, f"run-{mech}.json")
        lines = os.path.join(ctx.tmp, f"intervals-{mech}.jsonl")
        proc = ctx.run("run", "-q", "-o", out, "--mechanism", mech, "-r", "func:handle_request",
                       "--interval", INTERVAL, "--interval-output", lines,
                       "--", target, "clock_gettime", K, N)
        assert proc.returncode == 0, f"{mech}: exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        recs = records(lines)
        check_sequence(recs)
        total = sum(r["clock_reads"]["total"] for r in recs)
        assert total == N * K == run["clock_reads"]["total"], (mech, total)
        # Sites are read a moment after the totals mid-run: an interval's
        # sites may be a few reads ahead of its total, never the run's.
        sites = sum(s["count"] for r in recs for s in r["call_sites"])
        assert sites == N * K, (mech, sites)
        requests = sum(r["request"]["count"] for r in recs)
        assert requests == N - 1 == run["request"]["count"], (mech, requests)
        assert sum(r["clock_reads"]["in_requests"] for r in recs) == (N - 1) * K


def test_interval_lines_default_to_stdout(ctx):
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-q", "-o", out, "--interval", INTERVAL, "--",
                   ctx.target("reads_target"), "clock_gettime", K, N)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in proc.stdout.splitlines()]
    check_sequence(recs)
    assert sum(r["clock_reads"]["total"] for r in recs) == N * K


def test_interval_output_appends(ctx):
    lines = os.path.join(ctx.tmp, "intervals.jsonl")
    with open(lines, "w") as f:
        f.write('{"kept": true}\n')
    proc = ctx.run("run", "-q", "-o", os.path.join(ctx.tmp, "run.json"), "--interval", "1s",
                   "--interval-output", lines, "--", ctx.target("reads_target"),
                   "clock_gettime", K, 200)
    assert proc.returncode == 0, proc.stderr
    recs = records(lines)
    assert recs[0] == {"kept": True}
    assert sum(r["clock_reads"]["total"] for r in recs[1:]) == 200 * K


def test_interval_bad_input(ctx):
    target = ctx.target("reads_target")
    cases = [
        (["--interval", "soon"], "soon"),
        (["--interval", "0"], "0"),
        (["--interval-output", "-"], "--interval-output needs --interval"),
        (["--interval", "1s", "--interval-output", "-", "-o", "-"], "only one output"),
    ]
    for opts, said in cases:
        proc = ctx.run("run", "-q", *opts, "--", target, "clock_gettime", K, 10)
        assert proc.returncode == 2, (opts, proc.returncode, proc.stderr)
        err = proc.stderr.strip().splitlines()
        assert len(err) == 1 and said in err[0], (opts, proc.stderr)


def test_interval_with_duration_does_not_split_the_window(ctx):
    """-d with -r would split the window into a clock and a counter half;
    with --interval counters share it, and -d is the run's end."""
    out = os.path.join(ctx.tmp, "run.json")
    lines = os.path.join(ctx.tmp, "intervals.jsonl")
    proc = ctx.run("run", "-q", "-o", out, "-d", "1s", "-r", "func:handle_request",
                   "-e", "task-clock", "--interval", INTERVAL, "--interval-output", lines,
                   "--", ctx.target("reads_target"), "clock_gettime", K, 0)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    assert run["end_reason"] == "duration", run["end_reason"]
    # shared: with every probe, or (the vDSO patch closing the requests in
    # the target) with nothing that traps
    shared = "all, none trapping (counted in the target)" if run["probe"]["hits"] == 0 else \
        "all (shared with clock reads)"
    assert run["windows"]["counters"]["probes"] == shared, (run["windows"], run["probe"])
    recs = records(lines)
    check_sequence(recs)
    assert sum(r["clock_reads"]["total"] for r in recs) == run["clock_reads"]["total"]
    assert sum(r["request"]["count"] for r in recs) == run["request"]["count"]
    assert all(r["windows"]["counters"]["measured"] for r in recs), recs[0]["windows"]


def test_interval_reader_gone_ends_nothing(ctx):
    # The lines go to stdout (the default); its reader leaves after the
    # first (`| head -1`). clockprof says so once and goes on: the window
    # runs its length and run.json is written whole (not SIGPIPE, exit 141,
    # and nothing written).
    out = os.path.join(ctx.tmp, "run.json")
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-d", "2", "-o", out, "--interval", "0.2s",
                             "--", ctx.target("reads_target"), "clock_gettime", "2", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.communicate(timeout=60)[1].decode()
    assert json.loads(first)["interval"]["index"] == 0
    assert proc.returncode == 0, err
    assert "no more interval records" in err, err
    assert ctx.load_json(out)["clock_reads"]["total"] > 0


def what_a_shell_holds(*prefix):
    """The descriptors a shell started by prefix holds and the signals it
    ignores (listed on stderr)."""
    proc = subprocess.run([*prefix, "sh", "-c", "ls /proc/$$/fd >&2; grep SigIgn /proc/$$/status >&2"],
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL))
    assert proc.returncode == 0, proc.stderr
    return sorted(line for line in proc.stderr.splitlines()
                  if line.isdigit() or line.startswith("SigIgn"))


def test_interval_output_is_not_the_commands(ctx):
    # stdout's copy for the lines, and the one kept while the command's
    # stdout is diverted, are clockprof's: a daemon the command starts
    # must not hold a pipe open that `clockprof run ... | jq` waits on.
    # And SIGPIPE, which clockprof ignores, is the command's as usual.
    bare = what_a_shell_holds()
    assert what_a_shell_holds(ctx.clockprof, "run", "-q", "--interval", "1s", "--") == bare
