#!/usr/bin/env python3
"""make bench: what the vDSO patch adds to one clock read, call sites
counted (the wrappers' rules written, as clockprof writes them). The
reference target makes rounds of 5 reads the vDSO serves itself on THREADS
threads: the mix (clock_gettime MONOTONIC twice and REALTIME,
gettimeofday, time), then each entry alone (5 call sites of it); rounds
are timed unpatched and patched, alternated, and the medians compared,
against the goal of issue 26 (+1.5 ns a read at most). A request boundary
(-r) adds nothing to a read: it is its own probe, per request. Prints
figures only: a benchmark, not a test."""
import argparse
import os
import sys
import statistics
import subprocess

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
    finally:
        target.quit()
    # CPU time per read, over every thread's reads.
    reads = a.rounds * 5 * a.threads
    b, p = statistics.median(bare) / reads * 1e9, statistics.median(patched) / reads * 1e9
    print(f"vdso patch, {entry} reads, {a.threads} thread(s), median of {a.pairs} alternated pairs: "
          f"{b:.2f} ns of CPU per read bare, {p:.2f} patched (+{p - b:.2f} ns, {p / b:.3f}x; "
          f"goal +{GOAL_NS} at most)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=400000)
    ap.add_argument("--pairs", type=int, default=11)
    ap.add_argument("--entry", choices=["each", *ENTRIES], default="each",
                    help="the reads timed: each in turn (default), or one")
    a = ap.parse_args()
    ctx = Ctx(a.targets)
    for entry in ENTRIES if a.entry == "each" else [a.entry]:
        measure(ctx, a, entry)


if __name__ == "__main__":
    main()
