#!/usr/bin/env python3
"""make bench: what the vDSO patch adds to one clock read, call sites
counted (the wrappers' rules written, as clockprof writes them). The
reference target makes rounds of 5 reads the vDSO serves itself on THREADS
threads: the mix (clock_gettime MONOTONIC twice and REALTIME,
gettimeofday, time), then each entry alone (5 call sites of it); rounds
are timed unpatched and patched, alternated, and the medians compared,
against the goal of issue 26 (+1.5 ns a read at most); with --clockprof, beside what the uprobe
mechanism adds to the same reads. A request boundary (-r) adds nothing
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


def measure(ctx, a, entry):
    mode = "fast" if entry == "mix" else f"fast-{entry}"
    target = Target(ctx.target("patch_target"), a.threads, mode)
    bare, patched = [], []
    try:
        target.go(a.rounds // 10)
        for _ in range(a.pairs):
            bare.append(timed_go(target, a.rounds))
            tool = Tool(ctx, target.pid)
            patched.append(timed_go(target, a.rounds))
            tool.detach()
        # CPU time per read, over every thread's reads.
        reads = a.rounds * 5 * a.threads
        b, p = statistics.median(bare) / reads * 1e9, statistics.median(patched) / reads * 1e9
        u = uprobe_cost(a, target, b) if a.clockprof else False
    finally:
        target.quit()
    beside = ("" if u is False else "; the uprobe mechanism sees none of these reads" if u is None
              else f"; the uprobe mechanism +{u / 1000:.1f} us")
    print(f"vdso patch, {entry} reads, {a.threads} thread(s), median of {a.pairs} alternated pairs: "
          f"{b:.2f} ns of CPU per read bare, {p:.2f} patched (+{p - b:.2f} ns, {p / b:.3f}x; "
          f"goal +{GOAL_NS} at most){beside}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=400000)
    ap.add_argument("--pairs", type=int, default=11)
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
