#!/usr/bin/env python3
"""The shipped CI workflow (examples/github-actions.yml) is valid YAML, has
the steps a user needs (build clockprof, build base and head, `ab` with a
load driving the program, `compare` with bounds, step summary, report.html
uploaded), and every
clockprof command in it names a real subcommand and real options: they are
checked against the built binary's own --help, so a renamed option breaks
this test, not the user's CI. Prints "examples: N passed, N failed"."""
import argparse
import re
import shlex
import subprocess
import sys

import yaml

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def help_text(clockprof, *args):
    proc = subprocess.run([clockprof, *args, "--help"], capture_output=True, text=True)
    return proc.stdout


def subcommands(clockprof):
    return set(re.findall(r"^\s+clockprof (\w+) ", help_text(clockprof), re.M))


def options_of(clockprof, sub):
    text = help_text(clockprof, sub)
    return set(OPTION.findall(text)) | {"-h", "--help"}


def commands(script):
    """Each clockprof invocation in a step's script, as a token list."""
    joined = re.sub(r"\\\n\s*", " ", script)
    for line in joined.splitlines():
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:
            continue
        while tokens and tokens[0] in ("sudo", "time", "env"):
            tokens = tokens[1:]
        if tokens and tokens[0] == "clockprof":
            yield tokens[1:]


def load_around_ab(script):
    """The script runs `clockprof ab` with a load started before it in the
    background (a line ending in a lone `&`) and stopped in the script
    (`kill`): without load a server serves nothing, and a gate on runs
    of no request measured nothing."""
    lines = re.sub(r"\\\n\s*", " ", script).splitlines()
    ab = [i for i, line in enumerate(lines)
          if re.match(r"\s*(sudo\s+)?clockprof\s+ab\b", line)]
    if not ab:
        return False
    before = lines[:ab[0]]
    started = any(re.search(r"(?<!&)&\s*$", line) and "clockprof" not in line
                  for line in before)
    return started and any(re.search(r"\bkill\b", line) for line in lines)


def options_used(args):
    """Options given to clockprof itself: up to the first `--` (after it
    come the commands that `run`/`ab` launch)."""
    used = []
    for t in args:
        if t == "--":
            break
        if t.startswith("-") and len(t) > 1 and not t.startswith("-$"):
            used.append(t.split("=", 1)[0])
    return used


def check(workflow, clockprof):
    results = []

    def expect(name, ok, detail=""):
        results.append((name, bool(ok), detail))

    with open(workflow) as f:
        doc = yaml.safe_load(f)
    # YAML 1.1 reads the key `on` as the boolean true.
    triggers = doc.get("on", doc.get(True))
    expect("runs on pull requests", isinstance(triggers, dict) and "pull_request" in triggers)
    jobs = doc.get("jobs") or {}
    steps = [s for job in jobs.values() for s in job.get("steps", [])]
    expect("has steps", steps)
    scripts = [s["run"] for s in steps if "run" in s]
    invocations = [args for script in scripts for args in commands(script)]
    known = subcommands(clockprof)
    expect("clockprof --help lists subcommands", {"ab", "compare", "run"} <= known, sorted(known))
    for args in invocations:
        if not args or args[0].startswith("-"):
            expect(f"clockprof {' '.join(args)}", args == ["--version"], "only --version")
            continue
        sub = args[0]
        expect(f"subcommand {sub} exists", sub in known)
        valid = options_of(clockprof, sub)
        for opt in options_used(args[1:]):
            expect(f"clockprof {sub} {opt} is an option", opt in valid)
    subs = {args[0] for args in invocations if args}
    text = "\n".join(scripts)
    expect("builds and installs clockprof from source",
           re.search(r"make\b.*\binstall\b", text) and "clockprof --version" in text)
    expect("runs base and head interleaved with clockprof ab", "ab" in subs)
    ab_scripts = [s for s in scripts if any(a and a[0] == "ab" for a in commands(s))]
    expect("a load drives the program during clockprof ab (started before it "
           "in the background, stopped after)",
           ab_scripts and all(load_around_ab(s) for s in ab_scripts))
    compare = [a for a in invocations if a and a[0] == "compare"]
    expect("gates with clockprof compare --bounds",
           compare and all("--bounds" in a for a in compare))
    expect("writes the step summary (--markdown appends to $GITHUB_STEP_SUMMARY)",
           compare and all("--markdown" in a for a in compare))
    ab = [a for a in invocations if a and a[0] == "ab"]
    expect("compare reads the files ab writes",
           ab and compare and all(f"{a[2]}/base-*.json" in c and f"{a[2]}/head-*.json" in c
                                  for a in ab for c in compare))
    html = [c[c.index("--html") + 1] for c in compare if "--html" in c]
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    expect("uploads report.html as an artifact, even when the gate fails",
           html and uploads and all(h in str(u.get("with", {}).get("path", "")) for h in html
                                    for u in uploads)
           and all("always()" in str(u.get("if", "")) for u in uploads))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", default="./clockprof")
    ap.add_argument("workflow", nargs="?", default="examples/github-actions.yml")
    args = ap.parse_args()
    try:
        results = check(args.workflow, args.clockprof)
    except (OSError, yaml.YAMLError) as e:
        print(f"FAIL {args.workflow}: {e}")
        print("examples: 0 passed, 1 failed")
        return 1
    for name, ok, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok or not detail else f' ({detail})'}")
    failed = sum(not ok for _, ok, _ in results)
    print(f"examples: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
