"""The vDSO patch (lib/probe/mech/patch/vdso_patch.h), driven alone by
tests/patch/vdso_patch_tool.c against tests/targets/patch_target, whose
reads are known by construction: exact counts per entry and clock id on
every C library build, a second attach that reuses what the first left,
no EINTR seen by a thread blocked in epoll_wait, and a target that stays
correct however the tool is killed."""
import os
import random
import resource
import signal
import subprocess
import time

from common import Skip, accountable_kib, tree

ROUND = 5  # reads per round: MONOTONIC, REALTIME, PROCESS_CPUTIME_ID, gettimeofday, time


class Target:
    """A target driven over its stdin ("go K", "quit"), perhaps under a
    tracer (under: argv before the target's own; the target then says its
    pid after "ready")."""

    def __init__(self, path, *args, env=None, under=()):
        self.p = subprocess.Popen([*under, path, *map(str, args)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, **(env or {})))
        line = self.p.stdout.readline()
        assert line.startswith("ready"), f"target said {line!r}"
        self.pid = int(line.split()[1]) if under else self.p.pid

    def go(self, k):
        self.p.stdin.write(f"go {k}\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == "done"

    def vdso(self, prot):
        """The target's own vDSO made readable only ("r") or executable
        again ("rx"), by the target."""
        self.p.stdin.write(f"vdso {prot}\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == f"vdso {prot}"

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        out = self.p.stdout.read()
        return self.p.wait(timeout=30), out

    def fds(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def anon_maps(self, perms):
        """Anonymous mappings with perms, those that touch counted as one:
        the counter table is several (its counters and site blocks are
        wiped at fork, its rules are not)."""
        n, end = 0, None
        with open(f"/proc/{self.pid}/maps") as f:
            for line in f:
                fields = line.split()
                if len(fields) != 5 or fields[1] != perms:
                    continue
                start, stop = (int(x, 16) for x in fields[0].split("-"))
                n += start != end
                end = stop
        return n


class Tool:
    def __init__(self, ctx, pid, kill_at=None, boundary=None, env=None, pass_fds=()):
        path = os.path.join(ctx.targets, "..", "vdso-patch-tool")
        if not os.path.exists(path):
            raise AssertionError(f"{path} was not built")
        pre = ["--kill-at", str(kill_at)] if kill_at else []
        pre += ["--boundary", boundary] if boundary else []
        self.p = subprocess.Popen([path, *pre, str(pid)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, **(env or {})), pass_fds=pass_fds)
        self.attached = self.p.stdout.readline().strip()

    def read(self, what="read"):
        self.p.stdin.write(f"{what}\n")
        self.p.stdin.flush()
        words = self.p.stdout.readline().split()
        return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}

    def detach(self):
        self.p.stdin.write("detach\n")
        self.p.stdin.flush()
        out = self.p.stdout.read().strip()
        assert self.p.wait(timeout=30) == 0 and out == "detached", f"detach: {out}"


def expected(n, musl):
    """What one go of n rounds per thread reaches at the vDSO: musl serves
    gettimeofday and time through clock_gettime(CLOCK_REALTIME)."""
    if musl:
        return {"total": ROUND * n, "clock_gettime": ROUND * n, "gettimeofday": 0, "time": 0,
                "clock0": 3 * n, "clock1": n, "clock2": n, "shared": 0}
    return {"total": ROUND * n, "clock_gettime": 3 * n, "gettimeofday": n, "time": n,
            "clock0": n, "clock1": n, "clock2": n, "shared": 0}


def counted_round(ctx, target, threads, k, musl=False):
    tool = Tool(ctx, target.pid)
    assert tool.attached.startswith("attached"), tool.attached
    before = tool.read()
    target.go(k)
    c = tool.read()
    tool.detach()
    got = {key: c[key] - before[key] for key in c}
    want = expected(threads * k, musl)
    assert {key: got[key] for key in want} == want, f"counted {got}, expected {want}"
    return tool.attached


def exact_on(ctx, name, threads=4, k=1000, env=None):
    musl = "musl" in name
    target = Target(ctx.target(name), threads, env=env)
    try:
        first = counted_round(ctx, target, threads, k, musl)
        assert " reused 0 " in first, first
        second = counted_round(ctx, target, threads, k, musl)
        assert " reused 1 " in second, f"the second attach did not reuse the first's code: {second}"
        target.go(10)  # detached: still reads right
    finally:
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


def test_patch_counts_every_read_exactly(ctx):
    exact_on(ctx, "patch_target")


def test_patch_counts_a_static_executable(ctx):
    exact_on(ctx, "patch_target_static")


def test_patch_counts_musl(ctx):
    for name in ("patch_target_musl", "patch_target_musl_static"):
        if not os.path.exists(os.path.join(ctx.targets, name)):
            raise Skip("musl-gcc is not installed (make test-deps installs musl-tools)")
        exact_on(ctx, name)


def test_patch_no_eintr_for_a_thread_in_epoll_wait(ctx):
    """One busy thread and one blocked in epoll_wait: the busy one is the
    one held, 50 attach/detach cycles later epoll_wait never saw EINTR."""
    target = Target(ctx.target("patch_target"), 1, "epoll")
    try:
        for _ in range(50):
            tool = Tool(ctx, target.pid)
            assert tool.attached.startswith("attached"), tool.attached
            assert " eintr 0" in tool.attached, tool.attached
            tool.detach()
    finally:
        rc, out = target.quit()
    assert rc == 0 and "eintr 0 " in out, f"target: exit {rc}, {out}"


# A thread in recv() on a socket with a receive timeout (SO_RCVTIMEO)
# and one asleep; the first has the lower tid.
# SLEEP: time.sleep, an absolute clock_nanosleep, restarted as itself; a
# poll with a timeout, restarted as restart_syscall after the first stop.
RECV_WITH_TIMEOUT = """
import select, socket, struct, threading, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 60, 0))
threading.Thread(target=SLEEP, daemon=True).start()
print("ready", flush=True)
s.recv(1)
"""
SLEEPS = ("lambda: time.sleep(60)", "lambda: select.poll().poll(60000)")


def test_no_eintr_for_a_socket_wait_when_another_thread_sleeps(ctx):
    """A socket call with a timeout returns EINTR at a ptrace stop where
    the same call without one restarts unseen (signal(7)); nothing outside
    the process says which it has. With a thread asleep beside it (a stop
    restarts that sleep unseen), that thread is the one held: the socket
    call never sees EINTR, and the run says no EINTR: at every stop of the
    attach, a sleep resumed as restart_syscall included."""
    for sleep in SLEEPS:
        no_eintr_beside(ctx, RECV_WITH_TIMEOUT.replace("SLEEP", sleep))


def no_eintr_beside(ctx, code):
    p = subprocess.Popen(["python3", "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        until = time.monotonic() + 30
        while time.monotonic() < until:  # the main thread in recvfrom, the other asleep
            with open(f"/proc/{p.pid}/syscall") as f:
                if f.read().split()[0] == "45":
                    break
            time.sleep(0.02)
        out = os.path.join(ctx.tmp, "recv.json")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.3s", "-o", out, str(p.pid))
        assert proc.returncode == 0, proc.stderr
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "patch", run["probe"]
        assert not [w for w in run["warnings"] if "EINTR" in w], (code, run["warnings"])
    finally:
        p.kill()
        p.wait()


def attach_again_counts(ctx, target, step):
    """After the tool was killed at step: a new attach works and counts."""
    after = Tool(ctx, target.pid)
    assert after.attached.startswith("attached"), f"after step {step}: {after.attached}"
    c1 = after.read()["total"]
    # the target's threads read without end, when a loaded host gives them
    # a CPU: waited for, as long as only a hang takes
    until = time.monotonic() + 30
    while after.read()["total"] == c1 and time.monotonic() < until:
        time.sleep(0.02)
    assert after.read()["total"] > c1, f"after step {step} an attach no longer counts"
    after.detach()


def test_patch_target_survives_a_kill_after_each_step(ctx):
    """The tool killed after each step of attach and detach in turn (the
    patch's own step hook): the 4-thread checking target never notices,
    and the next attach counts again."""
    target = Target(ctx.target("patch_target"), 4, "check")
    fds = target.fds()
    step = 0
    try:
        while True:
            step += 1
            tool = Tool(ctx, target.pid, kill_at=step)
            tool.p.stdin.close()  # EOF: detach right after attaching
            rc = tool.p.wait(timeout=30)
            assert target.p.poll() is None, f"target died after step {step}"
            if rc == 0:
                break
            assert rc == -signal.SIGKILL, f"tool exited {rc} before step {step}: {tool.attached}"
            attach_again_counts(ctx, target, step)
        assert step > 10, f"only {step - 1} steps seen"
        assert target.fds() == fds
    finally:
        rc, out = target.quit()
    assert rc == 0, f"the target saw a wrong clock value or failed: exit {rc}, {out}"


def fresh_target_survives_each_kill(ctx, boundary=None, command=("patch_target", 2, "check")):
    """The tool killed after each step of a first attach (with boundary: a
    request boundary redirected too) in turn, each on a fresh checking
    target (command; by default 2 threads of patch_target's); after each
    kill an attach still works and counts, and the target exits 0 (it saw
    no wrong value)."""
    step = 0
    while True:
        step += 1
        target = Target(ctx.target(command[0]), *command[1:])
        try:
            tool = Tool(ctx, target.pid, kill_at=step, boundary=boundary)
            tool.p.stdin.close()
            rc = tool.p.wait(timeout=30)
            assert target.p.poll() is None, f"target died after step {step}"
            if rc != 0:
                assert rc == -signal.SIGKILL, f"tool exited {rc} before step {step}: {tool.attached}"
                attach_again_counts(ctx, target, step)
            else:
                assert tool.attached.startswith("attached"), tool.attached
        finally:
            code, out = target.quit()
        assert code == 0, f"after step {step}: the target saw a wrong value: exit {code}, {out}"
        if rc == 0:
            break
    assert step > 10, f"only {step - 1} steps seen"


def test_patch_fresh_target_survives_a_kill_after_each_step(ctx):
    """As above, but each kill on a target never patched before: the steps
    of a first attach (the table mapped by a first pass of the stub, its
    code pages written, the sites switched by a second pass) are each cut
    once. The next attach finds what was left, completes it and counts."""
    fresh_target_survives_each_kill(ctx)


def test_a_boundary_closed_in_the_target_makes_each_round_a_request(ctx):
    """A request boundary redirected in the target (one_round, called once
    per round of 5 reads by each of 3 threads): K rounds a thread are K
    boundaries, K - 1 requests of exactly 5 reads each, closed in the
    target with no trap; the round after the last boundary is in none."""
    k = 200
    target = Target(ctx.target("patch_target"), 3)
    try:
        tool = Tool(ctx, target.pid, boundary="one_round")
        assert tool.attached.startswith("attached"), tool.attached
        before = tool.read("requests")
        assert before == {"requests": 0, "in_requests": 0, "lost": 0}, before
        target.go(k)
        got = tool.read("requests")
        tool.detach()
        target.go(10)  # switched back: runs on, and still reads right
    finally:
        rc, out = target.quit()
    assert got == {"requests": 3 * (k - 1), "in_requests": 5 * 3 * (k - 1), "lost": 0,
                   f"hist{ROUND}": 3 * (k - 1)}, got
    assert rc == 0, f"target exited {rc}: {out}"


def test_patch_with_a_boundary_survives_a_kill_after_each_step(ctx):
    """A target never patched before, a request boundary redirected on its
    check_once (each of 2 threads calls it in a loop, and so does its
    5 kHz SIGPROF handler, which interrupts them anywhere, inside the
    trampoline and the close too; it checks every clock value against the
    raw syscall and its own return value): the tool killed after each
    step of the attach in turn (the trampoline written, the table mapped,
    its code written, the sites and the boundary switched ...). The target
    never notices, and an attach after each kill works and counts."""
    fresh_target_survives_each_kill(ctx, boundary="check_once")


def test_a_boundary_on_both_paths_survives_a_kill_after_each_step(ctx):
    """As above with a boundary whose start has no room before its first
    branch (patch_target's check_branches: test, js), redirected on both
    paths past it, as glibc's syscall wrappers are for syscall: boundaries:
    two jumps in one function, switched by one pass of the stub; each
    thread calls it on both paths. The tool is killed after each step;
    the program never notices, and an attach after each kill counts."""
    fresh_target_survives_each_kill(ctx, boundary="check_branches")


def test_a_go_boundary_survives_a_kill_after_each_step(ctx):
    """As above in Go (go_target check: 3 goroutines on their threads
    call main.checkOnce, the boundary, which checks time.Now against the
    raw syscall and its own result; its stack check fails now and then,
    so morestack runs its entry again; the collector runs, and a 2 kHz
    CPU profiler walks the goroutines' stacks from wherever SIGPROF lands,
    inside the trampoline and the close too). The redirect goes past the
    stack check; the tool is killed after each step of the attach; the
    program never notices."""
    if not os.path.exists(ctx.target("go_target")):
        raise Skip("no Go compiler on this machine (make test-deps installs golang-go)")
    fresh_target_survives_each_kill(ctx, boundary="main.checkOnce", command=("go_target", "check", 3))


def test_patch_target_survives_the_tool_killed_at_random_instants(ctx):
    """200 SIGKILLs of the tool from its start to its detach, on a 4-thread
    target that checks every vDSO result against the raw syscall; after
    each, an attach must still work and count. The target exits 0, with no
    file descriptor and at most one anonymous mapping (the counter table:
    its writable part and its code pages) more than it had, and none both
    writable and executable."""
    target = Target(ctx.target("patch_target"), 4, "check")
    fds, maps, code = target.fds(), target.anon_maps("rw-p"), target.anon_maps("r-xp")
    rng = random.Random(26)
    try:
        for trial in range(200):
            tool = Tool.__new__(Tool)
            path = os.path.join(ctx.targets, "..", "vdso-patch-tool")
            tool.p = subprocess.Popen([path, str(target.pid)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
            if trial % 2:
                tool.p.stdin.write("read\ndetach\n")
                tool.p.stdin.flush()
            time.sleep(rng.uniform(0, 0.012))
            tool.p.send_signal(signal.SIGKILL)
            tool.p.wait()
            assert target.p.poll() is None, f"target died after kill {trial}"
        after = Tool(ctx, target.pid)
        assert after.attached.startswith("attached"), after.attached
        c1 = after.read()["total"]
        time.sleep(0.05)
        assert after.read()["total"] > c1, "a later attach no longer counts"
        after.detach()
        assert target.fds() == fds, f"file descriptors {fds} -> {target.fds()}"
        assert target.anon_maps("rw-p") <= maps + 1, "more than the counter table was left"
        assert target.anon_maps("r-xp") <= code + 1, "more than the table's code pages were left"
        assert target.anon_maps("rwxp") == 0, "memory both writable and executable was left"
    finally:
        rc, out = target.quit()
    assert rc == 0, f"the target saw a wrong clock value or failed: exit {rc}, {out}"


def test_patch_self_test_counts_200_of_200(ctx):
    path = os.path.join(ctx.targets, "..", "vdso-patch-tool")
    out = subprocess.run([path, "--selftest"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "selftest 200 of 200", out.stdout


def test_patch_under_a_container_style_seccomp_filter(ctx):
    """The filter allows the stub's syscalls: the patch is used, exact."""
    exact_on(ctx, "patch_target", env={"PATCH_TARGET_SECCOMP": "container"})


def test_patch_refused_by_a_filter_that_kills_on_mmap(ctx):
    """The stub's mmap would kill the target: refused before anything runs
    in it, and the target lives on."""
    target = Target(ctx.target("patch_target"), 2, env={"PATCH_TARGET_SECCOMP": "kill-mmap"})
    try:
        tool = Tool(ctx, target.pid)
        assert tool.p.wait(timeout=30) == 3, tool.attached
        assert tool.attached.startswith("refused:") and "seccomp" in tool.attached, tool.attached
        target.go(100)
    finally:
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


class StubWaits:
    """The tests' hook CLOCKPROF_TEST_STUB_WAITS_FD: clockprof writes a
    byte to a pipe for each wait for its stub that runs out."""

    def __init__(self):
        self.r, self.w = os.pipe()
        os.set_blocking(self.r, False)
        self.env = {"CLOCKPROF_TEST_STUB_WAITS_FD": str(self.w)}

    def count(self):
        try:
            return len(os.read(self.r, 4096))
        except BlockingIOError:
            return 0

    def close(self):
        os.close(self.r)
        os.close(self.w)


def test_patch_refused_in_a_process_that_denies_itself_writable_code(ctx):
    """prctl(PR_SET_MDWE): nothing says it before the stub runs, and the
    stub's own result says it (its code pages cannot be made executable),
    kept out of the vDSO page: refused with no wait for the stub run out,
    naming memory-deny-write-execute; the target lives on, unchanged, and
    auto counts it with uprobes, again with no wait run out."""
    target = Target(ctx.target("patch_target"), 2, env={"PATCH_TARGET_MDWE": "1"})
    waits = StubWaits()
    try:
        tool = Tool(ctx, target.pid, env=waits.env, pass_fds=(waits.w,))
        assert tool.p.wait(timeout=30) == 3, tool.attached
        assert "memory-deny-write-execute" in tool.attached, tool.attached
        assert "denies itself writable code" in tool.attached, tool.attached
        assert waits.count() == 0
        target.go(100)
        out = os.path.join(ctx.tmp, "mdwe.json")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.3s", "-o", out, str(target.pid),
                       env=dict(os.environ, **waits.env), pass_fds=(waits.w,))
        assert proc.returncode == 0, proc.stderr
        assert waits.count() == 0
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]["mechanism"]
        assert "memory-deny-write-execute" in run["probe"]["fallback_reason"], run["probe"]
    finally:
        waits.close()
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


def test_patch_sends_no_thread_into_a_vdso_the_process_made_not_executable(ctx):
    """A process that makes its own vDSO readable only (mprotect, as a
    sandbox may) has no executable stub: a thread sent there died of
    SIGSEGV, at attach and at detach (the process protected it in the
    window). Attach is refused and detach fails, both saying why; the
    process lives on, and once it makes its vDSO executable again it reads
    right, through entries a failed detach left switched."""
    fresh = Target(ctx.target("patch_target"), 2)
    try:
        fresh.vdso("r")
        tool = Tool(ctx, fresh.pid)
        assert tool.p.wait(timeout=30) == 3, tool.attached
        assert tool.attached.startswith("refused") and "vDSO" in tool.attached, tool.attached
        assert fresh.p.poll() is None, "the target died at attach"
        fresh.vdso("rx")
        fresh.go(10)
    finally:
        rc, out = fresh.quit()
    assert rc == 0, f"target exited {rc}: {out}"
    target = Target(ctx.target("patch_target"), 2)
    try:
        tool = Tool(ctx, target.pid)
        assert tool.attached.startswith("attached"), tool.attached
        target.vdso("r")
        tool.p.stdin.write("detach\n")
        tool.p.stdin.flush()
        out = tool.p.stdout.read().strip()
        tool.p.wait(timeout=30)
        assert out.startswith("detach failed") and "vDSO" in out, out
        assert target.p.poll() is None, "the target died at detach"
        target.vdso("rx")
        target.go(10)
    finally:
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


def test_patch_refused_where_another_process_shares_the_memory(ctx):
    """A process made with clone(CLONE_VM), not a thread, shares the
    target's memory, the counter table with it, and reads the clock: the
    patch counted its reads as the target's (millions, where the target,
    idle, read none; uprobes count by process). Refused, naming it; auto
    counts with uprobes, none."""
    target = Target(ctx.target("patch_target"), 2, env={"PATCH_TARGET_CLONE_VM": "1"})
    try:
        tool = Tool(ctx, target.pid)
        assert tool.p.wait(timeout=30) == 3, tool.attached
        assert "shares its memory with process" in tool.attached, tool.attached
        out = os.path.join(ctx.tmp, "shared.json")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.3s", "-o", out, str(target.pid))
        assert proc.returncode == 0, proc.stderr
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]
        assert "shares its memory" in run["probe"]["fallback_reason"], run["probe"]
        assert run["clock_reads"]["total"] == 0, run["clock_reads"]
        # --tree needs the patch (the sharer is a child): refused, saying why
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.3s", "--tree", "-o", out,
                       str(target.pid))
        assert proc.returncode == 3, proc.stderr
        assert "shares its memory" in proc.stderr, proc.stderr
        target.go(10)
    finally:
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


def test_patch_run_of_a_command_that_denies_itself_writable_code_later(ctx):
    """run -- WRAPPER PROG where the wrapper sets PR_SET_MDWE and execs
    PROG: PROG's patch at its exec is refused by the stub's own result,
    with no wait run out (it was held 5 s, then let go), and said."""
    waits = StubWaits()
    wrapper = ("import ctypes, os, sys\n"
               "assert ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) == 0\n"
               "os.execv(sys.argv[1], sys.argv[1:])\n")
    try:
        proc = ctx.run("run", "-e", "none", "-o", os.path.join(ctx.tmp, "mdwe-run.json"), "--",
                       "python3", "-c", wrapper, ctx.target("unstubbed_target"), 10,
                       env=dict(os.environ, **waits.env), pass_fds=(waits.w,))
        assert proc.returncode == 0, proc.stderr
        assert waits.count() == 0
        assert "memory-deny-write-execute" in proc.stdout + proc.stderr, proc.stdout
    finally:
        waits.close()


def maps_wx(pid):
    """pid's mappings that are writable and executable, as maps lines."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return [line.strip() for line in f if line.split()[1][1:3] == "wx"]
    except (FileNotFoundError, ProcessLookupError):
        return []


def test_patch_leaves_no_writable_code_in_forks_of_its_window(ctx):
    """A process the target forks while its stub has the vDSO writable and
    executable (the tests' hook holds the stub there 300 ms; the target
    forks every 10 ms) inherits that copy for life, and its sites half
    switched: each is sent through the stub again. After the attach and
    after the detach, no process of the target's tree has a writable and
    executable mapping, and the target counts right."""
    target = Target(ctx.target("patch_target"), 1, env={"PATCH_TARGET_FORKS": "1"})
    waits = StubWaits()
    try:
        tool = Tool(ctx, target.pid, env={"CLOCKPROF_TEST_STUB_PAUSE_MS": "300", **waits.env},
                    pass_fds=(waits.w,))
        assert tool.attached.startswith("attached"), tool.attached
        bad = {p: maps_wx(p) for p in tree(target.pid) if maps_wx(p)}
        assert not bad, f"after the attach: {bad}"
        target.go(100)
        tool.detach()
        bad = {p: maps_wx(p) for p in tree(target.pid) if maps_wx(p)}
        assert not bad, f"after the detach: {bad}"
        assert len(tree(target.pid)) > 1, "the target forked nothing"
        assert waits.count() == 0
    finally:
        waits.close()
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


def run_patch(ctx, *argv):
    out = os.path.join(ctx.tmp, "patch.json")
    proc = ctx.run("run", "-q", "--mechanism", "patch", "-e", "none", "-o", out, *argv)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return ctx.load_json(out)


def test_patch_counts_reads_no_stub_shows(ctx):
    """What uprobes miss (they sit on PLT stubs and the C library's
    wrapper): direct calls of __vdso_clock_gettime and a gettimeofday
    pointer from dlsym (uprobes count 1 of the 4 reads per request of
    unstubbed_target), and a -fno-plt build. Exact with the patch."""
    n = 100
    run = run_patch(ctx, "-r", "func:handle_request", "--", ctx.target("unstubbed_target"), n)
    cr = run["clock_reads"]
    assert run["per_request"]["histogram"] == [[4, n - 1]], run["per_request"]
    assert cr["total"] == 4 * n, cr
    assert cr["by_entry"] == {"clock_gettime": 3 * n, "gettimeofday": n}, cr
    assert cr["by_clock"] == {"CLOCK_MONOTONIC": 2 * n, "CLOCK_REALTIME": 2 * n}, cr
    run = run_patch(ctx, "-r", "func:handle_request", "--",
                    ctx.target("reads_target_noplt"), "mix", 1, n)
    assert run["per_request"]["histogram"] == [[6, n - 1]], run["per_request"]
    assert run["clock_reads"]["total"] == 6 * n
    assert not any("not seen" in w for w in run.get("warnings", [])), run.get("warnings")


def test_uprobes_say_a_vdso_called_by_its_own_name(ctx):
    """unstubbed_target looks __vdso_clock_gettime up by name and calls it:
    uprobes count 1 of its 4 reads per request. The count is what it is;
    the run must say which reads it cannot see, as it does for -fno-plt."""
    n = 20
    out = os.path.join(ctx.tmp, "u.json")
    proc = ctx.run("run", "-q", "--mechanism", "uprobe", "-e", "none", "-o", out,
                   "-r", "func:handle_request", "--", ctx.target("unstubbed_target"), n)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    assert run["per_request"]["histogram"] == [[1, n - 1]], run["per_request"]
    said = [w for w in run["warnings"] if "not seen by uprobes" in w]
    assert len(said) == 1 and "__vdso_clock_gettime" in said[0], run["warnings"]
    # Go names the vDSO's entries for its runtime, whose calls are probed.
    proc = ctx.run("run", "-q", "--mechanism", "uprobe", "-e", "none", "-o", out,
                   "--", ctx.target("go_target"), "mix", 0, n)
    assert proc.returncode == 0, proc.stderr
    assert not any("not seen" in w for w in ctx.load_json(out)["warnings"])


def test_patch_refuses_a_target_under_a_debugger(ctx):
    """A target already traced (here by strace) cannot be held: the patch
    is refused with the reason, exit 3, and the target runs on unharmed."""
    import shutil
    if not shutil.which("strace"):
        raise Skip("strace is not installed")
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", os.devnull,
                               ctx.target("patch_target"), "2"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert tracer.stdout.readline().startswith("ready")
        pid = int(subprocess.run(["pgrep", "-P", str(tracer.pid)], capture_output=True,
                                 text=True).stdout.split()[0])
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-d", "0.2", "-e", "none",
                       "-o", os.path.join(ctx.tmp, "r.json"), pid)
        assert proc.returncode == 3, (proc.returncode, proc.stderr)
        assert "already under a debugger (traced by process" in proc.stderr, proc.stderr
        tracer.stdin.write("go 10\n")
        tracer.stdin.flush()
        assert tracer.stdout.readline().strip() == "done"
    finally:
        tracer.stdin.write("quit\n")
        tracer.stdin.flush()
        tracer.wait(timeout=30)
    assert tracer.returncode == 0


def test_patch_keeps_reads_before_an_exec_and_leaves_children_apart(ctx):
    """An exec takes the old image and its counters away: they are summed
    at the exec first (7 reads, then an exec of a program that reads 5 + 5
    and forks a child that reads 3: 7 with --no-inherit, 20 when run
    follows the target into its new image). A forked child counts in its
    own copy of the counters, never its parent's: 5 + 5 reads around a
    child that reads 30 are 40 with the child followed (run's default), 10
    without."""
    target = ctx.target("lifecycle_target")
    run = run_patch(ctx, "--no-inherit", "--", target, "exec", 7, target, "fork", 5, 3)
    assert run["clock_reads"]["total"] == 7, (run["clock_reads"], run["warnings"])
    assert any("exec()ed" in w for w in run["warnings"]), run["warnings"]
    assert not any("memory was gone" in w for w in run["warnings"]), run["warnings"]
    run = run_patch(ctx, "--", target, "exec", 7, target, "fork", 5, 3)
    assert run["clock_reads"]["total"] == 20, (run["clock_reads"], run["warnings"])
    assert [r["reads"] for r in run["processes"]] == [17, 3], run["processes"]
    assert not any("memory was gone" in w or "exec()ed" in w for w in run["warnings"]), \
        run["warnings"]
    run = run_patch(ctx, "--", target, "fork", 5, 30)
    assert run["clock_reads"]["total"] == 40, (run["clock_reads"], run["warnings"])
    assert [r["reads"] for r in run["processes"]] == [10, 30], run["processes"]
    run = run_patch(ctx, "--no-inherit", "--", target, "fork", 5, 30)
    assert run["clock_reads"]["total"] == 10, (run["clock_reads"], run["warnings"])
    assert any("started 1 process " in w for w in run["warnings"]), run["warnings"]


def test_an_exec_of_another_program_leaves_the_old_images_sites_named(ctx):
    """run --no-inherit -- lifecycle_target exec 7 sleep 0.3: the target
    execs a program it did not map. Its new image's files are not the
    window's: not probed, not named, no wrapper rule written for them
    into a table that went with the old image (the patch looks at the
    maps every 50 ms, and again at the window's close). The 7 reads are
    named in lifecycle_target's reads(), and the exec is the one thing
    said, under the patch and under uprobes (the dynamic linker's hook)."""
    target = ctx.target("lifecycle_target")
    for mechanism in ("patch", "uprobe"):
        out = os.path.join(ctx.tmp, f"exec-{mechanism}.json")
        proc = ctx.run("run", "-q", "--mechanism", mechanism, "-e", "none", "--no-inherit",
                       "-o", out, "--", target, "exec", 7, "sleep", "0.3")
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        assert run["clock_reads"]["total"] == 7, (mechanism, run["clock_reads"])
        sites = [(c["function"], c["count"]) for c in run["call_sites"]]
        assert sites == [("reads", 7)], (mechanism, sites, run["warnings"])
        said = [w for w in run["warnings"] if not w.startswith("probe overhead")]
        assert len(said) == 1 and "exec()ed" in said[0], (mechanism, run["warnings"])


def test_a_failed_table_mmap_does_not_block_the_next_attach(ctx):
    """The stub's mmap of the table fails with EEXIST (a test hook plans
    the table where the vDSO itself is, as when the target maps that place
    first): that attach is refused, saying so; the next one maps its table
    where there is room and patches (it planned the taken place again, and
    failed there, every time); the target runs on right."""
    target = Target(ctx.target("patch_target"), 2)
    try:
        out = os.path.join(ctx.tmp, "eexist.json")
        args = ("attach", "-q", "--mechanism", "patch", "-d", "0.2", "-e", "none", "-o", out,
                target.pid)
        proc = ctx.run(*args, env=dict(os.environ, CLOCKPROF_TEST_TABLE_TAKEN=str(target.pid)))
        assert proc.returncode == 3, (proc.returncode, proc.stderr)
        assert "could not be mapped" in proc.stderr and "error 17" in proc.stderr, proc.stderr
        target.go(10)
        for attempt in range(2):
            proc = ctx.run(*args)
            assert proc.returncode == 0, f"attach {attempt + 2}: {proc.stderr}"
            assert ctx.load_json(out)["clock_reads"]["mechanism"] == "patch"
        target.go(10)
    finally:
        rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"


def test_the_table_adds_no_commit_charge_at_patch_or_to_forks(ctx):
    """A patched process and each process it forks are charged at most
    256 KiB + 16 KiB per thread that read the clock beyond what they were
    before the patch (issue #43: the 34.6 MiB table was charged to the
    target and again to every later fork, whose forks then failed under
    vm.overcommit_memory=2): during the window, and after the detach."""
    threads = 2
    budget = 256 + 16 * threads
    target = Target(ctx.target("patch_target"), threads)
    children = []

    def fork():
        target.p.stdin.write("fork\n")
        target.p.stdin.flush()
        words = target.p.stdout.readline().split()
        assert words[0] == "child", words
        children.append(int(words[1]))
        return children[-1]

    try:
        target.go(10)
        before, child_before = accountable_kib(target.pid), accountable_kib(fork())
        tool = Tool(ctx, target.pid)
        assert tool.attached.startswith("attached"), tool.attached
        target.go(10)
        charged = {"patched": accountable_kib(target.pid) - before,
                   "fork while patched": accountable_kib(fork()) - child_before}
        tool.detach()
        charged["detached"] = accountable_kib(target.pid) - before
        charged["fork after detach"] = accountable_kib(fork()) - child_before
        assert all(kib <= budget for kib in charged.values()), \
            f"charged beyond {budget} KiB: {charged}"
    finally:
        for child in children:
            os.kill(child, signal.SIGTERM)
        rc, out = target.quit()
    assert rc == 0, f"target exited {rc}: {out}"


def test_strict_overcommit_refuses_the_patch_and_uprobes_count(ctx):
    """Under vm.overcommit_memory=2 the kernel charges the table whole
    whatever its flags (a test hook says so here): the patch is refused
    before anything is written, saying why, and auto counts with
    uprobes."""
    target = Target(ctx.target("patch_target"), 2)
    try:
        out = os.path.join(ctx.tmp, "strict.json")
        env = dict(os.environ, CLOCKPROF_TEST_STRICT_OVERCOMMIT="1")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.3s", "-o", out, str(target.pid),
                       env=env)
        assert proc.returncode == 0, proc.stderr
        probe = ctx.load_json(out)["probe"]
        assert ctx.load_json(out)["clock_reads"]["mechanism"] == "uprobe", probe
        assert "vm.overcommit_memory=2" in (probe["fallback_reason"] or ""), probe
        with open(f"/proc/{target.pid}/maps") as f:
            assert "clockprof" not in f.read()
        target.go(10)
    finally:
        rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"


def capped_target(ctx, resource_, room):
    """patch_target (2 threads) capped by resource_ at room bytes above
    the address space it uses now."""
    target = Target(ctx.target("patch_target"), 2)
    with open(f"/proc/{target.pid}/status") as f:
        vm = dict(line.split(":", 1) for line in f if line.startswith("Vm"))
    cap = int(vm["VmSize"].split()[0]) * 1024 + room
    resource.prlimit(target.pid, resource_, (cap, cap))
    return target


def attach_patch(ctx, target, out):
    return ctx.run("attach", "--mechanism", "patch", "-q", "-e", "none", "-d", "0.3s",
                   "-o", out, str(target.pid))


def ends_well(target):
    rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"


def test_a_cap_on_memory_refuses_the_patch_and_uprobes_count(ctx):
    """A process that caps its address space or its data (ulimit -v,
    LimitAS=) so near its use would lose the table's 35 MiB of its budget
    for life, the table counting against either cap whatever its flags:
    allocations it made within its budget before would fail. The patch is
    refused before any stub runs, saying which cap; auto counts with
    uprobes, and --mechanism patch exits 3 with one line."""
    out = os.path.join(ctx.tmp, "capped.json")
    for resource_, words in ((resource.RLIMIT_AS, "RLIMIT_AS"), (resource.RLIMIT_DATA, "RLIMIT_DATA")):
        target = capped_target(ctx, resource_, 64 << 20)
        try:
            proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.3s", "-o", out, str(target.pid))
            assert proc.returncode == 0, proc.stderr
            run = ctx.load_json(out)
            assert run["clock_reads"]["mechanism"] == "uprobe", run["probe"]
            assert words in (run["probe"]["fallback_reason"] or ""), run["probe"]
            proc = attach_patch(ctx, target, out)
            assert proc.returncode == 3 and words in proc.stderr, proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            with open(f"/proc/{target.pid}/maps") as f:
                assert "clockprof" not in f.read()
            target.go(10)
        finally:
            ends_well(target)


def test_a_cap_far_above_use_keeps_the_patch(ctx):
    """8 GiB of room under ulimit -v or -d: the table's 35 MiB is no
    reason to give the target a trap per read."""
    out = os.path.join(ctx.tmp, "roomy.json")
    for resource_ in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
        target = capped_target(ctx, resource_, 8 << 30)
        try:
            proc = attach_patch(ctx, target, out)
            assert proc.returncode == 0, proc.stderr
            assert ctx.load_json(out)["clock_reads"]["mechanism"] == "patch"
            target.go(10)
        finally:
            ends_well(target)


def test_a_cap_is_weighed_against_a_new_table_only(ctx):
    """A second attach reuses the first's table, already in what the
    process uses: a cap the first left room under refuses no later one.
    The room: the table (35 MiB) 32 times and 20 MiB more, less than that
    once it is mapped."""
    target = capped_target(ctx, resource.RLIMIT_AS, 32 * 35 * (1 << 20) + (20 << 20))
    try:
        for attach in ("first", "second"):
            proc = attach_patch(ctx, target, os.path.join(ctx.tmp, "again.json"))
            assert proc.returncode == 0, (attach, proc.stderr)
            target.go(10)
    finally:
        ends_well(target)


def test_threads_beyond_the_table_are_counted_in_the_shared_slot(ctx):
    """5,000 threads alive at once, each reading once, against a table of
    4,096 slots: every read is counted (the shared slot takes those of
    threads with no slot of their own), and the run says how many have no
    call site, and why."""
    n = 5000
    run = run_patch(ctx, "--", ctx.target("crowd_target"), n)
    assert run["clock_reads"]["total"] == n, run["clock_reads"]
    said = [w for w in run["warnings"] if "no slot of their own" in w]
    assert said, run["warnings"]
    # at least those beyond the slots; more if a key's probes all met
    # taken slots while others were still free
    assert n - 4096 <= int(said[0].split()[0]) <= n, said


def settled(pid, running=1, timeout=30):
    """Waits until all but `running` threads of pid sleep (those that
    would be held first are the running ones)."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        states = [open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0]
                  for t in os.listdir(f"/proc/{pid}/task")]
        if states.count("S") == len(states) - running:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid}'s threads did not settle")


def test_the_stub_is_never_sent_through_a_thread_with_no_room_on_its_stack(ctx):
    """A thread spinning with 160 bytes of its stack left (the stub needs
    248), above a page no one may touch, or carved out of a malloc'd
    block or a fiber pool with the program's data below: the hold lets it go and takes
    another (every hold is in probe.stops), and every read is counted.
    Sent through it, the stub killed the target with SIGSEGV or wrote over
    its data (it is the one thread running, so the one picked first)."""
    for below in ("guard", "heap", "pool"):
        target = Target(ctx.target("patch_target"), 2, env={"PATCH_TARGET_TIGHT_STACK": below})
        try:
            settled(target.pid)
            out = os.path.join(ctx.tmp, "tight.json")
            proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                           "-o", out, str(target.pid))
            assert proc.returncode == 0, proc.stderr
            stops = ctx.load_json(out)["probe"]["stops"]
            target.go(10)
        finally:
            rc, said = target.quit()
        assert rc == 0, f"{below}: target exited {rc}: {said}"
        # each pass holds the spinning thread first, then a waiting one
        assert stops == {"attach": 4, "detach": 2}, (below, stops)
        exact_on(ctx, "patch_target", threads=2, k=200, env={"PATCH_TARGET_TIGHT_STACK": below})


def test_every_stop_of_the_target_is_counted_in_run_json(ctx):
    """probe.stops: a thread of a running target is held twice to attach
    (the table mapped, then the entries switched once the wrappers'
    rules are in) and once to detach; a second attach reuses the table
    and holds it once to switch."""
    target = Target(ctx.target("patch_target"), 2)
    try:
        out = os.path.join(ctx.tmp, "stops.json")
        for stops in ({"attach": 2, "detach": 1}, {"attach": 1, "detach": 1}):
            proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                           "-o", out, str(target.pid))
            assert proc.returncode == 0, proc.stderr
            probe = ctx.load_json(out)["probe"]
            assert probe["stops"] == stops, probe
            target.go(10)
    finally:
        rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"


def test_a_signal_handled_while_its_thread_is_held_still_ends_its_wait(ctx):
    """A thread held in sigsuspend() takes a SIGUSR1 as it is let go (a
    test hook sends it while held): its handler runs and sigsuspend()
    returns, as without clockprof. The syscall was restarted by hand
    after the handler, and the program slept on for good."""
    target = subprocess.Popen([ctx.target("sigsuspend_target")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().startswith("ready")
        settled(target.pid, running=0)
        out = os.path.join(ctx.tmp, "sigsuspend.json")
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                       "-o", out, str(target.pid),
                       env=dict(os.environ, CLOCKPROF_TEST_SIGNAL_HELD=str(target.pid)))
        assert proc.returncode == 0, proc.stderr
        target.stdin.close()
        assert target.wait(timeout=30) == 0 and target.stdout.read() == "woke\n"
    finally:
        if target.poll() is None:
            target.kill()
            target.wait()


def test_no_second_stub_while_a_killed_clockprofs_stub_may_run(ctx):
    """A clockprof is SIGKILLed while its stub runs, slowed inside the
    window by a test hook; a second attach (and the first one's restorer)
    must not send a stub beside it: two at once each made the vDSO
    writable and read-only again under the other's writes, and the target
    died of SIGSEGV. The second is refused saying why (auto counts with
    uprobes); once the stub has run, a third attach patches again."""
    target = Target(ctx.target("patch_target"), 2)
    try:
        first = subprocess.Popen(
            [ctx.clockprof, "attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "20",
             "-o", os.path.join(ctx.tmp, "first.json"), str(target.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, CLOCKPROF_TEST_STUB_PAUSE_MS="3000"))
        until = time.monotonic() + 60
        while time.monotonic() < until:
            with open(f"/proc/{target.pid}/maps") as f:
                if any("rwxp" in line and "[vdso]" in line for line in f):
                    break
            time.sleep(0.01)
        else:
            raise AssertionError("the stub never made the vDSO writable")
        first.kill()
        first.wait()
        out = os.path.join(ctx.tmp, "second.json")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.2s", "-o", out, str(target.pid))
        assert proc.returncode == 0, proc.stderr
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "uprobe", run["probe"]
        assert "has not run yet" in run["probe"]["fallback_reason"], run["probe"]
        time.sleep(3.5)  # the slowed stub ends
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                       "-o", out, str(target.pid))
        assert proc.returncode == 0, proc.stderr
        target.go(10)
    finally:
        rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"


def test_a_thread_that_does_not_stop_when_held_is_let_go(ctx):
    """The target's only thread waits in vfork() for 5 s, where a ptrace
    interrupt cannot stop it: the hold gives up after its 2 s and auto
    counts with uprobes. The thread must then run on as soon as its vfork
    ends: it was left seized with the interrupt pending, stopped at its
    return from vfork() until clockprof exited, the window's 10 s."""
    target = Target(ctx.target("patch_target"), 0, env={"PATCH_TARGET_VFORK_MS": "5000"})
    out = os.path.join(ctx.tmp, "vfork.json")
    tool = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-d", "10s", "-o", out,
                             str(target.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        said = target.p.stdout.readline().strip()
        running = tool.poll() is None
        assert said == "vforked", f"target said {said!r}"
        assert tool.wait(timeout=120) == 0, tool.stderr.read()
        probe = ctx.load_json(out)["probe"]
        assert "did not stop" in (probe["fallback_reason"] or ""), probe
        assert running, "the thread ran on only once clockprof had exited"
        target.go(10)
    finally:
        tool.kill()
        tool.wait()
        rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"


def test_patch_refused_in_a_vfork_child_that_shares_its_parents_memory(ctx):
    """Attached as the target, a vfork() child (its parent waits in
    vfork() meanwhile) runs in its parent's memory: the patch written
    into it is the parent's, and stayed there after the child's exec or
    exit, nothing to switch it back. It was exempt from the refusal of a
    shared memory as the parent side of a vfork is; refused, saying why,
    the parent's vDSO untouched."""
    target = subprocess.Popen([ctx.target("patch_target"), "0"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PATCH_TARGET_VFORK_MS="4000",
                                       PATCH_TARGET_VFORK_SAY="1"))
    try:
        assert target.stdout.readline().startswith("ready")
        said = target.stdout.readline().split()
        assert said[:2] == ["vfork", "child"], said
        child = int(said[2])
        with open(f"/proc/{target.pid}/maps") as f:
            before = [line for line in f if "[vdso]" in line]
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                       "-o", os.path.join(ctx.tmp, "vfork-child.json"), str(child))
        assert proc.returncode == 3, (proc.returncode, proc.stderr)
        assert "is a vfork() child" in proc.stderr, proc.stderr
        with open(f"/proc/{target.pid}/maps") as f:
            after = [line for line in f if "[vdso]" in line]
        assert after == before, (before, after)
        assert target.stdout.readline().strip() == "vforked"
        target.stdin.write("quit\n")
        target.stdin.flush()
        assert target.wait(timeout=30) == 0
    finally:
        if target.poll() is None:
            target.kill()
            target.wait()


def vdso_writable_and_executable(pid):
    with open(f"/proc/{pid}/maps") as f:
        return any("[vdso]" in line and line.split()[1].startswith("rwx") for line in f)


def test_a_handler_that_leaves_by_siglongjmp_before_the_stub_is_told(ctx):
    """The held thread takes a SIGUSR1 as it is let go (a test hook sends
    it at each hold), and its handler leaves by siglongjmp() before the
    stub ran: the stub never runs. clockprof waited 5 s and said the
    thread did not finish it, and every later attach was refused saying a
    stub "has not run yet". Now: told at once (the thread out of the
    stub, its stack above the stub's frame), the stub sent again, and
    after its third send refused with the true reason; the next attach
    patches."""
    target = Target(ctx.target("longjmp_target"))
    try:
        settled(target.pid, running=0)
        out = os.path.join(ctx.tmp, "longjmp.json")
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                       "-o", out, str(target.pid),
                       env=dict(os.environ, CLOCKPROF_TEST_SIGNAL_HELD=str(target.pid)))
        assert proc.returncode == 3, (proc.returncode, proc.stderr)
        assert "left clockprof's stub before it ran" in proc.stderr, proc.stderr
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
                       "-o", out, str(target.pid))
        assert proc.returncode == 0, proc.stderr
        assert not vdso_writable_and_executable(target.pid)
    finally:
        rc, said = target.quit()
    assert rc == 0 and said.strip() == "jumps 3", (rc, said)


def test_a_handler_that_leaves_by_siglongjmp_cannot_abandon_the_stub(ctx):
    """A SIGUSR1 comes while the stub runs, the vDSO writable and
    executable (a test hook makes the stub sleep there), and its handler
    leaves by siglongjmp(): the stub was abandoned, the vDSO stayed
    writable and executable for good, and clockprof waited its 5 s. The
    stub blocks every signal while it runs and puts the thread's mask
    back as its last act: the handler runs then, the stub's work done."""
    target = Target(ctx.target("longjmp_target"))
    try:
        settled(target.pid, running=0)
        out = os.path.join(ctx.tmp, "longjmp.json")
        tool = subprocess.Popen(
            [ctx.clockprof, "attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.2s",
             "-o", out, str(target.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=dict(os.environ, CLOCKPROF_TEST_STUB_PAUSE_MS="1500"))
        until = time.monotonic() + 60
        while not vdso_writable_and_executable(target.pid):
            assert time.monotonic() < until, "the stub never made the vDSO writable"
            time.sleep(0.01)
        os.kill(target.pid, signal.SIGUSR1)
        assert tool.wait(timeout=120) == 0, tool.stderr.read()
        assert not vdso_writable_and_executable(target.pid)
        target.p.stdin.write("clock\n")
        target.p.stdin.flush()
        assert target.p.stdout.readline().strip() == "ok"
    finally:
        rc, said = target.quit()
    assert rc == 0 and said.strip() == "jumps 1", (rc, said)


def attached_while_spinning(ctx, name, lacking, *args):
    """Target name's one spinning thread held by an attach of 0.2 s
    (args: its options), the target then ended (its stdin closed): the
    run. The target exits 77 where the host lacks what it needs
    (lacking: the test is skipped), and 0 when nothing it watches went
    wrong."""
    target = subprocess.Popen([ctx.target(name)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        if not target.stdout.readline().startswith("ready") and target.wait(timeout=30) == 77:
            raise Skip(lacking)
        settled(target.pid)
        out = os.path.join(ctx.tmp, f"{name}.json")
        proc = ctx.run("attach", "-q", *args, "-e", "none", "-d", "0.2s", "-o", out,
                       str(target.pid))
        assert proc.returncode == 0, proc.stderr
        target.stdin.close()
        said = target.stdout.read()
        assert target.wait(timeout=30) == 0, f"target said {said!r}"
        return ctx.load_json(out)
    finally:
        if target.poll() is None:
            target.kill()
            target.wait()


def test_a_thread_held_inside_an_rseq_critical_section_goes_to_its_abort(ctx):
    """A thread spinning inside a restartable sequence's critical section
    (rseq(2), glibc's area; a per-CPU allocator's fast path) is the one
    running, so the one held, at each of the three stops: the kernel
    sends a thread preempted there to the section's abort handler, and
    the stub must return there too. Returned into the section's middle,
    the kernel (seeing the thread in the stub, outside the section) only
    cleared the section, which then committed as if never interrupted:
    the target counts such a section as broken, and said 3."""
    run = attached_while_spinning(
        ctx, "rseq_target", "glibc registered no rseq area (glibc.pthread.rseq=0, or before 2.35)",
        "--mechanism", "patch")
    assert run["probe"]["stops"] == {"attach": 2, "detach": 1}


def test_a_thread_under_syscall_user_dispatch_is_sent_no_stub(ctx):
    """A thread under syscall user dispatch (PR_SET_SYSCALL_USER_DISPATCH,
    its selector reading BLOCK: Wine running a Windows program's code) is
    the one running, so the one held: a system call the stub made there
    was not made but reached the program's SIGSYS handler as its own
    (Wine's would run it as a Windows system call), and the stub's mmap
    failed with what the handler said. The patch is refused for it and
    uprobes count; the target takes no SIGSYS."""
    probe = attached_while_spinning(ctx, "sud_target",
                                    "no syscall user dispatch in this kernel (Linux 5.11)")["probe"]
    assert "PR_SET_SYSCALL_USER_DISPATCH" in (probe["fallback_reason"] or ""), probe


def locked_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmLck:"))


def test_the_table_is_not_locked_whole_in_a_process_that_locks_its_future_mappings(ctx):
    """A process under mlockall(MCL_FUTURE) has every mapping made in it
    populated whole and locked: the counter table (34.6 MiB of address
    space, a few hundred KiB written) took 34,824 KiB of locked memory.
    The stub maps it inaccessible, unlocks it, then makes it RW: what is
    locked grows by nothing, and every read is counted."""
    probe = subprocess.run([ctx.target("mlock_target")], input="", capture_output=True)
    if probe.returncode == 77:
        raise Skip("the target may not lock its memory (RLIMIT_MEMLOCK)")
    target = Target(ctx.target("mlock_target"))
    try:
        before = locked_kib(target.pid)
        out = os.path.join(ctx.tmp, "mlock.json")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-v", "--mechanism", "patch", "-e",
                                 "none", "-o", out, str(target.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in proc.stderr:
            if "probes live" in line:
                break
        grown = locked_kib(target.pid) - before
        target.go(1000)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert grown < 1024, f"locked memory grew by {grown} KiB"
        assert ctx.load_json(out)["clock_reads"]["total"] == 1000
    finally:
        rc, said = target.quit()
    assert rc == 0, f"target exited {rc}: {said}"
