#!/usr/bin/env python3
"""The stage layering of lib/ (docs/ARCHITECTURE.md), checked: every stage
may include headers only from the stages the Makefile lists for it
(LAYER_*). For each stage this tries to preprocess an include of every
header of every stage it must not see, with the stage's own flags, and
fails if one is found; it also fails on quoted includes that spell a path
("../probe/session.h"), which would walk around the include flags.
Prints "layers: N passed, N failed"."""
import glob
import os
import re
import subprocess
import sys

STAGES = ["util", "procfs", "symbols", "probe", "runfile", "gate", "report"]


def layer_flags(stage):
    out = subprocess.run(["make", "-s", "--no-print-directory", f"layer-flags-{stage}"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def visible(flags, header):
    src = f'#include "{header}"\n'
    return subprocess.run(["cc", "-E", "-x", "c", "-", "-o", "/dev/null"] + flags,
                          input=src, capture_output=True, text=True).returncode == 0


def main():
    passed = failed = 0
    headers = {s: sorted(os.path.basename(h) for h in glob.glob(f"lib/{s}/*.h"))
               for s in STAGES}
    # The header shared with the BPF program is a layer of its own, for the
    # stages the Makefile gives it to (BPF_STAGES).
    headers["bpf"] = sorted(os.path.basename(h) for h in glob.glob("probes/*.h"))
    for stage in STAGES:
        flags = layer_flags(stage)
        allowed = {f[len("-Ilib/"):] for f in flags if f.startswith("-Ilib/")}
        if "-Iprobes" in flags:
            allowed.add("bpf")
        leaks = [f"{other}/{h}" for other in headers if other not in allowed
                 for h in headers[other] if visible(flags, h)]
        if leaks:
            failed += 1
            print(f"FAIL {stage}: can include {', '.join(leaks)}")
        else:
            passed += 1
            print(f"ok   {stage} sees only {', '.join(sorted(allowed))}")
    pathy = re.compile(r'^\s*#\s*include\s+"[^"]*/[^"]*"', re.M)
    for path in sorted(glob.glob("lib/*/*.[ch]")):
        with open(path, encoding="utf-8") as f:
            for m in pathy.finditer(f.read()):
                failed += 1
                print(f"FAIL {path}: {m.group(0).strip()} reaches around the include flags")
    if not failed:
        passed += 1
        print("ok   no quoted include spells a path")
    print(f"layers: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
