#!/usr/bin/env python3
"""make bench: what the vDSO patch adds to one clock read, call sites
counted (the wrappers' rules written, as clockprof writes them). The
reference target makes rounds of 5 reads the vDSO serves itself on THREADS
threads: the mix (clock_gettime MONOTONIC twice and REALTIME,
gettimeofday, time), then each entry alone (5 call sites of it); each
pair of the rounds' timings is bare, patched, bare again, so that a drift
of the shared host's load cancels: a pair's cost is its patched time less
the mean of its two bare ones, and the bench prints the median of the
pairs' costs against the goal of issue 43 (+1.5 ns a read at most), with
its noise floor beside it: the same median taken of the bare-vs-bare
control (each pair's second bare time less its first) and the spread of
the pairs' costs. Beside them, pairs of the same reads with a minimal
count before each (the reference target's: the least a count by thread
and call site does, entered and left as the patch's path is, with no
wrapper's step): what any such count costs on this host, whose share of
the patch's cost no layout of its path removes. On one thread the target
is pinned to one CPU, its bare and patched rounds alike (os.sched_setaffinity, no tool); on more, its
threads share the host's CPUs as they would. With --clockprof, beside
what the uprobe mechanism adds to the same reads. A request boundary (-r) adds nothing
to a read: it is its own probe, per request. Prints figures only: a
benchmark, not a test."""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_bench import Ctx, Target, Tool  # noqa: E402


ENTRIES = ["mix", "clock_gettime", "gettimeofday", "time"]
GOAL_NS = 1.5


def cpu_ns(pid):
    """The target's CPU time so far, every thread summed (schedstat: ns)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def timed_go(target, k):
    """CPU time of one go, not wall time: threads share the CPUs."""
    t0 = cpu_ns(target.pid)
    target.go(k)
    return (cpu_ns(target.pid) - t0) / 1e9


class UprobeTool:
    """clockprof attached with --mechanism uprobe (reads only), live once
    400 rounds of the target cost it 1 us a read (a trap costs 9-26 us
    here; a round trip of the target's go, spread over its 2,000 reads,
    far less): its probes trap. (The kernel's [uprobes] page says
    nothing: it stays from an earlier attach.) Not live within 5 s and
    counting nothing: its probes do not see these reads (gettimeofday
    called through a pointer here)."""

    def __init__(self, clockprof, target, threads):
        self.out = tempfile.NamedTemporaryFile(suffix=".json")
        self.p = subprocess.Popen([clockprof, "attach", "-q", "-e", "none", "--mechanism", "uprobe",
                                   "-o", self.out.name, str(target.pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        self.live = True
        while timed_go(target, 400) / (400 * 5 * threads) * 1e9 < 1000:
            if time.monotonic() > deadline or self.p.poll() is not None:
                self.live = False
                break

    def detach(self):
        """The reads it counted."""
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=30)
        with open(self.out.name) as f:
            total = json.load(f)["clock_reads"]["total"]
        self.out.close()
        return total


def uprobe_cost(a, target, bare_ns):
    """What the uprobe mechanism adds to the same reads, beside the patch's
    (a few alternated pairs of fewer rounds: each read is a trap), in ns;
    None when its probes do not see them."""
    rounds, added = max(a.rounds // 200, 100), []
    for _ in range(3):
        tool = UprobeTool(a.clockprof, target, a.threads)
        t = timed_go(target, rounds) if tool.live else 0
        if not tool.detach() and not tool.live:
            return None
        if not tool.live:
            raise RuntimeError("clockprof --mechanism uprobe counted reads but never went live")
        added.append(t / (rounds * 5 * a.threads) * 1e9 - bare_ns)
    return statistics.median(added)


def pin(pid, cpu):
    """Every thread of pid on cpu alone (threads started later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), {cpu})


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def minimal_counts(target, on):
    """The target's reads preceded by a minimal count (patch_target.c's
    minimal_count: what the least count by thread and call site does), or
    no more."""
    target.p.stdin.write(f"minimal {int(on)}\n")
    target.p.stdin.flush()
    assert target.p.stdout.readline().strip() == "minimal"


def timed_pairs(a, target, start, stop):
    """Per pair, in ns of CPU per read: bare, counted (between start() and
    stop(its result)), bare again."""
    reads = a.rounds * 5 * a.threads
    per_read = lambda: timed_go(target, a.rounds) / reads * 1e9  # noqa: E731
    pairs = []
    for _ in range(a.pairs):
        b0 = per_read()
        counting = start()
        p = per_read()
        stop(counting)
        pairs.append((b0, p, per_read()))
    return pairs


def added(pairs):
    """Each pair's cost: its counted time less the mean of its two bare
    ones."""
    return [p - (b0 + b1) / 2 for b0, p, b1 in pairs]


def spread(xs):
    lo, hi = quartiles(xs)
    return f"{statistics.median(xs):+.2f} ns (quartiles {lo:+.2f} {hi:+.2f})"


def measure(ctx, a, entry):
    mode = "fast" if entry == "mix" else f"fast-{entry}"
    target = Target(ctx.target("patch_target"), a.threads, mode)
    try:
        if a.threads == 1:
            pin(target.pid, max(os.sched_getaffinity(0)))
        target.go(a.rounds // 10)
        pairs = timed_pairs(a, target, lambda: Tool(ctx, target.pid), lambda t: t.detach())
        minimal = timed_pairs(a, target, lambda: minimal_counts(target, True),
                              lambda _: minimal_counts(target, False))
        b = statistics.median(x for x, _, y in pairs for x in (x, y))
        u = uprobe_cost(a, target, b) if a.clockprof else False
    finally:
        target.quit()
    beside = ("" if u is False else "; the uprobe mechanism sees none of these reads" if u is None
              else f"; the uprobe mechanism +{u / 1000:.1f} us")
    print(f"vdso patch, {entry} reads, {a.threads} thread(s), {a.pairs} pairs (bare, patched, bare): "
          f"{b:.2f} ns of CPU per read bare; patched {spread(added(pairs))} "
          f"(goal +{GOAL_NS} at most); a minimal count by thread and call site "
          f"{spread(added(minimal))}; noise floor, bare vs bare: "
          f"{spread([b1 - b0 for b0, _, b1 in pairs])}{beside}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=400000)
    ap.add_argument("--pairs", type=int, default=21)
    ap.add_argument("--entry", choices=["each", *ENTRIES], default="each",
                    help="the reads timed: each in turn (default), or one")
    ap.add_argument("--clockprof", default="",
                    help="also time the same reads under this clockprof's uprobe mechanism")
    a = ap.parse_args()
    ctx = Ctx(a.targets)
    for entry in ENTRIES if a.entry == "each" else [a.entry]:
        measure(ctx, a, entry)


if __name__ == "__main__":
    main()
