#!/usr/bin/env python3
"""make bench: redis GET throughput while clockprof counts its clock reads
(`attach`): reads only, with the vDSO patch and with uprobes, and with the
request boundary func:processCommand too, closed inside redis by the vDSO
patch (nothing traps), or syscall:write (closed at glibc's write() with
the patch; at sys_enter with uprobes), against redis alone, in alternated rounds on one
redis-server on loopback. Prints the median of the per-round ratios. A
benchmark, not a test: it prints figures and never fails on them."""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import time


def gets_per_s(port, n):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get", "-n", str(n),
                          "-c", "20", "-q"], capture_output=True, text=True).stdout
    m = re.search(r"([0-9.]+) requests per second", out)
    return float(m.group(1)) if m else 0.0


MODES = {  # label: how clockprof attaches
    "patch, reads only": ["--mechanism", "patch"],
    "uprobe, reads only": ["--mechanism", "uprobe"],
    "patch, -r func:processCommand": ["--mechanism", "patch", "-r", "func:processCommand"],
    # closed at glibc's write(), sys_enter traced for the check's first second
    "patch, -r syscall:write": ["--mechanism", "patch", "-r", "syscall:write"],
    "uprobe, -r syscall:write": ["--mechanism", "uprobe", "-r", "syscall:write"],
}


def attached(clockprof, pid, opts, port, n):
    cp = subprocess.Popen([clockprof, "attach", "-q", "-e", "none", *opts,
                           "-o", os.devnull, str(pid)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    time.sleep(0.4)
    rate = gets_per_s(port, n)
    cp.send_signal(signal.SIGINT)
    cp.wait(timeout=30)
    return rate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--requests", type=int, default=100000)
    a = ap.parse_args()
    if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
        print("redis: not installed (make test-deps): skipped")
        return
    port = 7398
    srv = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                            "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        ratios = {mode: [] for mode in MODES}
        for _ in range(a.rounds):
            for mode, opts in MODES.items():  # each against redis alone just before
                bare = gets_per_s(port, a.requests)
                ratios[mode].append(attached(a.clockprof, srv.pid, opts, port, a.requests) / bare)
        for mode, r in ratios.items():
            print(f"redis GET attached ({mode}) / alone: median {statistics.median(r):.3f} "
                  f"of {a.rounds} alternated pairs (range {min(r):.2f}-{max(r):.2f})")
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
