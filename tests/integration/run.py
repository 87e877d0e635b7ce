#!/usr/bin/env python3
"""Integration tests: run the real clockprof binary (as root, with BPF) against
reference targets whose clock reads are known by construction.

Each tests/integration/test_*.py defines functions named test_*(ctx). A test
fails by raising (assert), skips by raising Skip(reason). ctx gives:
  ctx.clockprof  path of the binary          ctx.targets  dir of built targets
  ctx.tmp        a fresh temporary directory  ctx.run(*args, **kw) -> CompletedProcess
  ctx.target(name) path of a built target     ctx.load_json(path)
Prints one line per test and ends with "integration: N passed, N failed, N skipped".
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Skip  # noqa: E402


class Context:
    def __init__(self, clockprof, targets, tmp):
        self.clockprof = os.path.abspath(clockprof)
        self.targets = os.path.abspath(targets)
        self.tmp = tmp

    def target(self, name):
        path = os.path.join(self.targets, name)
        if not os.path.exists(path):
            raise AssertionError(f"reference target {path} was not built")
        return path

    def run(self, *args, timeout=120, check=False, **kw):
        """Runs clockprof with args; returns the CompletedProcess (text)."""
        cmd = [self.clockprof, *map(str, args)]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout, **kw)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("filters", nargs="*", help="run only tests whose names contain one of these")
    args = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    passed = failed = skipped = 0
    for fname in sorted(os.listdir(here)):
        if not (fname.startswith("test_") and fname.endswith(".py")):
            continue
        mod = load_module(os.path.join(here, fname))
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            fn = getattr(mod, name)
            full = f"{fname[:-3]}.{name}"
            if args.filters and not any(f in full for f in args.filters):
                continue
            tmp = tempfile.mkdtemp(prefix="clockprof-it-")
            ctx = Context(args.clockprof, args.targets, tmp)
            start = time.monotonic()
            try:
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
    print(f"integration: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
