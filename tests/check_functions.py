#!/usr/bin/env python3
"""Every product function (cmd/, lib/, probes/) is at most 60 lines long,
counted from its opening brace to the line before its closing one (its
declarations and statements and the brace that opens them; for the usual
one-line signature, the lines between the signature and the closing
brace). The project's rule; docs/contributing.md says so.

Functions are found by universal-ctags (`--fields=+ne`: each function's
first and last line), a real C parser, not a brace count. So that a
construct ctags does not take for a function cannot slip through, every
line that opens a function body in this code base's style (a "{" alone
at column 0) must lie inside a function ctags found: one that does not
fails the check too.

Before the tree, the check proves itself on generated files: a function of
60 lines passes, one of 61 fails, a multi-line signature is counted from
its brace. Prints "functions: N passed, N failed"."""
import os
import shutil
import subprocess
import sys
import tempfile

from check_report import report

LIMIT = 60
DIRS = ["cmd", "lib", "probes"]


def ctags_functions(paths):
    """{path: [(name, start, end)]} for the C functions ctags finds."""
    out = subprocess.run(
        ["ctags", "--languages=C", "--langmap=C:.c.h", "--kinds-C=f", "--fields=+ne",
         "-x", "--_xformat=%F\t%n\t%e\t%N", *paths],
        capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        path, start, end, name = line.split("\t", 3)
        found.setdefault(path, []).append((name, int(start), int(end) if end else 0))
    return found


def sources(root):
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(dirpath, f)


def body_lines(lines, start, end):
    """Lines from the function's opening brace to before its closing one."""
    for i in range(start - 1, end):
        if lines[i].rstrip().endswith("{"):
            return end - (i + 1)
    return end - start - 1


def check(root):
    """(functions checked, problems): a problem is one line of text."""
    paths = list(sources(root))
    found = ctags_functions(paths)
    checked, problems = 0, []
    for path in paths:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
        spans = []
        for name, start, end in found.get(path, []):
            if not end:
                problems.append(f"{path}:{start}: {name}: ctags gave no end line")
                continue
            spans.append((start, end))
            checked += 1
            n = body_lines(lines, start, end)
            if n > LIMIT:
                problems.append(f"{os.path.relpath(path, root)}:{start}: {name} is {n} lines "
                                f"long (at most {LIMIT}): split it")
        for i, line in enumerate(lines, 1):
            if line == "{" and not any(s <= i <= e for s, e in spans):
                problems.append(f"{os.path.relpath(path, root)}:{i}: a function body ctags "
                                "did not parse: this check cannot measure it")
    return checked, problems


def function(name, length, signature=None):
    """A function `length` lines long as this check counts them."""
    sig = signature or f"static int {name}(int x)"
    return sig + "\n{\n" + "".join(f"\tx += {i};\n" for i in range(length - 2)) + \
        "\treturn x;\n}\n"


def self_test():
    """The check on generated trees; returns a list of what went wrong."""
    cases = [
        ("60 lines pass", function("ok", 60), 0),
        ("61 lines fail", function("toolong", 61), 1),
        ("a multi-line signature counts from its brace",
         function("wide", 60, "static int wide(int x,\n\t\tint y,\n\t\tint z)"), 0),
        ("a macro-wrapped body is still a function",
         "#define SEC(x) __attribute__((section(x)))\n" +
         function("prog", 61, 'SEC("uprobe") int prog(int x)'), 1),
    ]
    wrong = []
    for what, text, expected in cases:
        tmp = tempfile.mkdtemp(prefix="check-functions-")
        try:
            os.makedirs(os.path.join(tmp, "lib", "util"))
            with open(os.path.join(tmp, "lib", "util", "f.c"), "w") as f:
                f.write(text)
            checked, problems = check(tmp)
            if checked != 1 or len(problems) != expected:
                wrong.append(f"self-test '{what}': {checked} functions, problems {problems}")
        finally:
            shutil.rmtree(tmp)
    return wrong


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not shutil.which("ctags"):
        print("functions: ctags not found (Debian: universal-ctags; make test-deps)")
        print("functions: 0 passed, 1 failed")
        return 1
    wrong = self_test()
    checked, problems = check(root)
    return report("functions", f"{checked} product functions, at most {LIMIT} lines each",
                  wrong + problems, 4 - len(wrong) + checked - len(problems))


if __name__ == "__main__":
    sys.exit(main())
