"""`run` follows the processes the target forks (lib/probe/window/
window_processes.c): each counted in its own copy of the patched vDSO,
its requests by its own boundaries, every count exact against
tests/targets/fork_tree_target, whose tree of processes reads and serves
a known number of times; `--no-inherit` counts the target alone."""
import os
import shutil
import signal
import subprocess
import time

from common import Skip, code_changed
from readiness import wait_attached, wait_for, wait_serving

MECHANISMS = ("patch",)
READS = 3  # per request of fork_tree_target


def expected_tree(children, n, linger=False):
    """fork_tree_target's processes as (parent index, requests served),
    the root first: child i serves (i + 1) * n, child 0's child n."""
    tree = [(None, 2 * n)]
    for i in range(children):
        tree.append((0, (i + 1) * n))
    if children:
        tree.append((1, n))
    if linger:
        tree.append((0, n))
    return tree


def run_tree(ctx, boundary, *args, extra=()):
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    out = os.path.join(ctx.tmp, "tree.json")
    proc = ctx.run("run", "-q", "-e", "none", "-r", boundary, "-o", out, *extra, "--",
                   ctx.target("fork_tree_target"), *args)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return ctx.load_json(out), proc.stdout


def check_tree(run, tree):
    """Totals, the histogram and every process's row against the tree."""
    served = sum(n for _, n in tree)
    requests = sum(n - 1 for _, n in tree)
    assert run["clock_reads"]["total"] == READS * served, (run["clock_reads"], run["warnings"])
    assert run["request"]["count"] == requests, run["request"]
    assert run["per_request"]["histogram"] == [[READS, requests]], run["per_request"]
    rows = run["processes"]
    assert len(rows) == len(tree), rows
    assert rows[0]["pid"] == run["target"]["pid"], rows[0]
    pids = [r["pid"] for r in rows]
    # Rows after the root are in the order they started; the grandchild
    # starts while its parent's siblings may still be forked: match each
    # row by what it served and its parent.
    want = sorted((READS * n, n - 1, p is None) for p, n in tree)
    got = sorted((r["reads"], r["requests"], i == 0) for i, r in enumerate(rows))
    assert got == want, (got, want)
    for r in rows[1:]:
        assert r["parent"] in pids, (r, pids)
        assert r["counted"] and not r["execed"], r
        assert r["reads_per_request"] == READS, r
        assert r["executable"] == run["target"]["exe"], r
    exe = run["executables"]
    assert len(exe) == 1 and exe[0]["processes"] == len(tree), exe
    assert exe[0]["reads"] == READS * served and exe[0]["requests"] == requests, exe


def test_run_counts_every_forked_process_exactly(ctx):
    """Three children and a grandchild, a func: boundary: every read and
    request of each counted, each process in its own row, and the summary
    says each and their rollup by executable."""
    run, _ = run_tree(ctx, "func:serve_one", 3, 50)
    check_tree(run, expected_tree(3, 50))
    assert not any("not counted" in w for w in run["warnings"]), run["warnings"]
    proc = ctx.run("run", "-e", "none", "-r", "func:serve_one", "--",
                   ctx.target("fork_tree_target"), 3, 50)
    assert proc.returncode == 0, proc.stderr
    assert "processes (5; the target first)" in proc.stdout, proc.stdout
    assert f"{ctx.target('fork_tree_target')}: 5 processes, {READS * 450} reads (150 to 450 " \
           f"each), 445 requests, 3.000 reads/req" in proc.stdout, proc.stdout


def pristine_outside_padding(pid):
    """Whether pid's vDSO holds the kernel's code, as this process's does,
    wherever that code is not padding (the patch leaves its inert code in
    padding and its area; a site left switched would show in the code)."""
    def image(who):
        with open(f"/proc/{who}/maps") as f:
            line = next(x for x in f if x.rstrip().endswith("[vdso]"))
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        with open(f"/proc/{who}/mem", "rb") as f:
            f.seek(start)
            return f.read(end - start)
    theirs, ours = image(pid), image("self")
    padding = nop_bytes(ours)
    return [hex(i) for i in range(len(ours)) if theirs[i] != ours[i] and i not in padding]


def nop_bytes(code):
    """Offsets of code's padding: int3, zeros, and nop instructions, one or
    many bytes long (0f 1f /0 with its ModRM's length, behind 66 and 2e
    prefixes), where the patch may leave an inert jump."""
    lengths = {0x00: 3, 0x40: 4, 0x44: 5, 0x80: 7, 0x84: 8}
    out, i = set(), 0
    while i < len(code):
        j = i
        while j < len(code) and code[j] in (0x66, 0x2e):
            j += 1
        if code[i] in (0x00, 0x90, 0xcc):
            out.add(i)
            i += 1
        elif code[j:j + 2] == b"\x0f\x1f" and j + 2 < len(code) and code[j + 2] in lengths:
            end = j + lengths[code[j + 2]]
            out.update(range(i, end))
            i = end
        else:
            i += 1
    return out


def run_lingering(ctx, boundary):
    """run_tree with a child that outlives the target: the run and the
    child's pid."""
    run, out = run_tree(ctx, boundary, 2, 40, "linger")
    line = [x for x in out.splitlines() if x.startswith("linger ")]
    assert line, f"the lingering child said nothing: {out!r}"
    return run, int(line[0].split()[1])


def test_run_follows_a_child_that_outlives_the_target(ctx):
    """A syscall boundary, and a child still running when the target exits
    (the window's end): its table is read whole, its vDSO switched back,
    and it runs on to exit cleanly at SIGTERM."""
    run, pid = run_lingering(ctx, "syscall:getppid")
    try:
        check_tree(run, expected_tree(2, 40, linger=True))
        rows = {r["pid"]: r for r in run["processes"]}
        assert rows[pid]["exit_s"] is None, rows[pid]
        assert all(r["exit_s"] is not None for p, r in rows.items() if p != pid), rows
        changed = pristine_outside_padding(pid)
        assert not changed, f"the child's vDSO still differs at {changed}"
    finally:
        os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not os.path.exists(f"/proc/{pid}"):
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the lingering child {pid} did not exit at SIGTERM")


