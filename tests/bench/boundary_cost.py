#!/usr/bin/env python3
"""make bench: what a func: request boundary closed inside the target adds
to a request (the vDSO patch's redirect: a jump in the function, its
trampoline, the close; lib/probe/mech/patch/redirect_plan.h). The
reference target makes rounds of 5 reads the vDSO serves itself, each
round one call of one_round, the boundary: each round is one request of 5
reads. Rounds are timed patched without a boundary and patched with one,
alternated, and the medians compared, against the goal of issue 27 (+5 ns
a request at most); beside what a uprobe boundary costs (9-26 us a hit on
these VMs). Prints figures only: a benchmark, not a test."""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_bench import Ctx, Target, Tool  # noqa: E402
from vdso_patch_cost import timed_go  # noqa: E402

GOAL_NS = 5.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", required=True)
    ap.add_argument("--rounds", type=int, default=400000)
    ap.add_argument("--pairs", type=int, default=11)
    a = ap.parse_args()
    ctx = Ctx(a.targets)
    target = Target(ctx.target("patch_target"), 1, "fast")
    reads, closed, requests = [], [], None
    try:
        target.go(a.rounds // 10)
        for _ in range(a.pairs):
            tool = Tool(ctx, target.pid)
            reads.append(timed_go(target, a.rounds))
            tool.detach()
            tool = Tool(ctx, target.pid, boundary="one_round")
            closed.append(timed_go(target, a.rounds))
            requests = tool.read("requests")
            tool.detach()
    finally:
        target.quit()
    r, c = (statistics.median(x) / a.rounds * 1e9 for x in (reads, closed))
    print(f"func: boundary closed in the target, 1 thread, requests of 5 reads, median of {a.pairs} "
          f"alternated pairs: {r:.2f} ns of CPU per request with the reads counted, {c:.2f} with "
          f"the boundary too (+{c - r:.2f} ns a request; goal +{GOAL_NS} at most); last pair "
          f"closed {requests.get('requests', 0)} requests, {requests.get('hist5', 0)} of 5 reads")


if __name__ == "__main__":
    main()
