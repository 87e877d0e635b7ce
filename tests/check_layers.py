#!/usr/bin/env python3
"""The stage layering of lib/ (docs/ARCHITECTURE.md), checked: every stage
may include its own headers and the public ones (lib/STAGE/include/) of
the stages the Makefile lists for it (LAYER_*). For each stage this tries
to preprocess an include of every header it must not see (any header of a
stage above it, any internal header of another stage), with the stage's
own flags, and fails if one is found; it also fails on quoted includes that
spell a path ("../probe/session.h"), which would walk around the flags.

A stage may be split into rooms, sub-folders (lib/probe/: docs/ARCHITECTURE.md,
"The probe's rooms") in an order declared here (ROOMS) apart from the
Makefile (ROOMS_probe, ROOM_probe_*): it fails if the order has a cycle,
if a room may use one declared after it, if the Makefile lets a room use
more, if a room's flags show it a header of a room it may not use, or if a
file includes a header of such a room (an include that reaches upward or
sideways), and it names any cycle among the rooms' actual includes.
Inside every folder of cmd/ and lib/, no files may call each other round
a circle (file_circles.py); that check first proves it finds one.
Prints "layers: N passed, N failed"."""
import glob
import os
import re
import subprocess
import sys
import tempfile

import file_circles

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


# The rooms of a split stage, bottom to top, and what each may use: the
# architecture's rule, stated apart from the Makefile. A room may use only
# rooms before it; the window calls the mechanisms through mech/ alone.
ROOMS = {
    "probe": {
        "base": set(),
        "target": {"base"},
        "counters": {"target", "base"},
        "links": {"target", "base"},
        "points": {"base"},
        "session": {"links", "points", "target", "base"},
        "naming": {"session", "target", "base"},
        "mech": {"session", "points", "target", "base"},
        "mech/uprobe": {"mech", "session", "points", "target", "base"},
        "mech/breakpoint": {"mech", "session", "points", "target", "base"},
        "mech/patch": {"mech", "session", "points", "target", "base"},
        "window": {"mech", "naming", "session", "counters", "points", "links",
                   "target", "base"},
    },
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


def visible_of(flags, names):
    """Those of names a file compiled with flags can include: one run of the
    preprocessor asks for all (__has_include), each found is confirmed by
    including it."""
    src = "".join(f'#if __has_include("{n}")\ncp_visible {i}\n#endif\n'
                  for i, n in enumerate(names))
    out = subprocess.run(["cc", "-E", "-P", "-x", "c", "-"] + flags, input=src,
                         capture_output=True, text=True).stdout
    found = {int(line.split()[1]) for line in out.splitlines() if line.startswith("cp_visible ")}
    return [n for i, n in enumerate(names) if i in found and visible(flags, n)]


def find_cycle(graph):
    """A cycle of graph (node -> set of nodes) as a list, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == "open":
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = "done"
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def room_of(stage, path):
    """The room a file of a split stage is in: its folder below lib/STAGE/,
    without include/."""
    folder = os.path.dirname(os.path.relpath(path, f"lib/{stage}"))
    return folder[:-len("/include")] if folder.endswith("/include") else folder


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_declared(stage, rooms):
    """The declared order: a DAG, each room using only rooms before it, and
    the Makefile's the same rooms, no room allowed more. Failures as text."""
    fails = []
    cycle = find_cycle(rooms)
    if cycle:
        fails.append(f"{stage}: the declared rooms form a cycle: {' -> '.join(cycle)}")
    order = list(rooms)
    for r, uses in rooms.items():
        later = sorted(u for u in uses if u not in order or order.index(u) > order.index(r))
        if later:
            fails.append(f"{stage}/{r}: declared to use {', '.join(later)}, not below it")
    made = make_words(f"rooms-{stage}")
    if made != order:
        fails.append(f"{stage}: the Makefile's rooms {made} are not {order}")
    on_disk = {room_of(stage, p) for p in glob.glob(f"lib/{stage}/**/*.[chS]", recursive=True)}
    for r in sorted(on_disk - set(order)):
        fails.append(f"{stage}/{r}: a folder with sources that is no declared room")
    for r in order:
        extra = set(make_words(f"room-uses-{stage}", f"ROOM={r}")) - rooms[r] - {r}
        if extra:
            fails.append(f"{stage}/{r}: the Makefile lets it use {', '.join(sorted(extra))}")
    return fails


def check_room_includes(stage, rooms):
    """Every quoted include of a room's files against the rooms it may use;
    returns failures and the rooms' actual include graph."""
    owner = {}
    for h in glob.glob(f"lib/{stage}/**/*.h", recursive=True):
        owner.setdefault(os.path.basename(h), set()).add(room_of(stage, h))
    fails, actual = [], {r: set() for r in rooms}
    for path in sorted(glob.glob(f"lib/{stage}/**/*.[ch]", recursive=True)):
        room = room_of(stage, path)
        with open(path, encoding="utf-8") as f:
            for name in INCLUDE.findall(f.read()):
                for there in owner.get(name, ()):
                    if there == room:
                        continue
                    actual.setdefault(room, set()).add(there)
                    if there not in rooms.get(room, ()):
                        way = "upward" if room in rooms.get(there, ()) or \
                            list(rooms).index(there) > list(rooms).index(room) else "sideways"
                        fails.append(f"{path}: #include \"{name}\" reaches {way}, "
                                     f"into {stage}/{there}")
    return fails, actual


def check_room_flags(stage, rooms):
    """Each room's include flags against the headers of the rooms it may not
    use. Failures as text."""
    fails = []
    for r in rooms:
        flags = layer_flags(stage, r)
        hidden = [h for h in glob.glob(f"lib/{stage}/**/*.h", recursive=True)
                  if room_of(stage, h) not in rooms[r] | {r}]
        seen = set(visible_of(flags, sorted({os.path.basename(h) for h in hidden})))
        leaks = [h for h in hidden if os.path.basename(h) in seen]
        if leaks:
            fails.append(f"{stage}/{r}: can include {', '.join(sorted(leaks))}")
    return fails


def check_rooms(stage, rooms):
    """All the room checks of one split stage: (passed, failed)."""
    fails = check_declared(stage, rooms)
    if fails:
        for f in fails:
            print(f"FAIL {f}")
        return 0, len(fails)
    fails = check_room_flags(stage, rooms)
    include_fails, actual = check_room_includes(stage, rooms)
    fails += include_fails
    cycle = find_cycle(actual)
    if cycle:
        fails.append(f"{stage}: the rooms' includes form a cycle: {' -> '.join(cycle)}")
    for f in fails:
        print(f"FAIL {f}")
    if not fails:
        print(f"ok   {stage}'s {len(rooms)} rooms include only the rooms below them they may use")
        return 1, 0
    return 0, len(fails)


def proves_circles_found():
    """The file-circle check finds a circle it is shown: two files that
    call each other."""
    with tempfile.TemporaryDirectory() as d:
        for name, defines, calls in (("a.c", "a_one", "b_one"), ("b.c", "b_one", "a_one")):
            with open(os.path.join(d, name), "w") as f:
                f.write(f"int {calls}(void);\nint {defines}(void)\n{{\n\treturn {calls}();\n}}\n")
        files = sorted(glob.glob(os.path.join(d, "*.c")))
        return find_cycle(file_circles.graph(files)) is not None


def check_file_circles():
    """No two files of a folder of cmd/ or lib/ call each other, directly
    or round a circle (file_circles.py): (passed, failed)."""
    if not proves_circles_found():
        print("FAIL the file-circle check does not find a circle of two files")
        return 0, 1
    passed = failed = 0
    for folder, files in file_circles.folders(["cmd", "lib"]):
        cycle = find_cycle(file_circles.graph(files))
        if cycle:
            failed += 1
            print(f"FAIL {folder}: files call each other round a circle: "
                  f"{' -> '.join(os.path.basename(c) for c in cycle)}")
        else:
            passed += 1
    print(f"ok   no circle among the files of {passed} folders" if not failed else
          f"     {passed} folders without a circle")
    return passed, failed


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
        seen = set(visible_of(flags, sorted({os.path.basename(h) for h in hidden})))
        leaks = [h for h in hidden if os.path.basename(h) in seen]
        if leaks:
            failed += 1
            print(f"FAIL {stage}: can include {', '.join(leaks)}")
        else:
            passed += 1
            print(f"ok   {stage} sees its own headers and the public ones of "
                  f"{', '.join(sorted(allowed - {stage})) or 'no other stage'}")
    for stage, rooms in ROOMS.items():
        p, f = check_rooms(stage, rooms)
        passed += p
        failed += f
    # cmd/ parses and prints through the stages' public headers only.
    flags = subprocess.run(["make", "-s", "--no-print-directory", "cmd-flags"],
                           capture_output=True, text=True, check=True).stdout.split()
    seen = set(visible_of(flags, sorted({h for o in STAGES for h in internal[o]})))
    leaks = [f"{o}/{h}" for o in STAGES for h in internal[o] if h in seen]
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
    p, f = check_file_circles()
    passed += p
    failed += f
    print(f"layers: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
