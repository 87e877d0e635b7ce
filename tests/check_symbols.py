#!/usr/bin/env python3
"""Every external symbol of the library (build/libclockprof.a) is defined
by one object only. The binary and the unit tests link the library as an
archive, and the linker takes the first member that defines a symbol it
needs without looking further: two functions of one name in two stages
link without a word, and a caller silently runs the other one. That
happened once (two cp_anatomy_name, one naming reads from the target, one
labelling them from run.json), and only a unit test noticed.

It first proves itself on two generated objects that define one symbol.
Prints "symbols: N passed, N failed"."""
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

from check_report import report


def definitions(paths):
    """{symbol: [object, ...]} of the external definitions in paths (.o
    files or archives), as nm names them."""
    out = subprocess.run(["nm", "-A", "-g", "--defined-only", *paths],
                         capture_output=True, text=True, check=True).stdout
    found = defaultdict(list)
    for line in out.splitlines():
        fields = line.rsplit(" ", 2)    # "archive:member:value", type, name
        if len(fields) == 3 and fields[1] not in ("w", "W", "V", "v"):
            found[fields[2]].append(fields[0].rsplit(":", 1)[0])
    return found


def twice(found):
    return {s: objs for s, objs in found.items() if len(objs) > 1}


def proves_itself():
    with tempfile.TemporaryDirectory() as d:
        objs = []
        for name in ("a", "b"):
            src = os.path.join(d, name + ".c")
            with open(src, "w") as f:
                f.write("int cp_same_name(void) { return 1; }\n")
            objs.append(os.path.join(d, name + ".o"))
            subprocess.run(["cc", "-c", src, "-o", objs[-1]], check=True)
        return "cp_same_name" in twice(definitions(objs))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    lib = os.path.join(build, "libclockprof.a")
    failures = []
    if not proves_itself():
        failures.append("the check did not find a symbol defined twice on purpose")
    if not os.path.exists(lib):
        failures.append(f"{lib} is not built (make all)")
        return report("symbols", "not run", failures, 0)
    found = definitions([lib])
    for sym, objs in sorted(twice(found).items()):
        failures.append(f"{sym} is defined in {', '.join(objs)}")
    return report("symbols", f"{len(found)} external symbols of {lib}",
                  failures, len(found) - len(failures))


if __name__ == "__main__":
    sys.exit(main())
