#!/usr/bin/env python3
"""make bench: what clockprof costs, measured side by side in one run on this
machine (ratios, not absolute times, are what carry over to other machines).

1. ns per clock_gettime read in a tight loop: with no probe, with a bare
   kernel uprobe counter on libc's clock_gettime (perf_event_open, counting
   mode, no BPF: plain counting at its cheapest), and, for each mechanism
   (uprobe; breakpoint where this host fires hardware breakpoints, else
   "skipped" with clockprof's reason), under `clockprof run --mechanism M`
   and with --stacks, each paired with a bare baseline taken just before it
   (medians of the paired ratios over 5 rounds). --stacks is measured twice:
   as it runs once every function's unwind rules are in place (clock_loop's
   best round), and as it runs before that, when the program copies each
   read's stack instead (CLOCKPROF_STACK_RULES_AFTER_WINDOW=1 holds the
   rules back for the whole run). Goals: clockprof / bare uprobe <= 1.10x,
   --stacks / plain clockprof <= 1.5x, both ways. Then, per
   mechanism, an unrelated clock_loop (vdso and syscall) alone and while
   clockprof is attached to another process, interleaved, medians: goal
   attached / alone <= 1.05x.
   A goal missed prints OVER; nothing here fails on time.
2. Start-up against bpftrace, interleaved in one run: `clockprof attach
   -d 100ms -e none PID` against bpftrace counting one libc uprobe in the
   same target with a 100 ms interval exit: time from start until the
   probes are live, whole-command time beyond the window, and maxrss.
   Goals: live and beyond-the-window <= 0.25x bpftrace's, memory <= 0.3x.
   Beside them, the start-up floor of the host: a bare uprobe counter
   opened at once from spawn (bench-bare-uprobe live).
   Then what --stacks adds to start-up on a C++ target (no goal: shown),
   and how far into the window every function's rules were in place.
3. How long naming the stacks takes at the end of a --stacks window
   (probe.naming_s) on the demo target, with the host's debug files and
   with /usr/lib/debug hidden (an empty tmpfs over it in a mount namespace
   of its own: libc6-dbg as if not installed), interleaved, medians.
4. How soon a window ends: from the target's exit to `clockprof attach`'s
   (the integration test only asserts that the exit is noticed), and how far
   `clockprof run -d 500ms` of a command that never ends runs past 500 ms
   (SIGTERM, not the SIGKILL 2 s later, ends it).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from readiness import wait_attached, wait_serving  # noqa: E402


def sh(*cmd):
    return subprocess.run(list(map(str, cmd)), capture_output=True, text=True, check=True).stdout


MECHANISMS = ("uprobe", "breakpoint")
OTHER_KINDS = ("vdso", "syscall")
OTHER_CYCLES = 5


def verdict(ratio, goal):
    return "within" if ratio <= goal else "OVER"


# How a run's stacks are taken: not at all, walked by the program, or
# copied by it and walked by clockprof (every function's rules held back).
STACK_MODES = ("plain", "stacks", "copied")


def under_clockprof(args, tmp, loop, mech, stacks):
    """ns per read of clock_loop under `clockprof run --mechanism mech` with
    stacks one of STACK_MODES, and the reads counted; (None, reason) if
    clockprof says the mechanism does not fire on this host (exit 3)."""
    out = os.path.join(tmp, "loop.json")
    cmd = [args.clockprof, "run", "-q", "-e", "none", "--mechanism", mech, "-o", out]
    cmd += ["--stacks"] if stacks != "plain" else []
    env = dict(os.environ, CLOCKPROF_STACK_RULES_AFTER_WINDOW="1" if stacks == "copied" else "0")
    r = subprocess.run(cmd + ["--", loop, "vdso", str(args.n)], capture_output=True, text=True,
                       env=env)
    if r.returncode == 3:
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        return None, (lines[-1] if lines else "exit 3").removeprefix("clockprof: ")
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
    return float(r.stdout.strip()), json.load(open(out))["clock_reads"]["total"]


def other_ns(loop):
    """Best of three runs of clock_loop per kind: ns per call."""
    return {k: min(float(sh(loop, k, 300000)) for _ in range(3)) for k in OTHER_KINDS}


def other_process(args, tmp, reads_target, mech):
    """Alone, attached, alone, ... measurements of an unrelated clock_loop
    while `clockprof attach --mechanism mech` watches reads_target."""
    loop = os.path.join(args.targets, "clock_loop")
    target = subprocess.Popen([reads_target, "mix", "1", "0"])
    alone, during = [], []
    try:
        wait_serving(target)
        alone.append(other_ns(loop))
        for _ in range(OTHER_CYCLES):
            proc = subprocess.Popen([args.clockprof, "attach", "-q", "-d", "60", "--mechanism", mech,
                                     "-o", os.path.join(tmp, "other.json"), str(target.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_attached(proc)
            during.append(other_ns(loop))
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                raise RuntimeError(f"clockprof attach --mechanism {mech}: exit {proc.returncode}: {err}")
            alone.append(other_ns(loop))
    finally:
        target.kill()
        target.wait()
    return alone, during


def timed(cmd, live_prefix, on_stderr=False):
    """Runs cmd; returns (wall s, s from its spawn until a line starting
    with live_prefix appeared on its stdout (stderr if on_stderr) or None,
    its maxrss in KiB, stdout). The other stream is read by a thread, so
    that neither pipe can fill while the live line is awaited."""
    t0 = time.monotonic()
    proc = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watched, other = (proc.stderr, proc.stdout) if on_stderr else (proc.stdout, proc.stderr)
    rest = []
    reader = threading.Thread(target=lambda: rest.append(other.read()))
    reader.start()
    live, seen = None, b""
    for line in watched:
        seen += line
        if live is None and line.startswith(live_prefix):
            live = time.monotonic() - t0
    reader.join()
    out, err = (rest[0], seen) if on_stderr else (seen, rest[0])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {proc.returncode}: {err.decode()}")
    return wall, live, usage.ru_maxrss, out.decode()


def libc_of(pid):
    for line in open(f"/proc/{pid}/maps"):
        if line.rstrip().endswith("/libc.so.6"):
            return line.split()[-1]
    raise RuntimeError(f"pid {pid} maps no libc.so.6")


WINDOW_S = 0.1
# Before each timed start: long enough for the kernel to finish the last
# tool's uprobe removals and the grace period after them, so that every
# tool's first registration starts from the same idle state. Without it,
# whichever tool starts within a grace period of the last removal skips
# the grace period a first registration waits for.
SETTLE_S = 0.3


def startup_against_bpftrace(args, tmp, reads_target):
    """`clockprof attach -d 100ms -e none PID` against bpftrace counting one
    libc uprobe in the same target with a 100 ms interval exit, interleaved,
    and the start-up floor beside them: bench-bare-uprobe opening one bare
    uprobe counter at once (exec, then the kernel's first registration, which
    waits for an RCU grace period; bpftrace and clockprof wait for it too).
    Each is timed from its spawn to the line it prints once its probes are
    live: bpftrace's BEGIN probe (bpftrace fires BEGIN after attaching every
    other probe), clockprof's "probes live" line (-v), the floor's "live"."""
    bpftrace = shutil.which("bpftrace")
    bare_bin = os.path.join(args.build, "bench-bare-uprobe")
    target = subprocess.Popen([reads_target, "clock_gettime", "1", "0"])
    ours, theirs, floor = [], [], []
    try:
        wait_serving(target)
        libc = libc_of(target.pid)
        offset = sh(bare_bin, "offset", libc).strip()
        script = (f'BEGIN {{ printf("live\\n"); }} uprobe:{libc}:clock_gettime '
                  f'{{ @n = count(); }} interval:ms:{int(WINDOW_S * 1000)} {{ exit(); }}')
        out = os.path.join(tmp, "attach.json")
        for _ in range(7):
            time.sleep(SETTLE_S)
            wall, live, rss, _ = timed([args.clockprof, "attach", "-v", "-d", f"{int(WINDOW_S * 1000)}ms",
                                        "-e", "none", "-o", out, target.pid],
                                       b"clockprof: probes live", on_stderr=True)
            if live is None:
                raise RuntimeError("clockprof -v printed no 'probes live' line")
            ours.append((live, wall, rss))
            time.sleep(SETTLE_S)
            _, live, _, text = timed([bare_bin, "live", target.pid, libc, offset, int(WINDOW_S * 1000)], b"live\n")
            if live is None or int(text.split()[-1]) == 0:
                raise RuntimeError(f"bench-bare-uprobe live printed no 'live' line or counted nothing: {text!r}")
            floor.append(live)
            if bpftrace:
                time.sleep(SETTLE_S)
                wall, live, rss, text = timed([bpftrace, "-B", "none", "-q", "-p", target.pid, "-e", script],
                                              b"live\n")
                if live is None or "@n:" not in text:
                    raise RuntimeError(f"bpftrace printed no 'live' line or count: {text!r}")
                theirs.append((live, wall, rss))
    finally:
        target.kill()
        target.wait()

    def med(rows, i):
        return statistics.median(r[i] for r in rows)

    print(f"start-up and end of a {int(WINDOW_S * 1000)} ms window, one target "
          f"(median of {len(ours)}, interleaved, {SETTLE_S * 1000:.0f} ms apart):")
    live, wall, rss = med(ours, 0), med(ours, 1), med(ours, 2)
    flive = statistics.median(floor)
    print(f"  clockprof attach -d 100ms -e none: probes live {live * 1000:7.1f} ms, "
          f"whole command {wall * 1000:7.1f} ms (beyond the window {(wall - WINDOW_S) * 1000:7.1f} ms), "
          f"maxrss {rss / 1024:6.1f} MiB")
    print(f"  floor, one bare uprobe at once:    probes live {flive * 1000:7.1f} ms "
          f"(exec and the kernel's first registration); clockprof "
          f"{(live - flive) * 1000:.1f} ms later")
    if not bpftrace:
        print("  bpftrace: skipped: not installed (make test-deps installs it)")
        return
    blive, bwall, brss = med(theirs, 0), med(theirs, 1), med(theirs, 2)
    print(f"  bpftrace, one libc uprobe:         probes live {blive * 1000:7.1f} ms, "
          f"whole command {bwall * 1000:7.1f} ms (beyond the window {(bwall - WINDOW_S) * 1000:7.1f} ms), "
          f"maxrss {brss / 1024:6.1f} MiB")
    for what, a, b, goal in (("start -> probes live", live, blive, 0.25),
                             ("overhead beyond the window", wall - WINDOW_S, bwall - WINDOW_S, 0.25),
                             ("memory (maxrss)", rss, brss, 0.3)):
        print(f"  {what + ', clockprof / bpftrace':<48} ratio {a / b:6.3f}  "
              f"goal <= {goal}x: {verdict(a / b, goal)}")
    print(f"  {'start -> probes live, floor / bpftrace':<48} ratio {flive / blive:6.3f}  "
          "(exec and the first registration alone: the kernel's share)")


def stacks_startup(args, tmp):
    """What --stacks adds to start-up: `clockprof attach -d 100ms -e none`
    of a C++ target (libstdc++, libm, libgcc_s, libc: every function's
    unwind rules are loaded with --stacks) with and without it, interleaved;
    probes live from run.json's probe.attach_s."""
    target = subprocess.Popen([os.path.join(args.targets, "callsites_cpp_target"), "1000000", "1000"],
                              stdout=subprocess.DEVNULL)
    live = {False: [], True: []}
    rules, copied = [], []
    try:
        wait_serving(target)
        out = os.path.join(tmp, "stacks.json")
        for _ in range(7):
            for stacks in (False, True):
                sh(args.clockprof, "attach", "-q", "-d", f"{int(WINDOW_S * 1000)}ms", "-e", "none",
                   *(["--stacks"] if stacks else []), "-o", out, target.pid)
                probe = json.load(open(out))["probe"]
                live[stacks].append(probe["attach_s"])
                if stacks:
                    copied.append(probe["stacks_from_copies"])
                    if probe["stack_rules_s"] is not None:
                        rules.append(probe["stack_rules_s"])
    finally:
        target.kill()
        target.wait()
    plain, stacks = statistics.median(live[False]), statistics.median(live[True])
    print(f"start-up with --stacks, C++ target (median of {len(live[True])}, interleaved):")
    print(f"  probes live: {plain * 1000:7.1f} ms plain, {stacks * 1000:7.1f} ms with --stacks "
          f"(ratio {stacks / plain:5.2f})")
    in_place = f"{statistics.median(rules) * 1000:.1f} ms into the window" if rules else "not in the window"
    print(f"  every function's unwind rules in place {in_place} ({len(rules)} of {len(copied)} runs); "
          f"stacks walked from copies before that: median {statistics.median(copied)}")