def test_a_child_that_outlives_the_window_gets_its_code_back(ctx):
    """A func: boundary closed in the target: a forked child runs its
    parent's redirects (the boundary, the C library's syscall()). One
    still running when the window ends is switched back, its code its
    files' again, and its requests were counted exactly."""
    run, pid = run_lingering(ctx, "func:serve_one")
    try:
        check_tree(run, expected_tree(2, 40, linger=True))
        assert run["probe"]["hits"] == 0, (run["probe"], run["warnings"])
        assert code_changed(pid) == 0, "the child's code still differs from its files'"
    finally:
        os.kill(pid, signal.SIGTERM)


def test_no_inherit_counts_the_target_alone(ctx):
    """--no-inherit: the root's reads and requests only, the others said
    not counted, and no processes member."""
    run, _ = run_tree(ctx, "func:serve_one", 3, 50, extra=("--no-inherit",))
    assert run["clock_reads"]["total"] == READS * 100, run["clock_reads"]
    assert run["request"]["count"] == 99, run["request"]
    assert "processes" not in run, run.get("processes")
    assert any("started 3 processes" in w for w in run["warnings"]), run["warnings"]


def lingering_other(ctx):
    """Another instance of fork_tree_target, outside any run's tree, that
    lingers (reading nothing) until SIGTERM: the Popen and its pid."""
    other = subprocess.Popen([ctx.target("fork_tree_target"), "0", "1", "linger"],
                             stdout=subprocess.PIPE, text=True)
    line = other.stdout.readline()
    assert line.startswith("linger "), line
    return other, int(line.split()[1])


def test_a_boundary_another_process_runs_is_closed_in_the_tree(ctx):
    """A func: boundary in a file another process runs (another instance
    of the target's executable, outside its tree) is closed in the target
    and its forks, with no uprobe on the file: the forks are followed and
    counted exactly, and the other process is not touched."""
    other, lingerer = lingering_other(ctx)
    try:
        run, _ = run_tree(ctx, "func:serve_one", 2, 20)
        check_tree(run, expected_tree(2, 20))
        assert run["request"]["closed_in_target"] and run["probe"]["hits"] == 0, \
            (run["request"], run["probe"])
        assert not any("not followed" in w for w in run["warnings"]), run["warnings"]
        assert code_changed(lingerer) == 0, "the other process's code was changed"
    finally:
        os.kill(lingerer, signal.SIGTERM)
        other.wait(timeout=30)


def test_a_probe_another_process_runs_is_not_followed(ctx):
    """A --probe uprobe (which keeps the boundary a uprobe too) in a file
    another process runs would trap that process as well: the forks are
    not followed, and the warning names it."""
    other, lingerer = lingering_other(ctx)
    try:
        exe = ctx.target("fork_tree_target")
        run, _ = run_tree(ctx, "func:serve_one", 2, 20, extra=("--probe", f"{exe}:serve_one"))
        assert run["clock_reads"]["total"] == READS * 40, run["clock_reads"]
        assert any("not followed" in w and "also runs" in w for w in run["warnings"]), \
            run["warnings"]
        assert "processes" not in run
    finally:
        os.kill(lingerer, signal.SIGTERM)
        other.wait(timeout=30)


