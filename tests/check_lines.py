#!/usr/bin/env python3
"""No line of C, a header, the BPF program or the assembly (*.c, *.h, *.S,
*.inc of cmd/, lib/, probes/ and tests/, as git tracks them) is wider than
100 columns, tabs counted as 8: the rule .editorconfig states for them,
which editors show but nothing enforced, so that lines crept past it.

One exception, the kernel's own (coding-style, "Breaking long lines and
strings"): a line long only because of a string literal. A message the
user sees stays whole on one line, so that grepping the code for what was
printed finds it. A line counts as long only because of a string when it
fits once each string literal in it is replaced by "". Comments are not
strings: quoted words in a comment do not excuse it, and a character
literal ('"') opens no string.

It first proves itself on generated lines: 100 columns pass, 101 fail, a
tab counts 8, a long string is let through and a long comment is not.
And no .c file of the product (cmd/, lib/, probes/) holds more than 800
lines: past that a file holds several ideas (issue 44), and the one that
grew is split by idea, as anatomy_merge.c was from anatomy_collect.c.

Prints "lines: N passed, N failed"."""
import os
import subprocess
import sys

from check_report import report

LIMIT = 100
FILE_LIMIT = 800
PRODUCT = ("cmd/", "lib/", "probes/")
DIRS = ("cmd", "lib", "probes", "tests")
EXTENSIONS = (".c", ".h", ".S", ".inc")


def without_strings(line, in_comment):
    """The line with each string literal replaced by "" (comments and
    character literals kept as they are), and whether a /* comment is
    still open at its end."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                out.append(line[i:])
                return "".join(out), True
            out.append(line[i:end + 2])
            i, in_comment = end + 2, False
        elif line.startswith("//", i):
            out.append(line[i:])
            break
        elif line.startswith("/*", i):
            out.append("/*")
            i, in_comment = i + 2, True
        elif line[i] in "\"'":
            quote, j = line[i], i + 1
            while j < n and line[j] != quote:
                j += 2 if line[j] == "\\" else 1
            out.append('""' if quote == '"' else line[i:j + 1])
            i = j + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


def wide_lines(text):
    """(line number, columns) of each line over LIMIT columns that a
    string literal does not excuse."""
    found, in_comment = [], False
    for number, line in enumerate(text.splitlines(), 1):
        bare, in_comment = without_strings(line, in_comment)
        width = len(line.expandtabs(8))
        if width > LIMIT and len(bare.expandtabs(8)) > LIMIT:
            found.append((number, width))
    return found


def sources(root):
    out = subprocess.run(["git", "ls-files", *DIRS], cwd=root, capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return [f for f in out if f.endswith(EXTENSIONS)]


def check(root):
    """(files checked, problems): a problem is one line of text."""
    files, problems = sources(root), []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for number, width in wide_lines(text):
            problems.append(f"{rel}:{number}: {width} columns (at most {LIMIT}): wrap it")
        if too_long(rel, text):
            problems.append(f"{rel}: {len(text.splitlines())} lines (at most {FILE_LIMIT} "
                            "in a .c of the product): split it by idea")
    return len(files), problems


def too_long(rel, text):
    """Whether rel is a .c of the product over FILE_LIMIT lines."""
    return (rel.startswith(PRODUCT) and rel.endswith(".c")
            and len(text.splitlines()) > FILE_LIMIT)


def self_test():
    """The check on generated lines; returns a list of what went wrong."""
    call = "\tcp_warn("
    cases = [
        ("100 columns pass", "x" * 100, 0),
        ("101 columns fail", "x" * 101, 1),
        ("a tab counts 8", "\t" + "x" * 93, 1),
        ("a long string is let through", call + '"' + "m" * 120 + '", n);', 0),
        ("a string does not excuse the code around it",
         call + '"m", ' + "n + " * 30 + "n);", 1),
        ("quotes in a comment excuse nothing", '/* "' + "w" * 120 + '" */', 1),
        ("nor in a comment's later line", "/*\n * \"" + "w" * 120 + "\"\n */", 1),
        ("a character literal opens no string",
         "\tif (c == '\"') x = " + "y + " * 25 + "z; /* \" */", 1),
        ("an escaped quote ends no string", call + '"\\"' + "m" * 120 + '", n);', 0),
    ]
    wrong = []
    product, test = os.path.join("lib", "x.c"), os.path.join("tests", "x.c")
    for rel, lines, expected in ((product, FILE_LIMIT, False),
                                 (product, FILE_LIMIT + 1, True),
                                 (product[:-1] + "h", FILE_LIMIT + 1, False),
                                 (test, FILE_LIMIT + 1, False)):
        if too_long(rel, "x;\n" * lines) != expected:
            wrong.append(f"self-test: {rel} of {lines} lines judged {not expected}")
    for what, text, expected in cases:
        found = wide_lines(text)
        if len(found) != expected:
            wrong.append(f"self-test '{what}': found {found}, expected {expected}")
    return wrong


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    wrong = self_test()
    files, problems = check(root)
    failures = wrong + problems
    return report("lines", f"{files} files, no line over {LIMIT} columns but for a string, "
                  f"no .c of the product over {FILE_LIMIT} lines",
                  failures, 0 if failures else 1)


if __name__ == "__main__":
    sys.exit(main())
