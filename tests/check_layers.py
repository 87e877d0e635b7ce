#!/usr/bin/env python3
"""The stage layering of lib/ (docs/ARCHITECTURE.md), checked: every stage
may include its own headers and the public ones (lib/STAGE/include/) of
the stages the Makefile lists for it (LAYER_*). For each stage this tries
to preprocess an include of every header it must not see (any header of a
stage above it, any internal header of another stage), with the stage's
own flags, and fails if one is found; it also fails on quoted includes that
spell a path ("../probe/session.h"), which would walk around the flags.
Prints "layers: N passed, N failed"."""
import glob
import os
import re
import subprocess
import sys

STAGES = ["util", "procfs", "symbols", "probe", "runfile", "gate", "report"]
# The architecture's rule (docs/ARCHITECTURE.md, "may use"), stated here
# apart from the Makefile so that loosening the Makefile fails this check.
MAY_USE = {
    "util": set(),
    "procfs": {"util"},
    "symbols": {"procfs", "util", "bpf"},
    "probe": {"symbols", "procfs", "util", "bpf"},
    "runfile": {"probe", "symbols", "procfs", "util", "bpf"},
    "gate": {"runfile", "util"},
    "report": {"gate", "runfile", "util"},
}


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
    public = {s: sorted(os.path.basename(h) for h in glob.glob(f"lib/{s}/include/*.h"))
               for s in STAGES}
    internal = {s: sorted(os.path.basename(h) for h in glob.glob(f"lib/{s}/*.h"))
                for s in STAGES}
    # The header shared with the BPF program is a layer of its own, for the
    # stages the Makefile gives it to (BPF_STAGES).
    public["bpf"] = sorted(os.path.basename(h) for h in glob.glob("probes/*.h"))
    for stage in STAGES:
        flags = layer_flags(stage)
        allowed = {f[len("-Ilib/"):-len("/include")] for f in flags
                   if f.startswith("-Ilib/") and f.endswith("/include")}
        if "-Iprobes" in flags:
            allowed.add("bpf")
        beyond = allowed - MAY_USE[stage] - {stage}
        if beyond:
            failed += 1
            print(f"FAIL {stage}: the Makefile lets it use {', '.join(sorted(beyond))}")
            continue
        hidden = [f"{o}/include/{h}" for o in public if o not in allowed for h in public[o]]
        hidden += [f"{o}/{h}" for o in STAGES if o != stage for h in internal[o]]
        leaks = [h for h in hidden if visible(flags, os.path.basename(h))]
        if leaks:
            failed += 1
            print(f"FAIL {stage}: can include {', '.join(leaks)}")
        else:
            passed += 1
            print(f"ok   {stage} sees its own headers and the public ones of "
                  f"{', '.join(sorted(allowed - {stage})) or 'no other stage'}")
    # cmd/ parses and prints through the stages' public headers only.
    flags = subprocess.run(["make", "-s", "--no-print-directory", "cmd-flags"],
                           capture_output=True, text=True, check=True).stdout.split()
    leaks = [f"{o}/{h}" for o in STAGES for h in internal[o] if visible(flags, h)]
    if leaks:
        failed += 1
        print(f"FAIL cmd: can include {', '.join(leaks)}")
    else:
        passed += 1
        print("ok   cmd sees only public headers")
    pathy = re.compile(r'^\s*#\s*include\s+"[^"]*/[^"]*"', re.M)
    for path in sorted(glob.glob("lib/*/*.[ch]") + glob.glob("lib/*/include/*.h")):
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
