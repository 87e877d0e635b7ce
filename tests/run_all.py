#!/usr/bin/env python3
"""make check: runs every suite (unit, unit under AddressSanitizer and
UBSan, integration, browser) even when one fails, shows their output, and
ends with one line summing them all: "N passed, N failed, N skipped".

The suites that neither profile nor time anything (the checks, unit,
sanitizer, fuzz replay, browser) run at once, one per CPU, each one's output
held back and printed whole when it ends; the integration suites then run
one after the other, printed as they go: their BPF probes and counters must
not share the host with each other."""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import threading

# Suites that profile (BPF, perf_event) or drive a browser as root.
NEEDS_ROOT = {"integration", "integration-uprobe", "integration-breakpoint", "integration-patch",
              "browser"}


def serial(name):
    """Suites that profile (every integration suite, whatever its
    mechanism): one at a time, after the others."""
    return name.startswith("integration")


SUMMARY = re.compile(r"^([\w-]+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$")


def run_suite(name, cmd, env=None, out=None):
    """Runs one suite; its output goes to out (a list of lines, printed by
    the caller) or, without one, to stdout as it comes. Returns its
    [passed, failed, skipped]."""
    def say(line):
        if out is None:
            sys.stdout.write(line)
            sys.stdout.flush()
        else:
            out.append(line)
    say(f"=== {name}: {' '.join(cmd)}\n")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    counts = None
    for line in proc.stdout:
        say(line)
        m = SUMMARY.match(line.strip())
        if m:
            counts = [int(m.group(2)), int(m.group(3)), int(m.group(4) or 0)]
    proc.wait()
    if counts is None:
        say(f"{name}: no summary line (exit {proc.returncode}); counted as 1 failure\n")
        return [0, 1, 0]
    if proc.returncode != 0 and counts[1] == 0:
        say(f"{name}: exited {proc.returncode}; counted as 1 failure\n")
        counts[1] += 1
    return counts


def run_parallel(suites, env, total):
    """The suites at once, each printed whole when it ends."""
    lock = threading.Lock()

    def one(suite):
        lines = []
        counts = run_suite(*suite, env=env, out=lines)
        with lock:
            sys.stdout.write("".join(lines))
            sys.stdout.flush()
            for i, n in enumerate(counts):
                total[i] += n

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for f in [pool.submit(one, suite) for suite in suites]:
            f.result()


def counted_by_default(clockprof):
    """What clockprof counts with when no --mechanism is given, as its
    --help says (auto: the vDSO patch where it can be used)."""
    try:
        out = subprocess.run([clockprof, "run", "--help"], capture_output=True, text=True,
                             timeout=60).stdout
    except OSError:
        return None
    m = re.search(r"how reads are seen \(default: (\w+)\)", " ".join(out.split()))
    default = m.group(1) if m else None
    return "patch" if default == "auto" else default


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    env = dict(os.environ, CP_TEST_BUILD=os.path.join(args.build, "tests"))
    total = [0, 0, 0]
    suites = [
        # lib/'s stages include only the stages beneath them.
        ("layers", [sys.executable, "tests/check_layers.py"]),
        # No product function over 60 lines (universal-ctags).
        ("functions", [sys.executable, "tests/check_functions.py"]),
        # Every path a comment, a test or a page names (links and anchors
        # of README.md and docs/ too) exists.
        ("paths", [sys.executable, "tests/check_paths.py"]),
        # No line of C, header, BPF or assembly over 100 columns but for a
        # string literal (.editorconfig's max_line_length).
        ("lines", [sys.executable, "tests/check_lines.py"]),
        # No function of one name in two objects of the library, where
        # the linker would take either without a word.
        ("symbols", [sys.executable, "tests/check_symbols.py", args.build]),
        # The shipped CI workflow: valid YAML, and every clockprof option
        # in it exists in the built binary's --help.
        ("examples", [sys.executable, "tests/check_examples.py", "--clockprof", "./clockprof"]),
        ("unit", [os.path.join(args.build, "unit-tests")]),
        # The same tests again, built with sanitizers (~15 s): memory and
        # threading mistakes in the parallel code fail here, not in users'
        # CI runs.
        ("sanitize", ["make", "--no-print-directory", "-s", "check-sanitize"]),
        # Every libFuzzer harness over its seed corpus once (seconds): a
        # reader of untrusted input that now crashes on a known input.
        ("fuzz", ["make", "--no-print-directory", "-s", "check-fuzz"]),
        # Every module, with clockprof's default mechanism.
        ("integration", [sys.executable, "tests/integration/run.py", "--clockprof",
                         "./clockprof", "--targets", os.path.join(args.build, "tests", "targets")]),
    ]
    # The exact-count modules again with each mechanism they name, but the
    # one the default counts with (auto: the vDSO patch): uprobes, and
    # hardware breakpoints (skipped, with the reason, on hosts where they
    # do not fire).
    for mechanism in ("uprobe", "breakpoint", "patch"):
        if mechanism != counted_by_default("./clockprof"):
            suites.append((f"integration-{mechanism}", [
                sys.executable, "tests/integration/run.py", "--clockprof", "./clockprof",
                "--targets", os.path.join(args.build, "tests", "targets"),
                "--mechanism", mechanism]))
    if os.path.exists("tests/browser/Makefile"):
        suites.append(("browser", ["make", "--no-print-directory", "-C", "tests/browser",
                                   "check", f"CLOCKPROF={os.path.abspath('clockprof')}"]))
    if os.geteuid() != 0:
        # Counted, never dropped: a suite that cannot run here is one skip
        # in the summary, with its reason.
        for name, _ in suites:
            if name in NEEDS_ROOT:
                print(f"{name}: skipped: needs root (BPF)")
                total[2] += 1
        suites = [suite for suite in suites if suite[0] not in NEEDS_ROOT]
    run_parallel([s for s in suites if not serial(s[0])], env, total)
    for name, cmd in suites:
        if serial(name):
            for i, n in enumerate(run_suite(name, cmd, env)):
                total[i] += n
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
