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
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_bench import Ctx, Target, Tool  # noqa: E402


def timed_go(target, k):
    t0 = time.perf_counter()
    target.go(k)
    return time.perf_counter() - t0


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
    # Wall time per read of one thread (the threads run side by side).
    per_read = a.rounds * 5
    b, p = statistics.median(bare) / per_read * 1e9, statistics.median(patched) / per_read * 1e9
    print(f"vdso patch, {a.threads} thread(s), median of {a.pairs} alternated pairs: "
          f"{b:.2f} ns per read bare, {p:.2f} patched (+{p - b:.2f} ns, {p / b:.3f}x)")


if __name__ == "__main__":
    main()
