#!/usr/bin/env python3
"""make bench: what following the programs a service execs costs (a
shell's commands, CGI scripts). A bash loop execs reads_target N times
(each reads the clock once and exits) and prints how long the loop took,
alone and under `clockprof run` (which holds each exec'd process at its
new image's first instruction, patches that image and lets it go),
alternated: the median of each pair's ratio, the time added per exec,
and whether every exec'd process's read was counted. A benchmark, never
a test: it prints its figures."""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def loop_script(target, n):
    return (f"s=$EPOCHREALTIME; for ((i = 0; i < {n}; i++)); do {target} clock_gettime 1 1; "
            "done; e=$EPOCHREALTIME; echo loop $s $e")


def loop_s(stdout):
    words = stdout.split()
    i = words.index("loop")
    return float(words[i + 2]) - float(words[i + 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--execs", type=int, default=300)
    ap.add_argument("--pairs", type=int, default=5)
    a = ap.parse_args()
    argv = ["/bin/bash", "-c", loop_script(os.path.join(a.targets, "reads_target"), a.execs)]
    ratios, added, exact = [], [], True
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        for _ in range(a.pairs):
            alone = loop_s(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
            proc = subprocess.run([a.clockprof, "run", "-q", "-e", "none", "-o", out, "--", *argv],
                                  capture_output=True, text=True, check=True)
            followed = loop_s(proc.stdout)
            with open(out) as f:
                run = json.load(f)
            rows = [r for r in run["processes"][1:] if r["executable"].endswith("reads_target")]
            exact = exact and len(rows) == a.execs and all(r["reads"] == 1 for r in rows)
            ratios.append(followed / alone)
            added.append((followed - alone) / a.execs * 1e3)
            print(f"  pair: {a.execs} execs alone {alone:.3f} s, followed {followed:.3f} s", flush=True)
    print(f"exec storm: {a.execs} execs x {a.pairs} alternated pairs: loop time followed / alone "
          f"median {statistics.median(ratios):.2f}x (pairs {min(ratios):.2f} to {max(ratios):.2f}); "
          f"added per exec {statistics.median(added):.2f} ms; every exec'd process's read counted: "
          f"{'yes' if exact else 'NO'}")


if __name__ == "__main__":
    main()
