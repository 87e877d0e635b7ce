#!/usr/bin/env python3
"""make bench: the demo's probe share, measured: what `clockprof attach -r
func:handle_request` adds to the CPU a request of the demo target costs
(tests/targets/callsites_target: 7 reads a request, paced by nanosleep, so
that each request starts cold), in alternated windows of one running
target, alone and counted (the vDSO patch counts the reads and closes the
requests in the target: nothing traps). The attach and its detach are
outside the windows: their one-off cost is not per request.

Two figures, each window's requests read from the target's own counter
(callsites_served, in its memory):
- the request's own time, timed in the target (CALLSITES_TSC: rdtscp
  around each request, which clockprof does not count): everything
  clockprof adds to a request runs inside it (the counting at each read,
  the close at the boundary), so counted minus alone, per pair (medians
  of some hundreds of requests each), over the target's whole CPU per
  request alone (schedstat), is the share. It resolves tens of ns.
- the whole process's CPU per request (schedstat), counted vs alone: the
  real-server tests' measure, printed with its spread; on these VMs a
  window's CPU per request often varies by 5-40% from one to the next
  (wake-up costs), more than 1%. It also holds what clockprof costs the
  target outside its requests: a task-clock counter on the target cost
  it ~6% here (its context switches), which is why a run that traps
  nothing reads the target's CPU clock instead (target_cpu.h).
Prints the medians against the goal of issue 27 (1% at most). A
benchmark, not a test: it prints figures and never fails."""
import argparse
import json
import os
import statistics
import struct
import subprocess
import tempfile
import time

GOAL_PCT = 1.0
RING = 4096  # callsites_common.h: CALLSITES_RING


class Demo:
    """The demo target, running, with its counters read from its memory."""

    def __init__(self, exe, rate):
        out = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
        self.sym = {f[2]: int(f[0], 16) for f in (line.split() for line in out.splitlines())
                    if len(f) == 3 and f[2].startswith("callsites_")}
        self.p = subprocess.Popen([exe, "0", str(rate)], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, CALLSITES_TSC="1"))
        self.p.stdout.readline()  # "ready": the rate is measured by then
        real = os.path.realpath(exe)
        with open(f"/proc/{self.p.pid}/maps") as f:
            self.base = min(int(line.split("-")[0], 16) for line in f if line.rstrip().endswith(real))
        self.mem = open(f"/proc/{self.p.pid}/mem", "rb", buffering=0)
        self.ticks_per_us = struct.unpack("d", self.read("callsites_ticks_per_us", 8))[0]

    def read(self, name, n):
        self.mem.seek(self.base + self.sym[name])
        return self.mem.read(n)

    def served(self):
        return struct.unpack("q", self.read("callsites_served", 8))[0]

    def cpu_ns(self):
        tasks = f"/proc/{self.p.pid}/task"
        return sum(int(open(f"{tasks}/{t}/schedstat").read().split()[0]) for t in os.listdir(tasks))

    def window(self, seconds):
        """CPU ns per request, and the median request's own ns, over a
        window of seconds."""
        c0, r0 = self.cpu_ns(), self.served()
        time.sleep(seconds)
        c1, r1 = self.cpu_ns(), self.served()
        ring = struct.unpack(f"{RING}Q", self.read("callsites_ticks", 8 * RING))
        own = [ring[i % RING] for i in range(r0 + 1, min(r1, r0 + RING))]
        return (c1 - c0) / max(r1 - r0, 1), statistics.median(own) * 1000 / self.ticks_per_us

    def stop(self):
        self.p.kill()
        self.p.wait()


def counted(a, demo):
    """A window while clockprof counts, and what it saw."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cp = subprocess.Popen([a.clockprof, "attach", "-q", "-e", "none", "-d", str(a.seconds + 1),
                               "-r", "func:handle_request", "-o", out.name, str(demo.p.pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # attached by then (about 0.1 s here)
        w = demo.window(a.seconds)
        cp.wait(timeout=60)
        run = json.load(open(out.name))
    return w, (run["request"]["count"], run["probe"]["hits"], run["per_request"]["histogram"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--rate", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=1.0)
    a = ap.parse_args()
    demo = Demo(os.path.join(a.targets, "callsites_target"), a.rate)
    alone, added, whole, seen = [], [], [], []
    try:
        time.sleep(0.3)
        for i in range(a.pairs):  # alternated: alone first, then counted first
            if i % 2 == 0:
                bare = demo.window(a.seconds)
                both, saw = counted(a, demo)
            else:
                both, saw = counted(a, demo)
                bare = demo.window(a.seconds)
            alone.append(bare[0])
            added.append(both[1] - bare[1])
            whole.append(100 * (both[0] / bare[0] - 1))
            seen.append(saw)
    finally:
        demo.stop()
    per_request = statistics.median(alone)
    share = 100 * statistics.median(added) / per_request
    print(f"demo probe share ({a.pairs} alternated pairs of {a.seconds:g} s at {a.rate} requests/s "
          f"at most): a request's own time +{statistics.median(added):.0f} ns counted (pairs "
          f"{', '.join(f'{x:.0f}' for x in added)}) of {per_request:.0f} ns of CPU per request "
          f"alone: {share:.2f}% (goal {GOAL_PCT}% at most); the whole process's CPU per request "
          f"counted vs alone: median {statistics.median(whole):+.1f}% (pairs "
          f"{', '.join(f'{x:.0f}' for x in whole)}); clockprof saw "
          f"{min(s[0] for s in seen)}-{max(s[0] for s in seen)} requests a {a.seconds + 1:g} s "
          f"window, histograms {sorted(set(str(s[2]) for s in seen))[:2]}, traps "
          f"{sum(s[1] for s in seen)}")


if __name__ == "__main__":
    main()
