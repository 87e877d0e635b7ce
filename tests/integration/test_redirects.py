"""Functions redirected inside the target by the vDSO patch
(lib/probe/mech/patch/redirect_plan.h): a func: request boundary, closed
there, coexists with another tool's uprobe and uretprobe on the same
function, placed and removed while clockprof's window is open, in either
order: the target is unharmed, every request is counted exactly, the
other tool counts its calls, and the code is the file's again after. A
target attached again is redirected again. A syscall: boundary closed at
the C library's function for it is checked against the kernel's
syscalls, and falls back to sys_enter where one did not come through it."""
import os
import shutil
import signal
import subprocess
import time

from common import Skip, code_changed
from readiness import wait_attached, wait_for, wait_serving

# The fewest requests a window of these tests (0.5 s or more of a target
# that serves one a millisecond) must hold: a floor that only a hung
# target or host reaches, never a rate (a loaded host serves hundreds).
MIN_REQUESTS = 20


class Bpftrace:
    """bpftrace counting the calls and returns of one function."""

    def __init__(self, exe, fn):
        if not shutil.which("bpftrace"):
            raise Skip("bpftrace not installed (make test-deps installs it)")
        prog = (f"uprobe:{exe}:{fn} {{ @calls = count(); }} "
                f"uretprobe:{exe}:{fn} {{ @returns = count(); }}")
        self.p = subprocess.Popen(["bpftrace", "-e", prog], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("Attaching"), f"bpftrace said {line!r}"
        time.sleep(0.2)  # its probes are in once it says so; a little margin

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        out, err = self.p.communicate(timeout=30)
        counts = {}
        for line in out.splitlines():
            if line.startswith("@"):
                name, value = line.split(":")
                counts[name.strip("@ ")] = int(value)
        return counts


def attach(ctx, pid, seconds):
    out = os.path.join(ctx.tmp, "run.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-o", out, "-d",
                             str(seconds), "-r", "func:handle_request", str(pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def finish(ctx, proc, out):
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, f"exit {proc.returncode}: {err}"
    return ctx.load_json(out)


def check(run, traced, target):
    """Every request 2 reads (reads_target clock_gettime 2), closed in the
    target with no trap; the other tool's uprobes fired; the target lives."""
    assert run["per_request"]["histogram"] == [[2, run["request"]["count"]]], run["per_request"]
    assert run["request"]["count"] >= MIN_REQUESTS, run["request"]
    assert run["probe"]["hits"] == 0, run["probe"]
    assert not [w for w in run["warnings"] if "boundary" in w or "uprobe" in w], run["warnings"]
    assert traced.get("calls", 0) >= MIN_REQUESTS and traced.get("returns", 0) >= MIN_REQUESTS, traced
    assert target.poll() is None, "the target died"


def coexist(ctx, bpftrace_first):
    """bpftrace's probes placed (after clockprof, or before it) and removed
    while clockprof's window is open on reads_target's handle_request."""
    exe = ctx.target("reads_target")
    target = subprocess.Popen([exe, "clock_gettime", "2", "0"])
    try:
        wait_serving(target)
        bt = Bpftrace(exe, "handle_request") if bpftrace_first else None
        proc, out = attach(ctx, target.pid, 3)
        wait_attached(proc)
        if not bt:
            time.sleep(0.3)
            bt = Bpftrace(exe, "handle_request")
        time.sleep(1)
        traced = bt.stop()
        run = finish(ctx, proc, out)
        check(run, traced, target)
        wait_for(lambda: code_changed(target.pid) == 0, "the target's code to be its file's")
    finally:
        target.kill()
        target.wait()


def test_bpftrace_on_a_redirected_boundary_placed_and_removed_mid_window(ctx):
    """clockprof first, then bpftrace's uprobe and uretprobe on the same
    handle_request (the kernel writes an int3 over its first instruction,
    which the redirect leaves alone, and single-steps it), removed while
    the window is still open."""
    coexist(ctx, bpftrace_first=False)


def test_a_boundary_redirected_under_bpftrace_uprobes_removed_mid_window(ctx):
    """bpftrace first (its int3 is at the function's entry when clockprof
    plans the redirect, in the same aligned word as the jump), clockprof
    attaches, bpftrace's probes go while the window is open (the kernel
    writes the first byte back), and clockprof switches the word back as
    it now is at the window's end."""
    coexist(ctx, bpftrace_first=True)


def test_each_attach_redirects_again(ctx):
    """Three attaches in turn to one target: each redirects the boundary
    and the C library's syscall() again (the first one's switch cut the
    pages' mappings in three, and left its trampolines, reused), counts
    every request exactly with no trap, and says nothing of a uprobe."""
    exe = ctx.target("reads_target")
    target = subprocess.Popen([exe, "mix", "1", "0"])
    try:
        wait_serving(target)
        for i in range(3):
            proc, out = attach(ctx, target.pid, 0.5)
            run = finish(ctx, proc, out)
            assert run["per_request"]["histogram"] == [[6, run["request"]["count"]]], (i, run["per_request"])
            assert run["request"]["count"] >= MIN_REQUESTS, (i, run["request"])
            assert run["probe"]["hits"] == 0, (i, run["probe"], run["warnings"])
            assert not [w for w in run["warnings"] if "uprobe" in w], (i, run["warnings"])
        assert target.poll() is None, "the target died"
    finally:
        target.kill()
        target.wait()


def attach_syscall_write(ctx, how, seconds, reads="vdso", env=None):
    """reply_target (3 reads a request made `reads` way, each followed by a
    write to /dev/null made `how`) attached with -r syscall:write for
    seconds; its run.json."""
    exe = ctx.target("reply_target")
    target = subprocess.Popen([exe, how, "3", "0", reads])
    try:
        wait_serving(target)
        out = os.path.join(ctx.tmp, f"{how}-{reads}.json")
        proc = subprocess.run([ctx.clockprof, "attach", "-q", "-e", "none", "-o", out, "-d",
                               str(seconds), "-r", "syscall:write", str(target.pid)],
                              capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **(env or {})))
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
        assert target.poll() is None, "the target died"
        return ctx.load_json(out)
    finally:
        target.kill()
        target.wait()


def test_a_syscall_boundary_closed_at_its_wrapper_equals_the_kernels_count(ctx):
    """-r syscall:write on a target whose writes all go through glibc's
    write(): the requests are closed in the target, at both paths past
    write()'s first branch (nothing before it can take a jump), with no
    trap; the check against sys_enter, which here lasts the whole window,
    matched every write the kernel saw: as many as the requests, but for
    the window's last instant."""
    run = attach_syscall_write(ctx, "write", 0.7)
    count, check = run["request"]["count"], run["request"]["wrapper_check"]
    assert run["request"]["closed_in_target"], run["request"]
    assert run["per_request"]["histogram"] == [[3, count]], run["per_request"]
    assert count >= MIN_REQUESTS, run["request"]
    assert check["mismatched"] == 0 and not check["fell_back"], check
    # a thread's first write sets where the check starts, as its first
    # interval is no request: one per thread, one thread. This target
    # writes on while the window closes, and the two end at different
    # instants: the requests where the table's window closes (its last
    # read of the counts), the check where the phase does, just after:
    # the writes between are checked and in no request of the window's
    # (one under load). A few either way where clockprof waits for a CPU.
    assert count - 5 <= check["checked"] <= count + 5, (check, count)
    assert run["probe"]["hits"] == 0, run["probe"]
    assert not [w for w in run["warnings"] if "sys_enter" in w], run["warnings"]


def test_a_checked_wrapper_lets_sys_enter_go(ctx):
    """Past the check's second and its 100 writes, sys_enter is let go
    (checked_for_s), and the requests after it are still every one."""
    run = attach_syscall_write(ctx, "write", 2.5)
    check = run["request"]["wrapper_check"]
    assert run["request"]["closed_in_target"], run["request"]
    assert check["checked_for_s"] is not None and 1 <= check["checked_for_s"] < 2.5, check
    assert check["checked"] >= 100 and check["mismatched"] == 0, check
    assert run["per_request"]["histogram"] == [[3, run["request"]["count"]]], run["per_request"]
    assert run["request"]["count"] > check["checked"], (run["request"], check)


def test_a_syscall_not_through_its_wrapper_makes_sys_enter_the_boundary(ctx):
    """syscall(SYS_write) alone, or every other write: the check finds a
    write the wrapper did not make, sys_enter closes the requests from
    then on (exact: 3 reads each, also where one of them is made by
    syscall(SYS_clock_gettime), which the target counts in its own
    memory), what the target closed is dropped, and a warning says so."""
    for how, reads in (("raw", "vdso"), ("both", "vdso"), ("both", "mixed")):
        run = attach_syscall_write(ctx, how, 0.7, reads)
        paths = run["clock_reads"]["by_path"]
        assert run["clock_reads"]["total"] >= 3 * run["request"]["count"], (how, reads, paths)
        if reads == "mixed":  # one in three through syscall(), counted too
            assert paths["syscall"] >= run["request"]["count"], paths
            balanced(paths)
        check = run["request"]["wrapper_check"]
        assert not run["request"]["closed_in_target"], (how, run["request"])
        assert check["fell_back"] and check["mismatched"] >= 1, (how, check)
        assert run["per_request"]["histogram"] == [[3, run["request"]["count"]]], \
            (how, reads, run["per_request"])
        assert run["request"]["count"] >= MIN_REQUESTS, (how, run["request"])
        assert [w for w in run["warnings"] if "did not come through" in w], (how, run["warnings"])


def balanced(paths):
    """reply_target mixed: one read in three through syscall(), the others
    through the vDSO, both paths' totals taken at one instant at each of
    the window's edges: a partial request there moves them apart by two
    vDSO reads at most."""
    assert paths["syscall"] > 0 and abs(2 * paths["syscall"] - paths["vdso"]) <= 2, paths


def test_both_paths_totals_are_of_one_instant_at_each_edge(ctx):
    """The counts and the request blocks (which hold the reads through
    syscall()) are read apart; a test hook widens that gap to 30 ms at
    each edge, as a loaded host did now and then (1216 vDSO reads for 606
    through syscall()): they are read again until the counts stood still
    between, with the boundary closed in the target and after sys_enter
    took it over."""
    gap = {"CLOCKPROF_TEST_READ_GAP_MS": "30"}
    for how in ("write", "both"):
        run = attach_syscall_write(ctx, how, 0.5, "mixed", env=gap)
        assert run["request"]["closed_in_target"] == (how == "write"), (how, run["request"])
        assert run["per_request"]["histogram"] == [[3, run["request"]["count"]]], \
            (how, run["per_request"])
        balanced(run["clock_reads"]["by_path"])


def test_a_launched_commands_syscall_boundary_is_closed_at_its_wrapper(ctx):
    """run -r syscall:write: the command's C library is mapped after the
    boundary is planned; its write() is redirected as the dynamic linker
    maps it, before the command is let go. 500 writes through write():
    499 requests of 3 reads, closed in the target, each write checked.
    Through syscall(SYS_write): the second write is found not to be
    write()'s, and sys_enter closes the requests, exactly: 499 too, the
    one the fall-back came in started by sys_enter as it checked."""
    exe = ctx.target("reply_target")
    expected = {"write": (True, 499), "raw": (False, 499)}
    for how, (in_target, count) in expected.items():
        out = os.path.join(ctx.tmp, f"run-{how}.json")
        proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "-o", out,
                               "-r", "syscall:write", "--", exe, how, "3", "500"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{how}: exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        check = run["request"]["wrapper_check"]
        assert run["request"]["closed_in_target"] == in_target, (how, run["request"], run["warnings"])
        assert run["request"]["count"] == count, (how, run["request"])
        assert run["per_request"]["histogram"] == [[3, count]], (how, run["per_request"])
        assert check["fell_back"] == (not in_target), (how, check)
        assert check["checked"] == (count if in_target else 0), (how, check)


def fallback_counts(run):
    """fallback_target's run.json checked against its construction: every
    request of thread k holds k % 3 + 1 reads (threads 0 and 3 one, 1 two,
    2 three), whole ones only, all of them inside the requests; the check
    fell back, and said so. The requests by size."""
    hist = dict(run["per_request"]["histogram"])
    reads = run["clock_reads"]
    assert set(hist) <= {1, 2, 3}, run["per_request"]
    assert reads["in_requests"] == sum(k * n for k, n in hist.items()), (reads, hist)
    assert run["request"]["count"] == sum(hist.values()), (run["request"], hist)
    assert run["request"]["wrapper_check"]["fell_back"], run["request"]
    assert not run["request"]["closed_in_target"], run["request"]
    assert [w for w in run["warnings"] if "did not come through" in w], run["warnings"]
    return hist


def test_the_requests_before_a_fall_back_to_sys_enter_are_counted(ctx):
    """The check of a syscall: boundary's wrapper falls back to sys_enter
    at the first write that did not come through write(): the requests
    the target closed until then are dropped, and those sys_enter closed
    while it checked are counted instead, with the one the fall-back came
    in, as uprobes count them: run of 4 threads x 500 writes, every fifth
    by syscall(SYS_write), is 4 x 499 requests exactly, every read but
    each thread's first (before its first write) inside one (before:
    sys_enter only started the requests after the fall-back, 4 x 494).
    attach, the raw writes starting 0.5 s into the window: the reads
    outside requests are the window's edges' (before: the first 0.5 s),
    with test hooks that widen to 100 ms the gaps a loaded host opened
    there (1.5 ms from the table's mark to the phase, 2.5 ms from the
    phase to the last read of the counts): the requests sys_enter closes
    start and end at the counts' instants (before: the reads of each gap
    were in none, ~650 here). Outside: each thread's partial request at
    each edge (7 reads at each, 7 in all most often, as under uprobes),
    and at most one more of each thread's at each where the counts moved
    as they were read and were read again (a busy host: 15 seen once)."""
    exe = ctx.target("fallback_target")
    out = os.path.join(ctx.tmp, "fallback-run.json")
    proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "-o", out,
                           "-r", "syscall:write", "--", exe, "fifth", "4", "500", "100"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    run = ctx.load_json(out)
    hist = fallback_counts(run)
    assert hist == {1: 2 * 499, 2: 499, 3: 499}, run["per_request"]
    reads = run["clock_reads"]
    assert reads["total"] == 500 * (1 + 2 + 3 + 1), reads
    assert reads["total"] - reads["in_requests"] == 1 + 2 + 3 + 1, reads

    target = subprocess.Popen([exe, "signal", "4", "0", "1000"])
    try:
        wait_serving(target, threads=5)
        out = os.path.join(ctx.tmp, "fallback-attach.json")
        gaps = dict(os.environ, CLOCKPROF_TEST_OPEN_GAP_MS="100", CLOCKPROF_TEST_READ_GAP_MS="100")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-o", out, "-d",
                                 "1.5", "-r", "syscall:write", str(target.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=gaps)
        wait_attached(proc)
        time.sleep(0.5)
        target.send_signal(signal.SIGUSR1)
        run = finish(ctx, proc, out)
        assert target.poll() is None, "the target died"
    finally:
        target.kill()
        target.wait()
    hist = fallback_counts(run)
    reads = run["clock_reads"]
    assert run["request"]["count"] >= MIN_REQUESTS, run["request"]
    # a bound that is a share of the reads, not a count: a host that takes
    # clockprof off the CPU between the mark and the window's opening adds
    # requests at the edge as fast as it serves them (the gaps' ~650 were
    # 5% of the total)
    assert 0 <= reads["total"] - reads["in_requests"] <= max(2 * 2 * (1 + 2 + 3 + 1),
                                                              reads["total"] // 100), reads


def test_a_forked_workers_reads_after_the_fall_back_are_each_counted_once(ctx):
    """run -r syscall:write of a program whose forked child serves 300
    requests of 3 reads, one of them through syscall(SYS_clock_gettime),
    and writes every other reply by syscall(SYS_write): the check falls
    back at the second reply, sys_enter closes all 299 (the first one
    started as it checked), and the child's table, summed as it exits,
    adds its reads through syscall() (all 300) but not its requests,
    which sys_enter counted already; its row holds them."""
    out = os.path.join(ctx.tmp, "fork.json")
    proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "-o", out, "-r", "syscall:write",
                           "--", ctx.target("reply_target"), "both", "3", "300", "mixed", "fork"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    run = ctx.load_json(out)
    reads = run["clock_reads"]
    assert run["request"]["wrapper_check"]["fell_back"], run["request"]
    assert reads["total"] == 900 and reads["by_path"] == {"syscall": 300, "vdso": 600}, reads
    assert run["request"]["count"] == 299, run["request"]
    assert run["per_request"]["histogram"] == [[3, 299]], run["per_request"]
    assert reads["in_requests"] == 3 * 299, reads
    served = [p for p in run["processes"] if p["reads"]]
    assert len(served) == 1 and served[0]["requests"] == 299, run["processes"]


def test_a_launched_commands_wrappers_elsewhere_leave_sys_enter_the_boundary(ctx):
    """run -r syscall:write of a static command (its write() is its own:
    closed there, 299 requests of 3 reads) and of a musl one (clockprof
    finds write() in glibc, which the command never maps: the boundary is
    sys_enter's from the start, with a warning, and exact: 299)."""
    for name, in_target in (("reply_target_static", True), ("reply_target_musl", False)):
        if in_target or os.path.exists(os.path.join(ctx.targets, name)):
            exe = ctx.target(name)
        else:
            print(f"     {name}: not built (no musl-gcc: make test-deps installs musl-tools)")
            continue
        out = os.path.join(ctx.tmp, f"{name}.json")
        proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "-o", out,
                               "-r", "syscall:write", "--", exe, "write", "3", "300"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{name}: exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        assert run["request"]["closed_in_target"] == in_target, (name, run["request"], run["warnings"])
        assert run["request"]["count"] == 299, (name, run["request"])
        assert run["per_request"]["histogram"] == [[3, 299]], (name, run["per_request"])
        said = [w for w in run["warnings"] if "sys_enter" in w]
        assert bool(said) != in_target, (name, run["warnings"])


def file_offset(exe, symbol):
    """symbol's offset in the file exe (its address through the program
    headers' mapping of file offsets)."""
    addr = int(next(line.split()[0] for line in subprocess.run(
        ["nm", "--defined-only", exe], capture_output=True, text=True, check=True).stdout.splitlines()
        if line.split()[-1] == symbol), 16)
    for line in subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, vaddr, size = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            if vaddr <= addr < vaddr + size:
                return addr - vaddr + off
    raise AssertionError(f"{symbol} is in no segment of {exe}")


def test_another_tools_uprobe_on_the_displaced_instruction_is_named(ctx):
    """A uprobe another process holds (with a BPF program, as bpftrace's
    are) on the instruction the jump would displace (reads_target's
    handle_request+1: push rbp, then the 7-byte lea): clockprof finds it
    in the kernel's list, names its holder, and keeps the boundary a
    uprobe; every request is still counted exactly, the target unharmed."""
    holder_exe = os.path.join(ctx.targets, "..", "uprobe-holder")
    exe = ctx.target("reads_target")
    target = subprocess.Popen([exe, "clock_gettime", "2", "0"])
    holder = None
    try:
        wait_serving(target)
        holder = subprocess.Popen([holder_exe, exe, str(file_offset(exe, "handle_request") + 1)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "holding", "the holder placed no uprobe"
        proc, out = attach(ctx, target.pid, 0.7)
        run = finish(ctx, proc, out)
        said = [w for w in run["warnings"] if "uprobe-holder" in w and "displace" in w]
        assert said, run["warnings"]
        assert not run["request"]["closed_in_target"] and run["probe"]["hits"] > 0, run["request"]
        assert run["per_request"]["histogram"] == [[2, run["request"]["count"]]], run["per_request"]
        assert run["request"]["count"] >= MIN_REQUESTS, run["request"]
        assert target.poll() is None, "the target died"
    finally:
        if holder:
            holder.stdin.close()
            holder.wait(timeout=30)
        target.kill()
        target.wait()


SYSCALL_READ_TARGETS = ("syscall_read_target", "syscall_read_target_musl",
                        "syscall_read_target_musl_static")


def syscall_read_targets(ctx):
    """syscall_read_target as built: glibc always, musl (dynamic and
    static) where musl-gcc is installed."""
    names = [n for n in SYSCALL_READ_TARGETS if os.path.exists(os.path.join(ctx.targets, n))]
    if len(names) < len(SYSCALL_READ_TARGETS):
        print("     musl builds not built (no musl-gcc: make test-deps installs musl-tools)")
    return [ctx.target(n) for n in names or SYSCALL_READ_TARGETS[:1]]


def check_syscall_read(exe, run):
    """7 reads in every request, by construction (syscall_read_target.c),
    one of them through syscall(): counted in its request, with no trap."""
    name, reads, count = os.path.basename(exe), run["clock_reads"], run["request"]["count"]
    assert run["request"]["closed_in_target"], (name, run["request"], run["warnings"])
    assert count >= MIN_REQUESTS, (name, run["request"])
    assert run["per_request"]["histogram"] == [[7, count]], (name, run["per_request"], run["warnings"])
    assert reads["per_op"] == 7.0 and reads["in_requests"] == 7 * count, (name, reads)
    assert run["probe"]["hits"] == 0, (name, run["probe"])
    assert not [w for w in run["warnings"] if "syscall()" in w], (name, run["warnings"])


def test_a_read_through_syscall_is_in_its_request_under_each_c_library(ctx):
    """run -r func:handle_request of the demo's request with one read
    through syscall() (glibc, musl dynamic and static): musl's syscall()
    makes its frame first (sub rsp) and is redirected past it, so the read
    is counted in the target, in its request: 7.000/op, no trap."""
    for exe in syscall_read_targets(ctx):
        out = os.path.join(ctx.tmp, os.path.basename(exe) + ".json")
        proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "-o", out,
                               "-r", "func:handle_request", "--", exe, "300", "500"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{exe}: exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        check_syscall_read(exe, run)
        assert run["request"]["count"] == 299, run["request"]
        assert run["clock_reads"]["by_path"] == {"syscall": 300, "vdso": 1800}, run["clock_reads"]


def test_an_attached_read_through_syscall_is_in_its_request_under_each_c_library(ctx):
    """The same, attached to the running target: 7.000/op."""
    for exe in syscall_read_targets(ctx):
        target = subprocess.Popen([exe, "0", "500"], stdout=subprocess.PIPE, text=True)
        try:
            assert target.stdout.readline().startswith("ready"), f"{exe} did not start"
            proc, out = attach(ctx, target.pid, 1)
            check_syscall_read(exe, finish(ctx, proc, out))
            assert target.poll() is None, f"{exe} died"
        finally:
            target.kill()
            target.wait()


def test_a_plain_attach_leaves_no_breakpoint_in_the_target(ctx):
    """The default attach, no boundary, to the demo's request with one read
    through syscall(): nothing of clockprof's traps in the target. Its
    syscall() is redirected (the read counted in the target), the C
    library's execve is not probed where the kernel traces
    sched_prepare_exec, and libraries are looked for in its maps, not
    waited for at a uprobe on the dynamic linker's _dl_debug_state: no
    int3 of clockprof's in its code while the window is open, no trap, and
    so no uprobe's removal for the attach to wait for at its end. Every
    read is counted: 6 through the vDSO for each through syscall(), but
    for the requests the window's edges cut."""
    exe = ctx.target("syscall_read_target")
    target = subprocess.Popen([exe, "0", "500"], stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().startswith("ready"), f"{exe} did not start"
        out = os.path.join(ctx.tmp, "plain.json")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-o", out, "-d",
                                 "1.5", str(target.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        breakpoints = code_changed(target.pid, breakpoints_only=True)
        run = finish(ctx, proc, out)
        assert target.poll() is None, "the target died"
    finally:
        target.kill()
        target.wait()
    assert run["clock_reads"]["mechanism"] == "patch", run["probe"]
    assert breakpoints == 0, f"{breakpoints} int3 in the target's code in the window"
    assert run["probe"]["hits"] == 0, run["probe"]
    paths = run["clock_reads"]["by_path"]
    assert paths["syscall"] >= MIN_REQUESTS, paths
    assert abs(paths["vdso"] - 6 * paths["syscall"]) <= 6, paths


def test_a_target_counted_alone_keeps_its_syscall_reads_as_it_exits(ctx):
    """run --no-inherit, no boundary, of the demo's request with one read
    through syscall() (glibc, musl dynamic and static), which exits on its
    own: syscall() is redirected in a target counted alone, its reads
    counted in its request blocks, and the BPF program sums those at its
    exit with the table (the target's memory is gone when the window
    closes). Every read counted: 300 through syscall(), 1800 through the
    vDSO, none lost with the blocks."""
    for exe in syscall_read_targets(ctx):
        out = os.path.join(ctx.tmp, os.path.basename(exe) + "-alone.json")
        proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "--no-inherit", "-o",
                               out, "--", exe, "300", "500"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{exe}: exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "patch", run["probe"]
        assert run["probe"]["hits"] == 0, (exe, run["probe"])
        assert run["clock_reads"]["by_path"] == {"syscall": 300, "vdso": 1800}, \
            (exe, run["clock_reads"], run["warnings"])


def test_threads_that_exec_at_once_count_syscalls_reads_once(ctx):
    """run --no-inherit of 4 threads of 200 requests (1 read through
    syscall(), 2 through the vDSO each) that then call execve together,
    where the C library's execve is the uprobe that sums the table (as
    before Linux 6.10: CLOCKPROF_TEST_NO_PREPARE_EXEC): each call began a
    pass, at once, and the passes added into each other's request sums,
    zeroed once as a pass begins: 1,400 or 1,600 reads through syscall()
    said, or none. One pass at a time: 800, each run."""
    env = dict(os.environ, CLOCKPROF_TEST_NO_PREPARE_EXEC="1")
    for i in range(6):
        out = os.path.join(ctx.tmp, f"race-{i}.json")
        proc = subprocess.run([ctx.clockprof, "run", "-q", "-e", "none", "--no-inherit", "-o",
                               out, "--", ctx.target("exec_race_target"), "4", "200"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert proc.returncode == 0, proc.stderr
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "patch", run["probe"]
        assert run["clock_reads"]["by_path"] == {"syscall": 800, "vdso": 1600}, \
            (i, run["clock_reads"]["by_path"], run["warnings"])


def test_a_boundary_the_exec_cannot_redirect_stays_a_uprobe(ctx):
    """`run -- env PROG` with the boundary in PROG, which env does not map:
    whether the exec'd image can be redirected is planned against the file
    before the window. With another tool's uprobe on the instruction the
    jump would displace, it cannot: the boundary stays the session's uprobe
    from the start (the warning names the holder), and every request of the
    program env execs is still counted (reads_target clock_gettime 2 60:
    59 complete requests of 2 reads), rather than none."""
    holder_exe = os.path.join(ctx.targets, "..", "uprobe-holder")
    exe = ctx.target("reads_target")
    holder = subprocess.Popen([holder_exe, exe, str(file_offset(exe, "handle_request") + 1)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding", "the holder placed no uprobe"
        out = os.path.join(ctx.tmp, "env.json")
        proc = ctx.run("run", "-q", "-e", "none", "-r", f"func:{exe}:handle_request", "-o", out,
                       "--", "env", exe, "clock_gettime", "2", "60")
        assert proc.returncode == 0, proc.stderr
        run = ctx.load_json(out)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert any("uprobe-holder" in w and "displace" in w for w in run["warnings"]), run["warnings"]
    assert not run["request"]["closed_in_target"], run["request"]
    assert run["request"]["count"] == 59, (run["request"], run["warnings"])
    assert run["per_request"]["histogram"] == [[2, 59]], run["per_request"]
    assert run["clock_reads"]["total"] == 120, run["clock_reads"]