def naming_with_and_without_debug_files(args, tmp):
    """probe.naming_s of `run -d 1 --stacks` on the demo target, with the
    debug files this host has and with none (libc6-dbg's libc debug file
    was what made it slow: its compressed DWARF inflated for a few frames)."""
    out = os.path.join(tmp, "naming.json")
    cmd = [args.clockprof, "run", "-q", "-d", "1", "-e", "none", "-r", "func:handle_request",
           "--stacks", "-o", out, "--", os.path.join(args.targets, "callsites_target"), "0", "500"]
    hidden = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /usr/lib/debug && exec "$@"', "sh"]
    times = {"as installed": [], "no debug files": []}
    for _ in range(5):
        for label, prefix in (("as installed", []), ("no debug files", hidden)):
            if subprocess.run(prefix + cmd, stdout=subprocess.DEVNULL).returncode == 0:
                times[label].append(json.load(open(out))["probe"]["naming_s"])
    dbg = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", "libc6-dbg"],
                         capture_output=True, text=True).stdout
    print(f"naming stacks at the end of a --stacks window, demo target (median of 5; "
          f"libc6-dbg {'installed' if 'ok installed' in dbg else 'not installed'}):")
    for label, v in times.items():
        shown = f"{statistics.median(v) * 1000:8.1f} ms" if v else "  not measured"
        print(f"  {label:<30} {shown}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clockprof", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--build", default="build")
    ap.add_argument("-n", type=int, default=20000, help="reads per round")
    args = ap.parse_args()
    loop = os.path.join(args.targets, "clock_loop")
    bare_bin = os.path.join(args.build, "bench-bare-uprobe")
    tmp = tempfile.mkdtemp(prefix="clockprof-bench-")

    reads_target = os.path.join(args.targets, "reads_target")
    # Section 1: in a round, each mechanism is measured right after its own
    # bare baseline, then with --stacks; the ratios are taken within the
    # round (paired) and their median over the rounds is the figure, so a
    # load change on this shared host between rounds cancels out.
    skipped = {}  # mechanism -> clockprof's one-line reason
    ROUNDS = 5
    rows = []
    for _ in range(ROUNDS):  # interleaved repetitions
        row = {}
        for mech in MECHANISMS:
            if mech in skipped:
                continue
            bare, uprobe, hits = sh(bare_bin, args.n).split()
            assert int(hits) >= 5 * args.n, hits
            row.setdefault("none", []).append(float(bare))
            row.setdefault("bare", []).append(float(uprobe))
            for stacks in STACK_MODES:
                ns, counted = under_clockprof(args, tmp, loop, mech, stacks)
                if ns is None:
                    skipped[mech] = counted
                    break
                assert counted >= 5 * args.n, (mech, stacks, counted)
                row[(mech, stacks)] = ns
            if mech not in skipped:
                row[(mech, "ratio")] = row[(mech, "plain")] / float(uprobe)
                for stacks in STACK_MODES[1:]:
                    row[(mech, stacks, "ratio")] = row[(mech, stacks)] / row[(mech, "plain")]
        rows.append(row)

    def med(key):
        return statistics.median(r[key] for r in rows)

    print(f"per clock read ({args.n} reads x 5 rounds, best round; {ROUNDS} rounds, each mechanism paired "
          "with a bare uprobe baseline taken just before it; medians):")
    print(f"  no probe                           {statistics.median(x for r in rows for x in r['none']):10.1f} ns")
    print(f"  bare kernel uprobe counter         {statistics.median(x for r in rows for x in r['bare']):10.1f} ns")
    for mech in MECHANISMS:
        if mech in skipped:
            print(f"  {mech}: skipped: {skipped[mech]}")
            continue
        ratio = med((mech, "ratio"))
        print(f"  {mech + ': clockprof':<34} {med((mech, 'plain')):10.1f} ns   "
              f"ratio / bare uprobe {ratio:6.3f}  goal <= 1.10x: {verdict(ratio, 1.10)}")
        for stacks, label in (("stacks", "--stacks"), ("copied", "--stacks, copied")):
            sratio = med((mech, stacks, "ratio"))
            print(f"  {mech + ': clockprof ' + label:<34} {med((mech, stacks)):10.1f} ns   "
                  f"ratio / plain       {sratio:6.3f}  goal <= 1.5x: {verdict(sratio, 1.5)}")

    # Section 1b: an unrelated process (clock_loop) while clockprof is
    # attached to reads_target: alone, attached, alone, ... per mechanism.
    print(f"unrelated process while clockprof is attached elsewhere (clock_loop, {OTHER_CYCLES} cycles, medians):")
    for mech in MECHANISMS:
        if mech in skipped:
            print(f"  {mech}: skipped: {skipped[mech]}")
            continue
        alone, during = other_process(args, tmp, reads_target, mech)
        for k in OTHER_KINDS:
            a = statistics.median(x[k] for x in alone)
            d = statistics.median(x[k] for x in during)
            print(f"  {mech + ': ' + k:<20} {a:8.1f} ns/call alone, {d:8.1f} attached   "
                  f"ratio {d / a:6.3f}  goal <= 1.05x: {verdict(d / a, 1.05)}")

    startup_against_bpftrace(args, tmp, reads_target)
    stacks_startup(args, tmp)

    naming_with_and_without_debug_files(args, tmp)
    noticed, overrun = [], []
    for _ in range(5):  # interleaved repetitions
        target = subprocess.Popen([reads_target, "mix", "1", "500"])
        try:
            wait_serving(target)
            proc = subprocess.Popen([args.clockprof, "attach", "-q", "-d", "30", "-o",
                                     os.path.join(tmp, "exit.json"), str(target.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_attached(proc)
            target.wait()
            exited = time.monotonic()
            proc.wait(timeout=60)
            noticed.append(time.monotonic() - exited)
            assert json.load(open(os.path.join(tmp, "exit.json")))["end_reason"] == "target-exit"
        finally:
            target.kill()
            target.wait()
        t0 = time.monotonic()
        sh(args.clockprof, "run", "-q", "-e", "none", "-d", "500ms", "-o", os.path.join(tmp, "term.json"),
           "--", reads_target, "time", 1, 0)
        overrun.append(time.monotonic() - t0 - 0.5)
    print("end of the window (median of 5):")
    print(f"  target exits -> 'attach' exits      {statistics.median(noticed) * 1000:8.1f} ms")
    print(f"  'run -d 500ms', endless command:    {statistics.median(overrun) * 1000:8.1f} ms past 500 ms "
          "(start-up and write-out included; SIGKILL would come 2000 ms after SIGTERM)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