def launched_pid(proc):
    """The pid of the command `clockprof run` (a Popen) launched: its
    child."""
    def child():
        for tid in os.listdir(f"/proc/{proc.pid}/task"):
            with open(f"/proc/{proc.pid}/task/{tid}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        return None
    for _ in range(600):
        pid = child()
        if pid:
            return pid
        assert proc.poll() is None, f"clockprof exited {proc.returncode}"
        time.sleep(0.05)
    raise AssertionError("clockprof launched nothing")


def test_run_env_closes_a_boundary_another_process_runs_in_the_program(ctx):
    """`run -r func:PROG:handle_request -- env PROG` beside an unrelated
    PROG: the boundary is closed in the image env execs (held at its first
    instruction, redirected there), not a uprobe on the file, so the
    launched program's reads and requests are exact (callsites_target
    600 300: 7 reads a request, 599 complete ones, its first a partial
    one), nothing traps, and the other PROG's code is never changed (none
    of its reads counted)."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows execs with the vDSO patch only (counting with {ctx.counted()})")
    exe, out = ctx.target("callsites_target"), os.path.join(ctx.tmp, "env.json")
    other = subprocess.Popen([exe, "0", "500"], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().startswith("ready "), "the other did not start"
        proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o", out, "-r",
                                 f"func:{exe}:handle_request", "--", "env", exe, "600", "300"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        pid = launched_pid(proc)
        # the program exec'd and redirected: a jump in its code (the
        # control), none in the other's, while the window is open
        changed = 0
        for _ in range(400):
            if proc.poll() is not None:
                break
            try:
                if os.readlink(f"/proc/{pid}/exe") == exe and (changed := code_changed(pid)):
                    break
            except OSError:
                pass
            time.sleep(0.01)
        assert changed > 0, "no redirect seen in the launched program's code"
        assert code_changed(other.pid) == 0, "the other process's code was changed"
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"exit {proc.returncode}: {err}"
        assert other.poll() is None, "the other process died"
    finally:
        other.kill()
        other.wait()
    run = ctx.load_json(out)
    reads, rq = run["clock_reads"], run["request"]
    assert (reads["total"], reads["in_requests"]) == (7 * 600, 7 * 599), (reads, run["warnings"])
    assert rq["count"] == 599 and rq["closed_in_target"], (rq, run["warnings"])
    assert run["per_request"]["histogram"] == [[7, 599]], run["per_request"]
    # one trap at most: env's execve (where an image's counts are summed
    # before an exec), none per request
    assert run["probe"]["hits"] <= 1, run["probe"]
    assert [(r["pid"], r["reads"], r["requests"]) for r in run["processes"]] == \
        [(pid, 7 * 600, 599)], run["processes"]
    assert not any("not followed" in w or "not counted" in w or "uprobe" in w
                   for w in run["warnings"]), run["warnings"]


def test_a_shell_pipeline_is_counted_exactly(ctx):
    """`run -- sh -c 'A | B; C; D'`: the shell forks a child for each
    command, which execs it; each is held at its new image's first
    instruction and patched there, so every process is counted exactly:
    against construction (reads_target: K reads a request; D reads 5, then
    execs a reads_target that reads 20: both images) and against the truth
    preloaded into each (a process's slots summed across its exec)."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    import truth
    reads, life = ctx.target("reads_target"), ctx.target("lifecycle_target")
    truth_file, out = os.path.join(ctx.tmp, "pipe.truth"), os.path.join(ctx.tmp, "pipe.json")
    env = dict(os.environ, LD_PRELOAD=ctx.target("clock_truth.so"), CLOCK_TRUTH_FILE=truth_file)
    script = (f"{reads} clock_gettime 3 50 | {reads} gettimeofday 2 40 > /dev/null; "
              f"{reads} time 4 30; {life} exec 5 {reads} clock_gettime 1 20; true")
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--", "/bin/sh", "-c", script, env=env)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    rows = run["processes"]
    by_truth = truth.Truth(truth_file).reads_by_pid()
    print("processes:", [(r["pid"], r["command"], r["reads"], by_truth.get(r["pid"], 0))
                         for r in rows], flush=True)
    assert sorted(r["reads"] for r in rows[1:]) == [25, 80, 120, 150], rows
    assert all(r["counted"] and not r["execed"] for r in rows), rows
    assert all(r["reads"] == by_truth.get(r["pid"], 0) for r in rows), (rows, by_truth)
    assert all(os.path.basename(r["executable"]) == "reads_target" for r in rows[1:]), rows
    assert run["clock_reads"]["total"] == 375, run["clock_reads"]
    assert not any("not counted" in w for w in run["warnings"]), run["warnings"]


def shell_execs(ctx, under=()):
    """run (under: argv before clockprof's) of a shell that execs
    reads_target twice, a func: boundary in it; the run's file."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    reads, out = ctx.target("reads_target"), os.path.join(ctx.tmp, "req.json")
    proc = subprocess.run([*under, ctx.clockprof, "run", "-q", "-e", "none", "-r",
                           f"func:{reads}:handle_request", "-o", out, "--", "/bin/sh", "-c",
                           f"{reads} clock_gettime 3 50; {reads} gettimeofday 2 41; true"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return ctx.load_json(out)


def test_requests_of_a_program_a_shell_execs(ctx):
    """A func:FILE:SYMBOL boundary in the program a shell execs: its
    requests are counted in the process followed into it, exact (reads_target
    clock_gettime 3 50: 49 complete requests of 3 reads, its first a partial
    one; a second run of it, 40 more of 2), closed in each image exec'd
    (redirected as it is held at the exec), with no trap per request."""
    check_shell_execs(shell_execs(ctx))


def test_execs_followed_in_a_time_namespace(ctx):
    """clockprof in a time namespace whose boottime is shifted (unshare -T,
    a restored container): /proc's start times are shifted for it, and the
    BPF program's were not, so no followed process was known as itself:
    each exec'd program was held and never let go (the run hung). The
    same counts as on the host's clock."""
    probe = subprocess.run(["unshare", "--time", "--boottime", "1000", "--fork", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise Skip(f"no time namespace to be had: {probe.stderr.strip()}")
    check_shell_execs(shell_execs(ctx, ["unshare", "--time", "--boottime", "1000", "--fork"]))


def check_shell_execs(run):
    rows = sorted(run["processes"][1:], key=lambda r: r["start_s"])
    assert [(r["reads"], r["requests"]) for r in rows] == [(150, 49), (82, 40)], rows
    assert run["request"]["count"] == 89, run["request"]
    assert run["per_request"]["histogram"] == [[2, 40], [3, 49]], run["per_request"]
    assert run["request"]["closed_in_target"], (run["request"], run["warnings"])
    assert run["probe"]["hits"] <= 2, run["probe"]  # at most one at each execve


def process_state(pid):
    """The state letter of /proc/PID/stat; None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def exec_loop(ctx, n, marker, started=None):
    """A shell script that execs reads_target n times, then writes marker;
    started: a file it writes once the first program has run."""
    reads = ctx.target("reads_target")
    first = f"[ $i -eq 1 ] && : > {started}; " if started else ""
    return (f"i=0; while [ $i -lt {n} ]; do {reads} clock_gettime 1 1 || exit 9; "
            f"i=$((i+1)); {first}done; echo done > {marker}")


def wait_file(path, timeout, written=False):
    """Whether path appears within timeout s; written: with something in
    it (a shell's `echo $? > path` creates it empty first)."""
    for _ in range(int(timeout / 0.05)):
        if os.path.exists(path) and (not written or os.path.getsize(path)):
            return True
        time.sleep(0.05)
    return False


def test_attach_tree_follows_the_programs_a_shell_loop_execs(ctx):
    """attach --tree on a shell that runs a program (2 reads) and a sleep
    in a loop: every program the loop started and ended inside the window
    was followed into, its reads exact by construction and against the
    truth preloaded into it, and no process is said not counted (but a
    short one the tree listed that was gone before it was patched)."""
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    import truth
    reads = ctx.target("reads_target")
    truth_file = os.path.join(ctx.tmp, "loop.truth")
    env = dict(os.environ, LD_PRELOAD=ctx.target("clock_truth.so"), CLOCK_TRUTH_FILE=truth_file)
    loop = subprocess.Popen(["/bin/sh", "-c", f"while :; do {reads} clock_gettime 2 1; "
                             "sleep 0.005; done"], env=env)
    try:
        time.sleep(0.3)
        run = attach_window(ctx, ["--tree", str(loop.pid)], lambda: time.sleep(2))
    finally:
        loop.kill()
        loop.wait()
    by_truth = truth.Truth(truth_file).reads_by_pid()
    inside = [r for r in run["processes"][1:] if r["start_s"] >= 0 and r["exit_s"] is not None
              and os.path.basename(r["executable"] or "") == "reads_target"]
    print(f"{len(inside)} programs inside the window, {run['clock_reads']['total']} reads",
          flush=True)
    assert len(inside) >= 5, run["processes"]
    wrong = [(r, by_truth.get(r["pid"])) for r in inside if not r["reads"] == 2 == by_truth.get(r["pid"])]
    assert not wrong, wrong
    uncounted = [r for r in run["processes"] if not r["counted"]]
    assert not uncounted, (uncounted, run["warnings"])
    assert not any("exec" in w and "not counted" in w for w in run["warnings"]), run["warnings"]


def test_attach_tree_keeps_following_a_child_born_during_start_up(ctx):
    """attach --tree on a shell that runs a program in a loop, the boundary
    a function of that program: a child the shell forks after clockprof
    listed the tree, and before it looked for other processes running the
    boundary's file, was taken for another's, and following was dropped
    for the whole window (0 reads counted, in 5 to 7 attaches of 20 on
    these hosts). Each of a dozen attaches follows the loop's programs."""
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    # a copy of its own: another process running the tests' file (a test
    # beside this one) would rightly drop following
    reads = os.path.join(ctx.tmp, "born_reads")
    shutil.copy(ctx.target("reads_target"), reads)
    loop = subprocess.Popen(["/bin/sh", "-c", f"while :; do {reads} clock_gettime 1 3; done"],
                            stdout=subprocess.DEVNULL)
    out = os.path.join(ctx.tmp, "born.json")
    try:
        time.sleep(0.3)
        for trial in range(12):
            proc = ctx.run("attach", "-q", "-e", "none", "--tree", "-r",
                           f"func:{reads}:handle_request", "-d", "0.15", "-o", out, loop.pid)
            assert proc.returncode == 0, proc.stderr
            run = ctx.load_json(out)
            dropped = [w for w in run["warnings"] if "are not followed" in w]
            assert not dropped, f"attach {trial}: {dropped}"
            assert run["clock_reads"]["total"] > 0, (trial, run["clock_reads"], run["warnings"])
    finally:
        loop.kill()
        loop.wait()


def test_execs_go_on_when_clockprof_is_killed(ctx):
    """clockprof SIGKILLed at three moments of a loop that execs a program
    400 times: a process held at its exec is never left stopped (the loop,
    which outlives clockprof, finishes every program). The moments count
    from the loop's first program: a command still held at its start dies
    with clockprof (launcher.c), and on a loaded host 0.3 s after the
    start was sometimes before it."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    for delay in (0.0, 0.4, 0.8):
        marker = os.path.join(ctx.tmp, f"done-{delay}")
        started = os.path.join(ctx.tmp, f"started-{delay}")
        proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o",
                                 os.path.join(ctx.tmp, "killed.json"), "--", "/bin/sh", "-c",
                                 exec_loop(ctx, 400, marker, started)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_file(started, 120), "the loop did not start"
        time.sleep(delay)
        proc.kill()
        proc.wait()
        assert wait_file(marker, 60), f"the loop did not finish after a kill at {delay} s"


def test_an_exec_patch_cut_at_each_step_leaves_the_program_right(ctx):
    """clockprof SIGKILLs itself at each step of following a shell's child
    into the program it execs, in turn (a test hook): seizing it, its
    thread sent to map the table and caught back, the code and rules
    written, its thread sent to switch the sites, let go. Each time that
    program (patch_target check: every vDSO result against the raw
    syscall, from its threads and a SIGPROF handler) runs on and finds
    every result right, and nothing is left stopped; past the last step
    clockprof runs to the end."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    checker = ctx.target("patch_target")
    cut = 0
    for step in range(1, 60):
        marker = os.path.join(ctx.tmp, f"cut-{step}")
        env = dict(os.environ, CLOCKPROF_TEST_EXEC_KILL_STEP=str(step))
        proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o",
                                 os.path.join(ctx.tmp, "cut.json"), "--", "/bin/sh", "-c",
                                 f"{checker} 2 check > {marker}.out 2>&1; echo $? > {marker}"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, text=True, env=env)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
        killed = proc.returncode == -signal.SIGKILL
        time.sleep(0.3)		# the program checks on, whatever was left
        proc.stdin.write("quit\n")
        proc.stdin.close()
        if not killed:
            assert proc.wait(timeout=60) == 0, proc.returncode
        assert wait_file(marker, 30, written=True), f"cut at step {step}: the program did not end"
        with open(marker) as f, open(marker + ".out") as said:
            code = f.read().strip()
            assert code == "0", \
                f"cut at step {step}: the program exited {code} ({said.read().strip()!r})"
        if not killed:
            break
        cut += 1
    print(f"cut at each of {cut} steps", flush=True)
    assert cut >= 8, cut


def test_the_guard_lets_a_held_exec_go_when_clockprof_is_killed(ctx):
    """The hold taken late (a test hook), clockprof is SIGKILLed while the
    program's SIGSTOP alone holds the exec'd process: the session's guard
    sends it SIGCONT, and it runs to its end."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    marker = os.path.join(ctx.tmp, "guarded")
    reads = ctx.target("reads_target")
    env = dict(os.environ, CLOCKPROF_TEST_EXEC_HOLD_MS="30000")
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o",
                             os.path.join(ctx.tmp, "guard.json"), "--", "/bin/sh", "-c",
                             f"{reads} clock_gettime 1 1; echo ok > {marker}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    stopped = None
    for _ in range(400):
        kids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        stopped = next((p for p in kids if process_state(p) == "T" and
                        os.path.basename(os.readlink(f"/proc/{p}/exe")) == "reads_target"), None)
        if stopped:
            break
        time.sleep(0.05)
    try:
        assert stopped, "no exec'd process was held"
        proc.kill()
        proc.wait()
        assert wait_file(marker, 10), f"process {stopped} was left {process_state(stopped)}"
    finally:
        if stopped and process_state(stopped) == "T":
            os.kill(stopped, signal.SIGCONT)


def two_worker_nginx(ctx):
    """servers.Nginx set up with two workers, not started: (server, its
    executable, its configuration file)."""
    import servers
    server = servers.Nginx(ctx)
    exe = servers.need("/usr/sbin/nginx", "nginx-light")
    os.makedirs(os.path.join(server.dir, "www"), exist_ok=True)
    for d in (ctx.tmp, server.dir, os.path.join(server.dir, "www")):
        os.chmod(d, 0o755)  # the workers run as nobody
    server.write(os.path.join("www", "index.html"), "<p>" + "clockprof " * 100 + "</p>\n")
    conf = server.write("nginx.conf", servers.NGINX_CONF.format(dir=server.dir, port=server.port)
                        .replace("worker_processes 1;", "worker_processes 2;"))
    return server, exe, conf


def test_nginx_master_and_two_workers_under_run(ctx):
    """nginx as it ships (a master that forks its workers), two workers,
    launched by run with its default of following forks: each worker's
    reads and requests against the ground truth preloaded into every
    process (tests/truth/clock_truth.c: one count slot per process),
    within 1%, and the requests add up to the load. (The master serves
    no request; the truth gives it no reads of its own.)"""
    import servers
    from readiness import wait_for
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    server, exe, conf = two_worker_nginx(ctx)
    n = 1000

    def drive(proc):
        wait_for(lambda: server.truth.ready() and len(server.truth.pids()) >= 3,
                 "nginx's master and two workers")
        wait_for(lambda: _listening(server.port, proc), "nginx to listen")
        servers.ab(server.port, n, "/index.html", keepalive=False)

    run, rows, truth = run_server(ctx, server, "syscall:writev",
                                  [exe, "-e", "stderr", "-c", conf, "-p", server.dir], drive)
    # clockprof itself (and its helpers) carry the preloaded library too
    truth = {pid: t for pid, t in truth.items() if pid in rows}
    workers = [pid for pid in truth if pid != run["target"]["pid"]]
    assert len(workers) == 2 and len(rows) == 3, (rows, list(truth))
    print(f"     nginx: " + ", ".join(
        f"{pid}: clockprof {rows[pid]['reads']} reads {rows[pid]['requests']} requests, "
        f"truth {truth[pid].reads} {truth[pid].requests}" for pid in truth), flush=True)
    for pid in workers:
        t = truth[pid]
        assert abs(rows[pid]["reads"] - t.reads) <= max(TOLERANCE * t.reads, 2), \
            (pid, rows[pid], t.calls)
        assert abs(rows[pid]["requests"] - t.requests) <= max(TOLERANCE * t.requests, 1), \
            (pid, rows[pid], t.requests)
    # each worker's first reply opens its first request
    assert sum(rows[pid]["requests"] for pid in workers) >= n - len(workers), rows
    exe_rows = run["executables"]
    assert len(exe_rows) == 1 and exe_rows[0]["processes"] == 3, exe_rows


TOLERANCE = 0.01


def run_server(ctx, server, boundary, argv, drive):
    """argv launched by `clockprof run -r boundary`, the server's ground
    truth preloaded; drive(proc) loads it; the truth sampled, then the
    window ended (SIGINT). (run.json, its processes by pid, the truth of
    those processes by pid; clockprof itself carries the preload too.)"""
    out = os.path.join(ctx.tmp, f"{server.name}-run.json")
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-r", boundary, "-o", out,
                             "--", *argv], env=server.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        drive(proc)
        truth = {pid: server.truth.snapshot(pid) for pid in server.truth.pids()}
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"clockprof exit {proc.returncode}: {err}"
    run = ctx.load_json(out)
    rows = {r["pid"]: r for r in run["processes"]}
    return run, rows, {pid: t for pid, t in truth.items() if pid in rows}


def _listening(port, proc):
    import socket
    if proc.poll() is not None:
        raise AssertionError(f"clockprof exited {proc.returncode}")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def test_a_long_run_of_short_children_is_counted_whole(ctx):
    """A CGI-style storm: 300 children, one every 8 ms, each reading 3
    times (the root 2 per child and 2 more): more than two seconds, so
    the children that exited are moved out of the program's maps while
    the window is open; every read and every child still in run.json."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    out = os.path.join(ctx.tmp, "storm.json")
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--", ctx.target("fork_tree_target"),
                   "storm", 300, 8, 100000)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    assert run["clock_reads"]["total"] == 3 * 300 + 2 * 300 + 2, run["clock_reads"]
    rows = run["processes"]
    assert len(rows) == 301 and all(r["reads"] == 3 for r in rows[1:]), \
        sorted({r["reads"] for r in rows[1:]})
    assert run["duration_s"] > 2, run["duration_s"]


FORKING_SERVER = r"""
import http.server, socketserver, sys, time

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive: one child serves a connection's requests
    wbufsize = 65536                # header and body leave in one send at the end

    def do_GET(self):
        started = time.monotonic()
        body = b"%20.6f %12.6f\n" % (time.time(), time.monotonic() - started)  # one length
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if self.headers.get("Connection", "").lower() == "keep-alive":
            self.send_header("Connection", "keep-alive")  # ab -k waits for it
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

class Server(socketserver.ForkingMixIn, http.server.HTTPServer):
    pass

Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_pre_fork_python_server_under_run(ctx):
    """socketserver.ForkingTCPServer's way: a child per connection. One
    keep-alive connection of 500 requests (one child serves them all)
    and 20 one-request connections (20 children, each gone before the
    window ends, read from its exit sums): each child's reads and
    requests against the truth preloaded into every process, within 1%."""
    import servers
    from readiness import wait_for
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    server = servers.Python(ctx)
    exe = servers.need("/usr/bin/python3", "python3")
    script = server.write("forking.py", FORKING_SERVER)

    def drive(proc):
        wait_for(lambda: _listening(server.port, proc), "the forking server to listen")
        servers.ab(server.port, 500, "/", keepalive=True)
        for _ in range(20):
            servers.http_get(server.port)
        wait_for(lambda: len(_children(proc)) <= 1, "the server to reap its children")

    run, rows, truth = run_server(ctx, server, "syscall:sendto", [exe, script, str(server.port)],
                                  drive)
    children = [pid for pid in rows if pid != run["target"]["pid"]]
    # 21, and the readiness check's connection (no request)
    assert len(children) == 22, (len(children), rows)
    served = sorted(rows[pid]["requests"] for pid in children)
    assert served[-1] >= 499 and served[:-1] == [0] * 21, served
    for pid in children:
        t = truth[pid]
        assert abs(rows[pid]["reads"] - t.reads) <= max(TOLERANCE * t.reads, 1), \
            (pid, rows[pid], t.calls)
        assert rows[pid]["requests"] == t.requests, (pid, rows[pid], t.requests)
        assert rows[pid]["exit_s"] is not None, rows[pid]
    print(f"     forking python: {len(children)} children, "
          f"{sum(rows[p]['reads'] for p in children)} reads "
          f"(truth {sum(truth[p].reads for p in children)})", flush=True)


def _children(proc):
    """The processes clockprof's command has forked, still there."""
    try:
        root = int(open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()[0])
        return open(f"/proc/{root}/task/{root}/children").read().split()
    except (OSError, IndexError, ValueError):
        return []


class IdleTree:
    """fork_tree_target idle: a root and its children, each serving n
    requests (3 reads each) at SIGUSR1, the root forking one more that
    serves at SIGUSR2; wrap=argv to start it under (unshare)."""

    def __init__(self, ctx, children, n, wrap=(), host_pid=None):
        self.n, self.host_pid = n, host_pid or (lambda pid: pid)
        self.p = subprocess.Popen([*wrap, ctx.target("fork_tree_target"), "idle", str(children),
                                   str(n)], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.pids = [self.said("ready") for _ in range(children + 1)]
        self.root = min(self.pids, key=lambda pid: _ppid_rank(pid, self.pids))

    def said(self, what):
        """The host's pid of the process that said what (one in a pid
        namespace says its own number there)."""
        line = self.p.stdout.readline().split()
        assert line and line[0] == what, f"fork_tree_target said {line}, not {what}"
        return self.host_pid(int(line[1]))

    def serve(self, pids):
        for pid in pids:
            os.kill(pid, signal.SIGUSR1)
        return sorted(self.said("served") for _ in pids)

    def fork_one(self):
        os.kill(self.root, signal.SIGUSR2)
        return self.said("served")

    def stop(self):
        os.killpg(self.p.pid, signal.SIGTERM)
        self.p.wait(timeout=30)


def _host_pid(cgroup, nspid):
    """The host's pid of the process of cgroup whose pid is nspid in its
    own (innermost) pid namespace."""
    from readiness import wait_for

    def find():
        with open(f"{cgroup}/cgroup.procs") as f:
            for pid in map(int, f.read().split()):
                with open(f"/proc/{pid}/status") as st:
                    ns = next(x for x in st if x.startswith("NSpid:")).split()[1:]
                if len(ns) > 1 and int(ns[-1]) == nspid:
                    return pid
        return None
    return wait_for(find, f"process {nspid} of {cgroup}")


def _ppid_rank(pid, pids):
    """0 for the process whose parent is not among pids (the root)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(int(f.read().rsplit(")", 1)[1].split()[1]) in pids)


def attach_window(ctx, target_args, drive):
    """`clockprof attach -r syscall:getppid` with target_args, live, then
    drive(); the window ended with SIGINT: run.json."""
    from readiness import wait_attached
    out = os.path.join(ctx.tmp, "attach.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-r", "syscall:getppid",
                             "-o", out, *target_args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_attached(proc)
        drive()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"clockprof exit {proc.returncode}: {err}"
    return ctx.load_json(out)


def check_served(run, served, n):
    """Each process that served did n requests (3 reads each) in the
    window: n - 1 complete, its first boundary opening the first."""
    rows = {r["pid"]: r for r in run["processes"]}
    for pid in served:
        assert rows[pid]["reads"] == READS * n and rows[pid]["requests"] == n - 1, rows[pid]
    assert run["clock_reads"]["total"] == READS * n * len(served), run["clock_reads"]
    assert run["request"]["count"] == (n - 1) * len(served), run["request"]


def test_attach_tree_counts_a_process_its_children_and_their_new_forks(ctx):
    """attach --tree on a root with 3 children already running: each is
    patched on its own and counted from the window's start (exactly: they
    serve only inside it), and a child the root forks inside the window is
    followed too."""
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    tree = IdleTree(ctx, 3, 40)
    try:
        served = []

        def drive():
            served.extend(tree.serve(tree.pids))
            served.append(tree.fork_one())
        run = attach_window(ctx, ["--tree", str(tree.root)], drive)
    finally:
        tree.stop()
    assert run["target"]["pid"] == tree.root, run["target"]
    assert len(run["processes"]) == 5, run["processes"]
    check_served(run, served, 40)


def test_attach_a_list_of_pids_counts_each(ctx):
    """attach -p A,B: two of the tree's processes, the others not counted
    though they serve too."""
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    tree = IdleTree(ctx, 2, 30)
    try:
        chosen = sorted(tree.pids)[:2]
        run = attach_window(ctx, ["-p", ",".join(map(str, chosen))],
                            lambda: tree.serve(tree.pids))
    finally:
        tree.stop()
    assert sorted(r["pid"] for r in run["processes"]) == chosen, run["processes"]
    check_served(run, chosen, 30)


def test_attach_cgroup_in_its_own_pid_and_mount_namespace(ctx):
    """A container's way: the tree runs in a pid and mount namespace of its
    own (unshare), in a cgroup the test makes; attach --cgroup from the
    host counts every process in it, exactly."""
    import shutil
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    with open("/proc/self/mounts") as f:
        mounts = [line.split()[1] for line in f if line.split()[2] == "cgroup2"]
    if not shutil.which("unshare") or not mounts:
        raise Skip("no unshare(1), or no cgroup v2 mounted")
    cg = f"{mounts[0]}/clockprof-test-{os.getpid()}"
    os.mkdir(cg)
    tree = None
    try:
        # the shell moves itself into the cgroup, then becomes the namespace's
        # init's parent: every process of the tree starts inside it
        tree = IdleTree(ctx, 2, 25, wrap=["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec '
                                          'unshare --pid --mount --fork "$@"', "sh"],
                        host_pid=lambda nspid: _host_pid(cg, nspid))
        with open(f"{cg}/cgroup.procs") as f:
            members = sorted(int(x) for x in f.read().split())
        served = []
        run = attach_window(ctx, ["--cgroup", cg], lambda: served.extend(tree.serve(tree.pids)))
    finally:
        if tree:
            tree.stop()
        os.rmdir(cg)
    rows = {r["pid"]: r for r in run["processes"]}
    assert sorted(rows) == members, (sorted(rows), members)   # unshare itself too
    check_served(run, served, 25)
    # each process's own executable, rolled up: the tree's 3 and unshare
    by_exe = {os.path.basename(e["executable"]): e["processes"] for e in run["executables"]}
    assert by_exe == {"fork_tree_target": 3, "unshare": 1}, by_exe
    assert run["measures"]["clock_reads[fork_tree_target]/op"]["value"] == READS, \
        run["measures"]


def test_attach_several_bad_input_is_one_line_and_a_code(ctx):
    """A bad list, --tree with a list, an unknown cgroup: exit 2; a
    mechanism that counts one process only: exit 3; a pid that is gone
    in the list: counted without it, said."""
    for argv, code, words in ((["1,x"], 2, "invalid PID"), (["--tree", "1,2"], 2, "--tree takes one"),
                              (["--cgroup", "no-such-unit.service"], 2, "no cgroup"),
                              (["--cgroup", "x", "1"], 2, "--cgroup takes no PID")):
        proc = ctx.run("attach", "-q", "-d", "0.1", *argv)
        assert proc.returncode == code and words in proc.stderr, (argv, proc.returncode, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    tree = IdleTree(ctx, 1, 5)
    try:
        proc = ctx.run("attach", "-q", "-d", "0.1", "--mechanism", "uprobe",
                       ",".join(map(str, tree.pids)))
        assert proc.returncode == 3 and "needs the vDSO patch" in proc.stderr, proc.stderr
        if ctx.counted() == "patch":
            out = os.path.join(ctx.tmp, "gone.json")
            proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.2", "-o", out,
                           f"{tree.root},4194000")
            assert proc.returncode == 0, proc.stderr
            run = ctx.load_json(out)
            assert any("process 4194000 is not counted (no such process)" in w
                       for w in run["warnings"]), run["warnings"]
    finally:
        tree.stop()


def test_attach_tree_leaves_every_process_correct_when_killed(ctx):
    """clockprof SIGKILLed while attached to a tree: its restorer switches
    every process's vDSO back (waited for: a signal that comes while a
    thread is held for the stub can be lost, as hijack.c restarts an
    interrupted sigsuspend by hand even after the signal's handler ran),
    every process goes on serving (the root forks one more too), exits
    cleanly, and a later attach --tree counts them all again, exactly."""
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    from readiness import wait_attached
    tree = IdleTree(ctx, 2, 10)
    try:
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--tree",
                                 str(tree.root)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        proc.kill()
        proc.wait()
        from readiness import wait_for
        from test_patch_leftovers import switched
        wait_for(lambda: not any(switched(pid) for pid in tree.pids),
                 "the restorer to switch the tree's vDSO back")
        tree.serve(tree.pids)
        tree.fork_one()
        served = []

        def drive():
            served.extend(tree.serve(tree.pids))
        run = attach_window(ctx, ["--tree", str(tree.root)], drive)
    finally:
        tree.stop()
    assert tree.p.returncode == 0, tree.p.returncode
    check_served(run, served, 10)


def test_a_childs_command_is_untrusted_text_in_the_report(ctx):
    """A forked child names itself '<b>x&amp;</b>' (PR_SET_NAME): run.json
    keeps it as text, the HTML report escapes it in the processes table."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    script = ("import ctypes, os, time\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    ctypes.CDLL(None).prctl(15, b'<b>x&amp;</b>', 0, 0, 0)\n"
              "    time.time()\n"
              "    os._exit(0)\n"
              "os.waitpid(pid, 0)\n")
    out, html = os.path.join(ctx.tmp, "name.json"), os.path.join(ctx.tmp, "name.html")
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--html", html, "--",
                   "/usr/bin/python3", "-c", script)
    assert proc.returncode == 0, proc.stderr
    rows = ctx.load_json(out)["processes"]
    assert [r["command"] for r in rows[1:]] == ["<b>x&amp;</b>"], rows
    with open(html) as f:
        page = f.read()
    assert "&lt;b&gt;x&amp;amp;&lt;/b&gt;" in page and "<b>x&amp;</b>" not in page


def test_nginx_attach_tree_on_the_master(ctx):
    """nginx with two workers, already running: attach --tree on the
    master; each worker's reads and requests over the window against the
    ground truth's difference over the same span, within 1%."""
    import servers
    from readiness import wait_attached
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    server, exe, conf = two_worker_nginx(ctx)
    server.launch([exe, "-e", "stderr", "-c", conf, "-p", server.dir],
                  ready=lambda: server.truth.ready() and len(server.truth.pids()) >= 3)
    out = os.path.join(ctx.tmp, "tree.json")
    try:
        workers = [int(x) for x in open(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children")
                   .read().split()]
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-r",
                                 "syscall:writev", "-o", out, "--tree", str(server.proc.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_attached(proc)
            for _ in workers:  # each worker's first reply in the window opens its first request
                servers.http_get(server.port)
            before = {pid: server.truth.snapshot(pid) for pid in workers}
            servers.ab(server.port, 1000, "/index.html", keepalive=False)
            after = {pid: server.truth.snapshot(pid) for pid in workers}
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    finally:
        server.stop()
    run = ctx.load_json(out)
    rows = {r["pid"]: r for r in run["processes"]}
    assert sorted(rows) == sorted([server.proc.pid, *workers]), rows
    got = sum(rows[pid]["requests"] for pid in workers)
    truth = sum((after[pid] - before[pid]).requests for pid in workers)
    reads = sum((after[pid] - before[pid]).reads_in_requests for pid in workers)
    in_req = run["clock_reads"]["in_requests"]
    print(f"     nginx --tree: clockprof {in_req} reads in {got} requests, "
          f"truth {reads} in {truth}", flush=True)
    assert abs(got - truth) <= max(TOLERANCE * truth, 2), (got, truth)
    assert abs(in_req - reads) <= max(TOLERANCE * reads, 4), (in_req, reads)


def _started_at(pid, argv, tries=5000):
    """argv started outside clockprof's tree as process pid (the kernel's
    ns_last_pid set just below it; another process may take it first, so
    tried again); None when it never got it."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        if proc.pid == pid:
            return proc
        proc.kill()
        proc.wait()
    return None


def test_a_process_reusing_an_exited_childs_pid_is_not_followed(ctx):
    """A followed child exits; a process clockprof never followed gets its
    pid at once (while the child's entry may still be listed) and execs:
    it is not held at its exec nor patched, and no row nor warning names
    it (its start time is not the child's)."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    if not os.path.exists("/proc/sys/kernel/ns_last_pid"):
        raise Skip("no /proc/sys/kernel/ns_last_pid to choose a pid with")
    reads = ctx.target("reads_target")
    said, out = os.path.join(ctx.tmp, "child-pid"), os.path.join(ctx.tmp, "reuse.json")
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o", out, "--",
                             "/bin/sh", "-c", f"/bin/sh -c 'echo $$ > {said}'; sleep 4"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    other = None
    try:
        assert wait_file(said, 60, written=True), "the child never ran"
        with open(said) as f:
            child = int(f.read())
        for _ in range(1000):
            if process_state(child) in (None, "Z"):
                break
            time.sleep(0.002)
        while process_state(child) is not None:
            time.sleep(0.002)
        other = _started_at(child, [reads, "clock_gettime", "1", "200"])
        if other is None:
            raise Skip(f"pid {child} was taken by another process each time")
        assert other.wait(timeout=60) == 0
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if other and other.poll() is None:
            other.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    run = ctx.load_json(out)
    rows = [r for r in run["processes"] if r["pid"] == child]
    assert all(os.path.basename(r["executable"] or "") != "reads_target" for r in rows), rows
    assert not any("reads_target" in str(r.get("executable")) for r in run["processes"]), \
        run["processes"]
    assert not any(str(child) in w for w in run["warnings"]), run["warnings"]


def _descendants(pid):
    """The processes below pid now."""
    kids, found = {}, []
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/stat") as f:
                kids.setdefault(int(f.read().rsplit(")", 1)[1].split()[1]), []).append(int(p))
        except (OSError, ValueError, IndexError):
            continue
    todo = [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            found.append(k)
            todo.append(k)
    return found


def test_a_child_traced_by_strace_is_not_left_stopped(ctx):
    """A followed shell runs `strace -f` on a program: the program, traced
    by strace at its exec, is not held there (clockprof cannot take it
    from strace) and runs to its end, never left stopped; the run ends
    and says it was not counted from its exec, naming the tracer."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    strace = next((d + "/strace" for d in ("/usr/bin", "/bin") if os.path.exists(d + "/strace")),
                  None)
    if not strace:
        raise Skip("strace is not installed")
    reads = ctx.target("reads_target")
    marker, out = os.path.join(ctx.tmp, "traced-done"), os.path.join(ctx.tmp, "traced.json")
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o", out, "--",
                             "/bin/sh", "-c", f"{strace} -f -o /dev/null {reads} clock_gettime 2 3"
                             f" && echo ok > {marker}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped = []
    try:
        for _ in range(1200):
            if proc.poll() is not None:
                break
            stopped = [p for p in _descendants(proc.pid) if process_state(p) in ("t", "T")]
            if stopped:
                time.sleep(2)	# a hold that is let go soon is not left
                stopped = [p for p in stopped if process_state(p) in ("t", "T")]
                if stopped:
                    break
            time.sleep(0.05)
        assert not stopped, f"left stopped: {[(p, process_state(p)) for p in stopped]}"
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        for p in stopped:
            os.kill(p, signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert wait_file(marker, 10), "the traced program did not finish"
    run = ctx.load_json(out)
    traced = [w for w in run["warnings"] if "traced" in w]
    assert traced and "not counted" in traced[0], run["warnings"]


def test_a_child_gdb_runs_gets_no_stop_of_clockprofs(ctx):
    """gdb, the target, runs a program: clockprof's hold at that program's
    exec is not made (gdb traces it; taken late by a test hook, the hold's
    SIGSTOP reached gdb first, which stopped the program and, in batch
    mode, killed it): the program exits normally and the run says it was
    not counted from its exec."""
    if ctx.counted() != "patch":
        raise Skip(f"run follows forks with the vDSO patch only (counting with {ctx.counted()})")
    gdb = next((d + "/gdb" for d in ("/usr/bin", "/bin") if os.path.exists(d + "/gdb")), None)
    if not gdb:
        raise Skip("gdb is not installed")
    out = os.path.join(ctx.tmp, "gdb.json")
    env = dict(os.environ, CLOCKPROF_TEST_EXEC_HOLD_MS="500")
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--", gdb, "-nx", "-batch",
                   "-ex", "run", "--args", ctx.target("reads_target"), "clock_gettime", "1", "1",
                   env=env)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "SIGSTOP" not in said and "exited normally" in said, said
    run = ctx.load_json(out)
    traced = [w for w in run["warnings"] if "traced by another process" in w]
    assert traced and "not counted" in traced[0], run["warnings"]


def test_an_exec_past_the_pins_is_counted(ctx):
    """More processes given than clockprof pins the memory of (256,
    lib/procfs/proc_mem.c): one that exec()s is followed into its new
    image, whose patch, with no pin of its own, writes as before pins
    were, never through its old image's (which the kernel refuses: "not
    counted after its exec: cannot write into the vDSO")."""
    if ctx.counted() != "patch":
        raise Skip(f"several processes need the vDSO patch (counting with {ctx.counted()})")
    program = f"{ctx.target('reads_target')} clock_gettime 2 0 0 0"
    target = subprocess.Popen(program.split())
    member = subprocess.Popen(["sh", "-c", f"read x; exec {program}"], stdin=subprocess.PIPE)
    sleepers = [subprocess.Popen(["sleep", "120"]) for _ in range(300)]
    first = None
    try:
        wait_serving(target)
        wait_for(lambda: os.readlink(f"/proc/{member.pid}/exe").endswith("sh"),
                 "the shell to run")
        out = os.path.join(ctx.tmp, "pins.json")
        pids = [target.pid, member.pid] + [p.pid for p in sleepers]
        first = subprocess.Popen([ctx.clockprof, "attach", "-q", "-o", out, "-d", "3",
                                  ",".join(map(str, pids))],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_attached(first)
        member.stdin.write(b"x\n")
        member.stdin.flush()
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, f"exit {first.returncode}: {err}"
        run = ctx.load_json(out)
    finally:
        for proc in [first, target, member] + sleepers:
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
    mine = [p for p in run["processes"] if p["pid"] == member.pid]
    assert mine and mine[0]["counted"] and mine[0]["reads"], (mine, run.get("warnings"))
