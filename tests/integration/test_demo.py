"""make demo and the README's sample output: the README shows a real capture
of tests/demo.sh, and this test runs the demo and compares the two line by
line with the host's numbers taken out (labels, units and notation must
match; numbers, the bar of the histogram and warnings may differ), so the
README cannot drift from what the code prints. Also: the demo says what its
target is and that 7 reads per request is the right answer, and every
unsupported counter is named on one line; with --anatomy it names exactly
the 2 reads that could reuse an earlier value, by construction, and the
lines of the reads they could reuse."""
import json
import os
import re
import subprocess

from common import site_line

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MARK = "<!-- make demo output: a real capture, kept in step by tests/integration/test_demo.py -->"
HARDWARE = re.compile(r"^(instructions|branches|branch-misses|cycles):[uk] ")


def normalized(text, out_dir):
    """The lines whose words the code decides: numbers, bars and the
    output directory masked, host-dependent lines (warnings, hardware
    counters this host may or may not have) left out."""
    lines = []
    for line in text.replace(out_dir, "build/demo").splitlines():
        line = re.sub(r"\d+(\.\d+)?", "N", line)
        line = re.sub(r"#+", "#", line)
        line = " ".join(line.split())
        if line.startswith(("warning:", "unsupported (")) or HARDWARE.match(line):
            continue
        lines.append(line)
    # call sites, and reads that could reuse another, with the same figure
    # come in either order (ranked by the reads of the whole window, which
    # differ by a partial request, or of the sample)
    for title in ("top call sites", "could reuse ("):
        start = next((i + 1 for i, line in enumerate(lines) if line.startswith(title)), None)
        if start is not None:
            end = next((i for i in range(start, len(lines))
                        if not lines[i].startswith("N/op ")), len(lines))
            lines[start:end] = sorted(lines[start:end])
    return lines


def readme_block():
    text = open(os.path.join(ROOT, "README.md")).read()
    assert MARK in text, "README.md has no demo capture marked " + MARK
    block = text.split(MARK, 1)[1].split("```", 2)[1]
    return block.split("\n", 1)[1]  # past the fence's language tag


EXCERPT = "<!-- excerpt of the make demo output below, kept in step by " \
    "tests/integration/test_demo.py -->"


def test_readme_excerpt_is_of_the_capture(ctx):
    """The README's first screen shows the demo's could-reuse list: each
    of its lines is a line of the capture below it, word for word."""
    text = open(os.path.join(ROOT, "README.md")).read()
    assert EXCERPT in text and text.index(EXCERPT) < text.index(MARK), "no excerpt above"
    excerpt = text.split(EXCERPT, 1)[1].split("```", 2)[1].split("\n", 1)[1]
    capture = readme_block().splitlines()
    lines = [line for line in excerpt.splitlines() if line.strip()]
    assert lines and lines[0].startswith("could reuse ("), lines
    assert all(line in capture for line in lines), lines


