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


def make_words(*args):
    return subprocess.run(["make", "-s", "--no-print-directory", *args],
                          capture_output=True, text=True, check=True).stdout.split()


def layer_flags(stage, room=None):
    return make_words(f"layer-flags-{stage}", *([f"ROOM={room}"] if room else []))


def headers(stage):
    """A stage's public headers (include/ folders: the stage's, or its
    rooms') and its internal ones (beside its sources), by path."""
    every = glob.glob(f"lib/{stage}/**/*.h", recursive=True)
    public = sorted(h for h in every if "/include/" in h)
    return public, sorted(h for h in every if "/include/" not in h)


def other_stages(flags, stage):
    """The stages whose public headers flags give a file of stage."""
    found = {f[len("-Ilib/"):].split("/")[0] for f in flags
             if f.startswith("-Ilib/") and f.endswith("/include")}
    return found - {stage}


def visible(flags, header):
    src = f'#include "{header}"\n'
    return subprocess.run(["cc", "-E", "-x", "c", "-", "-o", "/dev/null"] + flags,
                          input=src, capture_output=True, text=True).returncode == 0


def main():
    passed = failed = 0
    public = {s: [os.path.basename(h) for h in headers(s)[0]] for s in STAGES}
    internal = {s: [os.path.basename(h) for h in headers(s)[1]] for s in STAGES}
    # The header shared with the BPF program is a layer of its own, for the
    # stages the Makefile gives it to (BPF_STAGES).
    public["bpf"] = sorted(os.path.basename(h) for h in glob.glob("probes/*.h"))
    for stage in STAGES:
        # A stage split into rooms: what its rooms see together.
        flags = [f for r in make_words(f"rooms-{stage}") or [None]
                 for f in layer_flags(stage, r)]
        allowed = other_stages(flags, stage) | {stage}
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
    for path in sorted(glob.glob("lib/**/*.[ch]", recursive=True)):
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
