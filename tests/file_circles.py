"""Circles between the files of one folder (a room of lib/, a stage, cmd/):
file A calls a function that file B defines, and B, or a file B reaches,
calls one of A's. Such files cannot be read, tested or moved one at a
time: each needs the other first. tests/check_layers.py runs this over
every folder of cmd/ and lib/, as it checks the rooms themselves.

A call is a name followed by "(" outside comments and strings, that
another file of the folder defines and does not make static (ctags finds
the definitions). A function only taken by its address (a table of
commands) is no call: what calls through the table is decided at run
time, below the file that fills it."""
import os
import re

from check_functions import ctags_functions

CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                               re.S)


def definitions(paths):
    """{name: file} of the functions the files define with external
    linkage (a name two files define is left out: no call is sure).
    The functions are ctags', as check_functions.py finds them."""
    found, twice = {}, set()
    for path, functions in ctags_functions(paths).items():
        with open(path, errors="replace") as f:
            text = f.read().splitlines()
        for name, start, _ in functions:
            line = text[start - 1]
            # the return type on the name's line, or alone on the line before
            before = text[start - 2] if line.startswith(name) and start > 1 else ""
            if re.search(r"\bstatic\b", line + " " + before):
                continue
            if name in found and found[name] != path:
                twice.add(name)
            found[name] = path
    return {n: p for n, p in found.items() if n not in twice}


def calls(path):
    with open(path, errors="replace") as f:
        return set(CALL.findall(COMMENT_OR_STRING.sub(" ", f.read())))


def graph(paths):
    """{file: {files whose functions it calls}} among paths."""
    defined = definitions(paths)
    edges = {}
    for path in paths:
        targets = {defined[n] for n in calls(path) if n in defined}
        edges[path] = targets - {path}
    return edges


def folders(roots):
    """Every folder below roots that holds .c files: [(folder, [files])]."""
    out = []
    for root in roots:
        for dirpath, _, files in os.walk(root):
            sources = sorted(os.path.join(dirpath, f) for f in files if f.endswith(".c"))
            if len(sources) > 1:
                out.append((dirpath, sources))
    return sorted(out)
