#!/usr/bin/env python3
"""make bench: redis GET throughput while clockprof counts its clock reads
(`attach`): reads only, with the vDSO patch and with uprobes, and with the
request boundary func:processCommand too, closed inside redis by the vDSO
patch (nothing traps), or syscall:write (closed at glibc's write() with
the patch; at sys_enter with uprobes), and func:processCommand with
--anatomy (issue #45, item 6: goal >= 0.95x redis alone), against redis
alone, in alternated rounds on one redis-server on loopback. Prints the
median of the per-round ratios, and for --anatomy how many requests the
last round sampled (a run that collected nothing would measure nothing). A
benchmark, not a test: it prints figures and never fails on them."""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
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
    # the reads of sampled requests logged in order, sys_enter and
    # sched_switch traced for them (docs/anatomy.md)
    "patch, -r func:processCommand --anatomy": ["--mechanism", "patch", "-r", "func:processCommand",
                                                "--anatomy"],
}
GOALS = {"patch, -r func:processCommand --anatomy": 0.95}  # attached / alone, at least


def sampled(run_file):
    """The anatomy a run file says was collected: "N of M requests sampled"."""
    try:
        with open(run_file) as f:
            a = json.load(f).get("anatomy")
    except (OSError, ValueError):
        return "no run file"
    if not a:
        return "no anatomy in the run file"
    judged = "" if a["judged"] else f", not judged: {a['not_judged_because']}"
    return f"{a['sampled_requests']} of {a['requests']} requests sampled{judged}"


def attached(clockprof, pid, opts, port, n, out=os.devnull):
    cp = subprocess.Popen([clockprof, "attach", "-q", "-e", "none", *opts,
                           "-o", out, str(pid)], stdout=subprocess.DEVNULL,
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
    tmp = tempfile.mkdtemp(prefix="clockprof-redis-")
    try:
        time.sleep(0.5)
        ratios = {mode: [] for mode in MODES}
        for _ in range(a.rounds):
            for mode, opts in MODES.items():  # each against redis alone just before
                bare = gets_per_s(port, a.requests)
                out = os.path.join(tmp, "run.json") if "--anatomy" in opts else os.devnull
                ratios[mode].append(attached(a.clockprof, srv.pid, opts, port, a.requests,
                                             out) / bare)
        for mode, r in ratios.items():
            median = statistics.median(r)
            print(f"redis GET attached ({mode}) / alone: median {median:.3f} "
                  f"of {a.rounds} alternated pairs (range {min(r):.2f}-{max(r):.2f})")
            if mode in GOALS:
                print(f"  goal >= {GOALS[mode]:.2f}: {'met' if median >= GOALS[mode] else 'NOT met'}"
                      f" ({sampled(os.path.join(tmp, 'run.json'))} in the last round)")
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
