#!/usr/bin/env python3
"""make bench: what following a CGI-style server's children costs
(issue 28's bounds). tests/targets/fork_tree_target storm forks 1,000
children one after the other over 10 s, each serving one request and
working ~1 ms; it prints a child's fork-to-reaped time. Run alone and
under `clockprof run` (which follows every child, each counted in its own
copy of the patched vDSO), alternated: the median of each pair's ratio of
p50s (a pair runs side by side; the host drifts by more than the effect);
clockprof's peak RSS following the children against the same run with
--no-inherit. Goals: each child's fork-to-exit grows <= 10%,
<= 32 MiB of extra RSS, and every child's reads counted. A benchmark,
never a test: it prints its figures and whether the goals were met."""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time


def p50_us(out):
    words = out.split()
    return float(words[words.index("p50") + 1])


def peak_rss_kib(pid, stop, peak):
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
        except OSError:
            return
        time.sleep(0.05)


def under_clockprof(a, argv, extra, tmp):
    out = os.path.join(tmp, "run.json")
    proc = subprocess.Popen([a.clockprof, "run", "-q", "-e", "none", "-o", out, *extra, "--",
                             *argv], stdout=subprocess.PIPE, text=True)
    stop, peak = threading.Event(), [0]
    watch = threading.Thread(target=peak_rss_kib, args=(proc.pid, stop, peak))
    watch.start()
    stdout, _ = proc.communicate(timeout=600)
    stop.set()
    watch.join()
    if proc.returncode:
        raise SystemExit(f"fork storm: clockprof exited {proc.returncode}")
    with open(out) as f:
        return p50_us(stdout), peak[0], json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--children", type=int, default=1000)
    ap.add_argument("--every-ms", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    argv = [os.path.join(a.targets, "fork_tree_target"), "storm", str(a.children),
            str(a.every_ms)]
    # the children's work, calibrated once: the same loop on both sides
    out = subprocess.run(argv[:2] + ["10", "1"], capture_output=True, text=True,
                         check=True).stdout.split()
    argv.append(out[out.index("spin") + 1])
    tmp = tempfile.mkdtemp(prefix="fork-storm-")
    alone, followed, rss = [], [], []
    for _ in range(a.pairs):
        alone.append(p50_us(subprocess.run(argv, capture_output=True, text=True,
                                           check=True).stdout))
        us, peak, run = under_clockprof(a, argv, (), tmp)
        followed.append(us)
        rss.append(peak)
    _, bare_peak, _ = under_clockprof(a, argv, ("--no-inherit",), tmp)
    want = 3 * a.children + 2 + 2 * a.children
    counted = run["clock_reads"]["total"]
    # each pair side by side: the host drifts by more than the effect
    ratio = statistics.median(f / a for f, a in zip(followed, alone))
    extra_mib = (max(rss) - bare_peak) / 1024
    print(f"fork storm ({a.children} children, one every {a.every_ms} ms, {a.pairs} alternated "
          f"pairs): fork-to-exit p50 alone {statistics.median(alone):.0f} us, followed "
          f"{statistics.median(followed):.0f} us; median of the pairs' ratios {ratio:.3f}x "
          f"(goal <= 1.10x: {'met' if ratio <= 1.10 else 'NOT met'}; pairs "
          f"{', '.join(f'{f / a:.2f}' for f, a in zip(followed, alone))})")
    print(f"fork storm: clockprof peak RSS following {max(rss) / 1024:.1f} MiB, with "
          f"--no-inherit {bare_peak / 1024:.1f} MiB: {extra_mib:+.1f} MiB (goal <= 32 MiB: "
          f"{'met' if extra_mib <= 32 else 'NOT met'})")
    print(f"fork storm: {len(run['processes'])} processes in run.json, reads {counted} of "
          f"{want} ({'exact' if counted == want else 'NOT exact'})")


if __name__ == "__main__":
    main()
