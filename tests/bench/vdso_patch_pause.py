#!/usr/bin/env python3
"""make bench: how long the vDSO patch holds one thread of a busy target to
attach (from its stop to its release), over 50 cycles, on targets of 8 and 200 threads that
read the clock without end (tests/targets/patch_target check). Prints p50
and max of each; a benchmark, never a test."""
import argparse
import os
import sys
import statistics

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_bench import Ctx, Target, Tool  # noqa: E402


def pauses(ctx, threads, cycles):
    target = Target(ctx.target("patch_target"), threads, "check")
    attach = []
    try:
        for _ in range(cycles):
            tool = Tool(ctx, target.pid)
            words = tool.attached.split()
            attach.append(float(words[words.index("pause_ms") + 1]))
            tool.detach()
    finally:
        target.quit()
    return attach


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", required=True)
    ap.add_argument("--cycles", type=int, default=50)
    a = ap.parse_args()
    for threads in (8, 200):
        p = pauses(Ctx(a.targets), threads, a.cycles)
        print(f"vdso patch attach pause, {threads} busy threads, {a.cycles} cycles: "
              f"p50 {statistics.median(p):.3f} ms, max {max(p):.3f} ms (one thread held; the others run on)")


if __name__ == "__main__":
    main()
