#!/usr/bin/env python3
"""Integration tests: run the real clockprof binary (as root, with BPF) against
reference targets whose clock reads are known by construction.

Each tests/integration/test_*.py defines functions named test_*(ctx). A test
fails by raising (assert), skips by raising Skip(reason). ctx gives:
  ctx.clockprof  path of the binary          ctx.targets  dir of built targets
  ctx.mechanism  "uprobe", "breakpoint", "patch", or "auto": what run/attach/ab
                 are asked to count with (ctx.counted(): what then counts)
  ctx.tmp        a fresh temporary directory  ctx.run(*args, **kw) -> CompletedProcess
  ctx.target(name) path of a built target     ctx.load_json(path)
Prints one line per test and ends with "integration: N passed, N failed, N skipped".

Without --mechanism every module runs with clockprof's own default (what
its --help says: auto, the vDSO patch, else uprobes), which ctx.mechanism
then names. With --mechanism M only the modules that name M run, through a
wrapper that adds the option to every run/attach/ab that does not give one
itself: BOTH_MECHANISMS = True names uprobe and breakpoint, MECHANISMS =
("uprobe", "patch", ...) names its own list. On a host where a mechanism
does not fire (hardware breakpoints), each of their tests is skipped with
clockprof's own reason (its start-up self-test).
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Skip  # noqa: E402
from hang_report import Hung, end, report_and_end  # noqa: E402


class Context:
    def __init__(self, clockprof, targets, tmp, mechanism="uprobe"):
        self.clockprof = os.path.abspath(clockprof)
        self.targets = os.path.abspath(targets)
        self.tmp = tmp
        self.mechanism = mechanism

    def counted(self, stacks=False):
        """What counts a run asked for ctx.mechanism, on a target the patch
        can patch: auto takes the patch, or uprobes for --stacks."""
        if self.mechanism == "auto":
            return "uprobe" if stacks else "patch"
        return self.mechanism

    def target(self, name):
        path = os.path.join(self.targets, name)
        if not os.path.exists(path):
            raise AssertionError(f"reference target {path} was not built")
        return path

    def run(self, *args, timeout=120, check=False, **kw):
        """Runs clockprof with args; returns the CompletedProcess (text)."""
        cmd = [self.clockprof, *map(str, args)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             **kw)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Hung(cmd, timeout, output=f"its stacks:\n{report_and_end(p)}") from None
        finally:
            if p.poll() is None:  # interrupted: nothing left running
                end(p)
            p.stdout.close()
            p.stderr.close()
        proc = subprocess.CompletedProcess(cmd, p.returncode, out, err)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n"
                                 f"{proc.stderr}")
        return proc

    def load_json(self, path):
        with open(path) as f:
            return json.load(f)


def load_module(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def mechanism_wrapper(clockprof, mechanism, directory):
    """A clockprof that counts with `mechanism`, for tests that call it."""
    path = os.path.join(directory, "clockprof")
    real = os.path.abspath(clockprof)
    # A test that names a mechanism itself keeps it (given twice, the
    # option is refused).
    with open(path, "w") as f:
        f.write("#!/bin/bash\n"
                f'mech=(--mechanism {mechanism})\n'
                'for a in "$@"; do [ "$a" = -- ] && break; '
                '[ "$a" = --mechanism ] || [[ "$a" == --mechanism=* ]] && mech=(); done\n'
                f'case "$1" in\n'
                f'run|attach) sub=$1; shift; exec {real} "$sub" "${{mech[@]}}" "$@" ;;\n'
                f'ab) n=$2; dir=$3; shift 3; exec {real} ab "$n" "$dir" "${{mech[@]}}" "$@" ;;\n'
                f'esac\nexec {real} "$@"\n')
    os.chmod(path, 0o755)
    return path


def module_mechanisms(mod):
    """The mechanisms a test module runs with by name, besides clockprof's
    default: none unless it names them."""
    both = ("uprobe", "breakpoint") if getattr(mod, "BOTH_MECHANISMS", False) else ()
    return getattr(mod, "MECHANISMS", both)


def default_mechanism(clockprof):
    """The mechanism clockprof counts with when none is asked for, as its
    --help says it ("default: auto")."""
    out = subprocess.run([clockprof, "run", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    m = re.search(r"how reads are seen \(default: (\w+)\)", " ".join(out.split()))
    assert m, "clockprof run --help names no default --mechanism"
    return m.group(1)


def mechanism_unavailable(clockprof, mechanism):
    """clockprof's own start-up self-test: None when the mechanism fires
    here, else the one-line reason it gave."""
    proc = subprocess.run([clockprof, "run", "-q", "-e", "none", "--mechanism", mechanism,
                           "--", "true"], capture_output=True, text=True, timeout=60)
    return None if proc.returncode == 0 else proc.stderr.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--mechanism", choices=("uprobe", "breakpoint", "patch"),
                    help="only the modules that name it, with it (default: every module, "
                    "with clockprof's default)")
    ap.add_argument("filters", nargs="*", help="run only tests whose names contain one of these")
    args = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    passed = failed = skipped = 0
    clockprof, unavailable = args.clockprof, None
    mechanism = args.mechanism or default_mechanism(args.clockprof)
    if args.mechanism:
        wrapdir = tempfile.mkdtemp(prefix="clockprof-mech-")
        clockprof = mechanism_wrapper(args.clockprof, args.mechanism, wrapdir)
        unavailable = mechanism_unavailable(args.clockprof, args.mechanism)
        print(f"mechanism {args.mechanism}: "
              f"{unavailable or 'fires on this host (self-test passed)'}", flush=True)
    else:
        print(f"mechanism: clockprof's default, {mechanism}", flush=True)
    for fname in sorted(os.listdir(here)):
        if not (fname.startswith("test_") and fname.endswith(".py")):
            continue
        mod = load_module(os.path.join(here, fname))
        if args.mechanism and args.mechanism not in module_mechanisms(mod):
            continue
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            fn = getattr(mod, name)
            full = f"{fname[:-3]}.{name}"
            if args.filters and not any(f in full for f in args.filters):
                continue
            tmp = tempfile.mkdtemp(prefix="clockprof-it-")
            ctx = Context(clockprof, args.targets, tmp, mechanism)
            start = time.monotonic()
            try:
                if unavailable:
                    raise Skip(unavailable)
                fn(ctx)
            except Skip as e:
                skipped += 1
                print(f"SKIP {full}: {e}", flush=True)
            except Exception:
                failed += 1
                print(f"FAIL {full}", flush=True)
                traceback.print_exc(file=sys.stdout)
            else:
                passed += 1
                print(f"ok   {full} ({time.monotonic() - start:.1f}s)", flush=True)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    suite = f"integration-{args.mechanism}" if args.mechanism else "integration"
    print(f"{suite}: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