def run_demo(ctx):
    out = os.path.join(ctx.tmp, "demo")
    proc = subprocess.run(["sh", os.path.join(ROOT, "tests", "demo.sh"), ctx.clockprof,
                           ctx.targets, out], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    # the summary is on stdout, the rest on stderr: the terminal shows them
    # interleaved as the README does
    return proc, out


def test_readme_sample_is_the_demo_output(ctx):
    proc, out = run_demo(ctx)
    assert proc.returncode == 0, proc.stderr
    before, _, after = proc.stderr.partition("$ clockprof run")
    shown = before + "$ clockprof run" + after.split("\n", 1)[0] + "\n" + proc.stdout + \
        "\n" + after.split("\n", 1)[1].lstrip("\n")
    got, want = normalized(shown, out), normalized(readme_block(), out)
    assert got == want, "README's demo output differs from make demo's:\n" + "\n".join(
        f"{'=' if a == b else '!'} README: {b}\n  demo:   {a}" for a, b in zip(got, want)
        if a != b) + f"\n({len(got)} lines from the demo, {len(want)} in the README)"


def test_demo_counts_in_the_target(ctx):
    """make demo's 7.000/op comes from the vDSO patch, the default, unless
    the run says why not (a host where the patch cannot be used)."""
    proc, out = run_demo(ctx)
    assert proc.returncode == 0, proc.stderr
    run = json.load(open(os.path.join(out, "run.json")))
    assert run["clock_reads"]["per_op"] == 7.0, run["clock_reads"]
    assert run["clock_reads"]["mechanism"] == "patch" or run["probe"]["fallback_reason"], run["probe"]


def test_demo_explains_itself(ctx):
    proc, out = run_demo(ctx)
    assert proc.returncode == 0, proc.stderr
    assert "reads the clock 7 times" in proc.stderr and "right" in proc.stderr, proc.stderr
    assert "result: 7.000 reads per request, as constructed" in proc.stderr, proc.stderr
    assert "2 of them\ncould reuse the value of the read just before" in proc.stderr, proc.stderr
    summary = proc.stdout
    # one line per reason for the counters this host cannot count
    reasons = re.findall(r"^\s+unsupported \((.*)\):", summary, re.M)
    assert len(reasons) == len(set(reasons)), summary
    assert not re.search(r"^\s+\S+\s+unsupported:", summary, re.M), summary
    # every per-op counter figure has its unit
    for line in summary.splitlines():
        if re.search(r"\d/op", line) and "task-clock" in line:
            assert "ns/op" in line, line
    assert '"A > B": B inlined into A' in summary, summary
    # nothing traps: the reads and the requests are counted in the target,
    # and the counters share the window, measuring the program alone
    assert "requests closed in the target, none per request" in summary, summary
    assert "shared with the counting, in the target: nothing trapped" in summary, summary
    assert re.search(r"^probe hits \(traps\) 0 ", summary, re.M), summary
    assert "with the reads outside complete requests" in summary, summary


def test_demo_names_the_reads_that_could_reuse(ctx):
    """--anatomy on the demo: exactly 2 reads could reuse an earlier value,
    by construction, and the summary names both lines of each; none
    other (the last read, after a syscall, is not one). The times are the
    host's: only the reads are checked."""
    proc, out = run_demo(ctx)
    assert proc.returncode == 0, proc.stderr
    run = json.load(open(os.path.join(out, "run.json")))
    anatomy = run["anatomy"]
    if run["probe"]["fallback_reason"]:  # no patch here: no gap is the program's
        assert not anatomy["judged"] and anatomy["not_judged_because"], anatomy
        return
    assert anatomy["judged"] and anatomy["sampled_requests"] > 0, anatomy
    line = lambda marker: site_line("callsites_target.c", marker)  # noqa: E731
    reads = anatomy["reads"]
    first = anatomy["shapes"][0]["steps"][0]["read"]  # the request's first read: inline1
    assert (reads[first]["function"], reads[first]["line"]) == ("handle_request", line("now_ns"))
    assert reads[first]["inlined_at"]["line"] == line("inline1"), reads[first]

    def name(i):  # function, line, whether it is inline1
        return (reads[i]["function"], reads[i]["line"], i == first)
    got = sorted((name(e["read"]), name(e["reuses"])) for e in anatomy["reusable"])
    wall = ("read_wall_twice", line("read_wall_twice"), False)
    assert got == [(("read_mono", line("read_mono"), False), ("handle_request", line("now_ns"), True)),
                   (wall, wall)], got
    assert anatomy["reusable_per_op"] == 2.0, anatomy["reusable"]
    assert run["measures"]["clock_reads_reusable/op"]["value"] == 2.0, run["measures"]
    f = "tests/targets/callsites_target.c"
    entries = sorted(re.sub(r", read .*", "", line_.strip().split("  ", 1)[1])
                     for line_ in proc.stdout.split("could reuse (", 1)[1].split("\n")[1:]
                     if "/op  " in line_)
    assert entries == [f"{f}:{line('read_mono')} (read_mono, CLOCK_MONOTONIC): could reuse {f}:{line('now_ns')} "
                       f"(inlined at line {line('inline1')})",
                       f"{f}:{line('read_wall_twice')} (read_wall_twice, gettimeofday): could reuse "
                       f"{f}:{line('read_wall_twice')}"], proc.stdout
    assert re.search(r"^  2\.000 reads/op could go in all ", proc.stdout, re.M), proc.stdout
    assert "result: 2.000 of them could reuse an earlier value, as constructed" in proc.stderr
