#!/usr/bin/env python3
"""make bench: clockprof's memory over a long --interval run against a
target that never settles (tests/targets/churn_target.c: a new dlopened
library each minute, ~100 threads born and gone a second, a child process
a second). Issue 29's goal: clockprof's RSS at the end (minute 10) <= its
RSS at minute 1 + 1 MiB. --duration scales the run and its marks (the
first mark at a tenth of it, a library every tenth); a benchmark, never a
test: it prints its figures and whether the goal was met."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--duration", type=float, default=600, help="s (default 600: 10 minutes)")
    ap.add_argument("--interval", default="10s")
    a = ap.parse_args()
    mark = a.duration / 10  # "minute 1" of a 10-minute run
    tmp = tempfile.mkdtemp(prefix="churn-")
    target = subprocess.Popen([os.path.join(a.targets, "churn_target"),
                               os.path.join(a.targets, "libdl_clock.so"), str(mark), tmp],
                              stdout=subprocess.PIPE, text=True)
    tool = None
    try:
        target.stdout.readline()  # "ready"
        lines = os.path.join(tmp, "intervals.jsonl")
        tool = subprocess.Popen([a.clockprof, "attach", "-q", "-p", str(target.pid),
                                 "-o", os.path.join(tmp, "run.json"), "--interval", a.interval,
                                 "--interval-output", lines],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        first = peak = None
        while time.monotonic() - t0 < a.duration:
            time.sleep(1)
            if tool.poll() is not None:
                sys.exit(f"churn bench: clockprof ended early ({tool.returncode}): "
                         f"{tool.stderr.read().strip()}")
            kib = rss_kib(tool.pid)
            peak = max(peak or 0, kib)
            if first is None and time.monotonic() - t0 >= mark:
                first = kib
        last = rss_kib(tool.pid)
        tool.send_signal(2)
        tool.wait(timeout=120)
        with open(lines) as f:
            records = sum(1 for _ in f)
        ok = last <= first + 1024
        print(f"churn --interval {a.interval}, {a.duration:.0f} s (a library every {mark:.0f} s, "
              f"~100 threads/s, a child/s): clockprof RSS at {mark:.0f} s {first} KiB, "
              f"at {a.duration:.0f} s {last} KiB ({last - first:+d} KiB; goal <= +1024), "
              f"peak {peak} KiB, {records} records: {'met' if ok else 'NOT met'}")
    finally:
        if tool and tool.poll() is None:
            tool.kill()
        target.kill()
        target.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
