#!/usr/bin/env python3
"""Every path the project names still exists: files move (lib/probe/ was
split into rooms, the README into docs/ pages) and a comment or a page
that still points at the old place sends its reader nowhere.

Two checks:
- the relative links of README.md, CHANGELOG.md and docs/ (a file, and
  its #anchor as GitHub makes one from a heading);
- the paths that the code, the tests, the Makefile and the packaging name
  in their text (comments mostly): a word that starts with one of the
  tree's top folders (lib/, tests/, docs/, ...) must name a file or folder
  of the tree, or a file once an extension is added ("tests/targets/
  reads_target", the program built from reads_target.c). Words that are
  patterns, not paths, are let through: an upper-case placeholder
  (lib/STAGE/include/) and a prefix ending in "_" (tests/fuzz/fuzz_).

It first proves that it fails on a path that does not exist. Prints
"paths: N passed, N failed"."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOP = ("cmd", "lib", "probes", "tests", "docs", "reports", "packaging", "examples")
NAMED = re.compile(r"(?<![\w./-])((?:%s)/[\w.+-]+(?:/[\w.+-]+)*/?)" % "|".join(TOP))
LINK = re.compile(r"\]\(([^)\s]+)\)")
EXTENSIONS = ("", ".c", ".h", ".S", ".py", ".sh", ".md")
SOURCES = re.compile(r"(\.(c|h|S|inc|py|sh|bt|js|mk)|/Makefile|^Makefile|/run)$")


def exists(path):
    return any(os.path.exists(os.path.join(ROOT, path + e)) for e in EXTENSIONS)


def is_pattern(path):
    return path.endswith("_") or any(p.isupper() and len(p) > 1 for p in path.split("/"))


def stale_paths(text):
    """The paths text names that are neither in the tree nor patterns."""
    out = []
    for m in NAMED.finditer(text):
        path = m.group(1).rstrip(".,;:)")
        if not is_pattern(path) and not exists(path):
            out.append(path)
    return out


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped,
    spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    """The anchors of a page's headings, code blocks left out (a "# "
    comment there is no heading); a heading repeated gets "-1", "-2", ...
    as GitHub numbers them."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"^```.*?^```", "", f.read(), flags=re.S | re.M)
    found, seen = set(), {}
    for m in re.finditer(r"^#+ (.*)$", text, re.M):
        a = anchor(m.group(1))
        found.add(a if a not in seen else f"{a}-{seen[a]}")
        seen[a] = seen.get(a, 0) + 1
    return found


def bad_links(page):
    with open(page, encoding="utf-8") as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    for m in LINK.finditer(text):
        url = m.group(1)
        if re.match(r"^[a-z]+:", url):
            continue
        path, _, frag = url.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(target):
            yield f"{os.path.relpath(page, ROOT)}: links to {url}, which does not exist"
        elif frag and target.endswith(".md") and frag not in anchors(target):
            yield f"{os.path.relpath(page, ROOT)}: links to {url}, which has no such heading"


def source_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    return [f for f in out if f.split("/", 1)[0] in TOP + ("Makefile", ".ci") and
            SOURCES.search(f) and "/node_modules/" not in f]


def bad_names():
    for rel in source_files():
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                for path in stale_paths(line):
                    yield f"{rel}:{n}: names {path}, which does not exist"


def main():
    os.chdir(ROOT)
    missing = "lib/probe/" + "no_such_file.c"  # split: this line names no path itself
    if stale_paths(f"/* see {missing} */") != [missing]:
        print("paths: the check does not find a path that does not exist")
        print("paths: 0 passed, 1 failed")
        return 1
    pages = ["README.md", "CHANGELOG.md"] + sorted(glob.glob("docs/**/*.md", recursive=True))
    failures = [b for p in pages for b in bad_links(p)] + list(bad_names())
    for line in failures:
        print("FAIL", line)
    print(f"paths: {1 if not failures else 0} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
