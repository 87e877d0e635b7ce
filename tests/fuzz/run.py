#!/usr/bin/env python3
"""Runs the libFuzzer harnesses built by tests/fuzz/fuzz.mk.

Without --seconds: each harness executes every input of its seed corpus
(tests/fuzz/corpus/NAME) once, so that a reader that now crashes on a known
input fails `make check`. With --seconds N: each harness fuzzes for N
seconds, starting from the seeds, keeping what it finds in BUILD/corpus/NAME
and crashes in BUILD/crashes. Ends with "fuzz: N passed, N failed, N skipped".
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--seconds", type=int, default=0)
    args = ap.parse_args()
    passed = failed = skipped = 0
    names = sorted(f[len("fuzz_"):-2] for f in os.listdir(HERE)
                   if f.startswith("fuzz_") and f.endswith(".c"))
    crashes = os.path.join(args.build, "crashes")
    os.makedirs(crashes, exist_ok=True)
    for name in names:
        binary = os.path.join(args.build, f"fuzz_{name}")
        seeds = os.path.join(HERE, "corpus", name)
        if not os.path.exists(binary):
            skipped += 1
            print(f"SKIP fuzz_{name}: not built (make fuzz-build)", flush=True)
            continue
        opts = [f"-artifact_prefix={crashes}/{name}-"]
        if args.seconds:
            work = os.path.join(args.build, "corpus", name)
            os.makedirs(work, exist_ok=True)
            cmd = [binary, *opts, f"-max_total_time={args.seconds}", work, seeds]
        else:
            cmd = [binary, *opts, "-runs=0", seeds]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
        stats = [l for l in proc.stderr.splitlines() if "stat::" in l or "Done" in l
                 or "INITED" in l]
        if proc.returncode == 0:
            passed += 1
            inputs = len(os.listdir(seeds))
            last = stats[-1].strip() if stats else ""
            print(f"ok   fuzz_{name}: {inputs} seeds; {last}", flush=True)
        else:
            failed += 1
            print(f"FAIL fuzz_{name} (exit {proc.returncode}): {' '.join(cmd)}", flush=True)
            print("\n".join(proc.stderr.splitlines()[-40:]), flush=True)
    print(f"fuzz: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
