#!/usr/bin/env python3
"""make bench: what the vDSO patch adds to one clock read. The reference
target makes rounds of 5 reads the vDSO serves itself (clock_gettime
MONOTONIC twice and REALTIME, gettimeofday, time) on THREADS threads; rounds are
timed unpatched and patched, alternated, and the medians compared. Prints
figures only: a benchmark, not a test."""
import argparse
import os
import sys
import statistics
import subprocess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_bench import Ctx, Target, Tool  # noqa: E402


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=400000)
    ap.add_argument("--pairs", type=int, default=10)
    a = ap.parse_args()
    ctx = Ctx(a.targets)
    target = Target(ctx.target("patch_target"), a.threads, "fast")
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
    print(f"vdso patch, {a.threads} thread(s), median of {a.pairs} alternated pairs: "
          f"{b:.2f} ns of CPU per read bare, {p:.2f} patched (+{p - b:.2f} ns, {p / b:.3f}x)")


if __name__ == "__main__":
    main()
