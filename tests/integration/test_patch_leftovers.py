"""What the vDSO patch leaves where nobody reads it (issue 43, item 9):
a SIGKILLed clockprof's sites are switched back by its restorer; when the
restorer dies too, the next attach switches them back and says so; the
forks a target makes in an attach window, not followed, are switched back
at detach. A process's vDSO is told original by its functions' bytes:
every clock function of it (its ELF symbols' extents) reads as this test's
own vDSO does; the patch's code sits outside them, in the unused end."""
import os
import signal
import struct
import subprocess
import sys
import time

from common import tree
from readiness import wait_attached, wait_for, wait_serving

# A Python clock loop: reads the clock (glibc's clock_gettime, the vDSO)
# between lines of stdin; "fork" makes a child that reads on and says its
# pid on stdout.
LOOP = r"""
import os, select, sys, time
print("ready", flush=True)
while True:
    time.monotonic(); time.time()
    if not select.select([sys.stdin], [], [], 0.002)[0]:
        continue
    line = sys.stdin.readline()
    if not line or line.strip() == "quit":
        break
    child = os.fork()
    if child == 0:
        while True:
            time.monotonic(); time.sleep(0.002)
    print("child", child, flush=True)
"""


def vdso_range(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if line.rstrip().endswith("[vdso]"):
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                return start, end
    raise AssertionError(f"process {pid} has no vDSO")


def vdso_image(pid):
    start, end = vdso_range(pid)
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(start)
        return f.read(end - start)


def function_extents(image):
    """(offset, size) of each function symbol in a vDSO image's .dynsym."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    base = min(struct.unpack_from("<IIQQQQQQ", image, 0x40 + i * 56)[3]
               for i in range(struct.unpack_from("<H", image, 0x38)[0])
               if struct.unpack_from("<I", image, 0x40 + i * 56)[0] == 1)
    out = []
    for sec in sections:
        if sec[1] != 11:  # SHT_DYNSYM
            continue
        for off in range(sec[4], sec[4] + sec[5], 24):
            info, = struct.unpack_from("<B", image, off + 4)
            value, size = struct.unpack_from("<QQ", image, off + 8)
            if info & 0xF == 2 and size:  # STT_FUNC
                out.append((value - base, size))
    assert out, "no function found in the vDSO"
    return out


PRISTINE = None


def switched(pid):
    """The vDSO functions of pid whose bytes differ from this process's
    (pristine) vDSO: [] when none is switched."""
    global PRISTINE
    if PRISTINE is None:
        PRISTINE = vdso_image("self")
    now = vdso_image(pid)
    return [hex(o) for o, n in function_extents(PRISTINE) if now[o:o + n] != PRISTINE[o:o + n]]


class Loop:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, "-c", LOOP], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().strip() == "ready"
        self.children = []

    def fork(self):
        self.p.stdin.write("fork\n")
        self.p.stdin.flush()
        words = self.p.stdout.readline().split()
        assert words[0] == "child", words
        self.children.append(int(words[1]))
        return self.children[-1]

    def close(self):
        for c in self.children:
            try:
                os.kill(c, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.p.poll() is None:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
        return self.p.wait(timeout=30)


def attach(ctx, pid, *args):
    out = os.path.join(ctx.tmp, "attach.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism", "patch",
                             "-o", out, *args, str(pid)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    wait_attached(proc)
    wait_for(lambda: switched(pid), f"process {pid}'s vDSO to be patched")
    return proc, out


def restorers_of(pid):
    """The processes whose parent is pid named cp-restorer."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        if comm == "cp-restorer" and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(d))
    return found


def test_a_killed_clockprofs_sites_are_switched_back_by_its_restorer(ctx):
    """clockprof SIGKILLed in an attach window on a clock loop: its
    restorer switches the loop's vDSO back (before: +6% a read for good)."""
    loop = Loop()
    try:
        proc, _ = attach(ctx, loop.p.pid)
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: not switched(loop.p.pid), "the loop's vDSO to be switched back", timeout=30)
        assert loop.p.poll() is None, "the loop died"
    finally:
        assert loop.close() == 0


def test_an_attach_after_a_leftover_switches_it_back_and_says_so(ctx):
    """clockprof and its restorer both SIGKILLed (a cgroup's kill): the
    sites stay switched; the next attach says a leftover was found, and
    its detach leaves the vDSO original."""
    loop = Loop()
    try:
        proc, _ = attach(ctx, loop.p.pid)
        for r in restorers_of(proc.pid):
            os.kill(r, signal.SIGKILL)
        proc.kill()
        proc.wait(timeout=30)
        time.sleep(0.5)  # what a restorer left alive would have done by now
        assert switched(loop.p.pid), "nothing was left to find"
        out = os.path.join(ctx.tmp, "again.json")
        r = ctx.run("attach", "-q", "-e", "none", "--mechanism", "patch", "-d", "0.3",
                    "-o", out, str(loop.p.pid))
        assert r.returncode == 0, r.stderr
        warnings = ctx.load_json(out)["warnings"]
        assert any("leftover" in w and "switched back" in w for w in warnings), warnings
        assert not switched(loop.p.pid), "the second attach left the vDSO switched"
    finally:
        assert loop.close() == 0


def test_an_attach_after_a_boundary_leftover_says_why_its_requests_trap(ctx):
    """A boundary closed in the target, left redirected by a clockprof
    killed with its restorer: the next attach plans its boundary against
    the redirected code, which it cannot close, and switches the leftover
    back only after its probes are placed, so each request traps. It said
    nothing of why (the boundary's reason was looked for again after the
    switch back, and found none); it says the reason it planned with."""
    target = subprocess.Popen([ctx.target("reads_target"), "clock_gettime", "3", "0", "3", "1"],
                              stdout=subprocess.DEVNULL)
    try:
        wait_serving(target, threads=3)
        proc, _ = attach(ctx, target.pid, "-r", "func:handle_request")
        for r in restorers_of(proc.pid):
            os.kill(r, signal.SIGKILL)
        proc.kill()
        proc.wait(timeout=30)
        out = os.path.join(ctx.tmp, "again.json")
        r = ctx.run("attach", "-q", "-e", "none", "--mechanism", "patch", "-d", "0.3",
                    "-r", "func:handle_request", "-o", out, str(target.pid))
        assert r.returncode == 0, r.stderr
        run = ctx.load_json(out)
        assert not run["request"]["closed_in_target"], run["request"]
        said = [w for w in run["warnings"] if "cannot be closed in the target" in w]
        assert said and "clockprof killed with its restorer" in said[0], run["warnings"]
        assert target.poll() is None, "the target died"
    finally:
        target.kill()
        target.wait(timeout=30)


def test_a_killed_anatomy_clockprofs_sites_are_switched_back_by_its_restorer(ctx):
    """--anatomy switches the entries toward the paths that log reads; the
    restorer, which plans the plain ones, still switches them back when
    clockprof is SIGKILLed (before: left switched for good)."""
    target = subprocess.Popen([ctx.target("anatomy_target"), "helper", "0"])
    try:
        proc, _ = attach(ctx, target.pid, "-r", "func:handle_request", "--anatomy")
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: not switched(target.pid), "the target's vDSO to be switched back",
                 timeout=30)
        assert target.poll() is None, "the target died"
    finally:
        target.kill()
        target.wait(timeout=30)


def test_a_leftover_of_the_other_variant_of_the_paths_is_switched_back(ctx):
    """--anatomy switches the entries toward the paths that log reads; a
    leftover of such an attach (clockprof and its restorer killed) is
    found and switched back by a plain attach, and a plain one's by an
    --anatomy attach: neither is taken for another tool's."""
    for first, second in ((["--anatomy"], []), ([], ["--anatomy"])):
        target = subprocess.Popen([ctx.target("anatomy_target"), "helper", "0"])
        try:
            proc, _ = attach(ctx, target.pid, "-r", "func:handle_request", *first)
            for r in restorers_of(proc.pid):
                os.kill(r, signal.SIGKILL)
            proc.kill()
            proc.wait(timeout=30)
            time.sleep(0.5)
            assert switched(target.pid), (first, "nothing was left to find")
            out = os.path.join(ctx.tmp, "again.json")
            r = ctx.run("attach", "-q", "-e", "none", "--mechanism", "patch", "-d", "0.3",
                        "-r", "func:handle_request", *second, "-o", out, str(target.pid))
            assert r.returncode == 0, (first, second, r.stderr)
            warnings = ctx.load_json(out)["warnings"]
            assert any("leftover" in w and "switched back" in w for w in warnings), warnings
            assert not switched(target.pid), (second, "the second attach left the vDSO switched")
            assert target.poll() is None, "the target died"
        finally:
            target.kill()
            target.wait(timeout=30)


def test_a_fork_made_in_an_attach_window_is_switched_back_at_detach(ctx):
    """The loop forks a child in the window; attach follows no fork: at
    detach, the child runs the original vDSO again, as its parent does."""
    loop = Loop()
    try:
        proc, out = attach(ctx, loop.p.pid)
        child = loop.fork()
        assert switched(child), "the fork did not carry the patch"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert not switched(loop.p.pid), "the target was left switched"
        assert not switched(child), f"the fork {child} was left switched: {switched(child)}"
    finally:
        assert loop.close() == 0


def restorers_for(pid):
    """The cp-restorer processes that watch pid (a PID:START argument)."""
    found = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0] == b"cp-restorer" and any(a.startswith(f"{pid}:".encode()) for a in argv):
            found.append(int(d))
    return found


def end_left_to_restorer(ctx, proc, out, pid, held):
    """Ends the attach proc while pid is held (stopped, traced): it exits
    0 saying its restorer switches pid back later, pid is still switched,
    and the restorer is left running."""
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    warnings = ctx.load_json(out)["warnings"]
    assert any(str(pid) in w and "switches it back once it runs again" in w
               for w in warnings), warnings
    assert switched(pid), f"switched back while {held}"
    assert restorers_for(pid), "no restorer was left to switch it back"


def test_a_target_stopped_at_the_end_is_switched_back_once_continued(ctx):
    """The target stopped (kill -STOP) when the window ends: its sites
    cannot be switched back then (no thread runs the stub), and run.json
    says so, where it used to say nothing. Its restorer, left running,
    switches them back once the target is continued, and ends: the target
    used to count on, unread, until a later attach."""
    loop = Loop()
    try:
        proc, out = attach(ctx, loop.p.pid)
        os.kill(loop.p.pid, signal.SIGSTOP)
        wait_for(lambda: "T" in open(f"/proc/{loop.p.pid}/stat").read().rsplit(")", 1)[1].split()[0],
                 "the loop to stop")
        end_left_to_restorer(ctx, proc, out, loop.p.pid, "stopped")
        os.kill(loop.p.pid, signal.SIGCONT)
        wait_for(lambda: not switched(loop.p.pid), "the loop's vDSO to be switched back", timeout=30)
        wait_for(lambda: not restorers_for(loop.p.pid), "its restorer to end", timeout=30)
    finally:
        os.kill(loop.p.pid, signal.SIGCONT)
        assert loop.close() == 0


# A tracer that seizes every thread of a process (PTRACE_SEIZE: it runs
# on, traced, as under strace) and holds them until its stdin closes.
TRACER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
pid = int(sys.argv[1])
for tid in os.listdir(f"/proc/{pid}/task"):
    if libc.ptrace(0x4206, int(tid), None, None) != 0:
        sys.exit(f"cannot seize {tid}: errno {ctypes.get_errno()}")
print("seized", flush=True)
sys.stdin.read()
"""


def test_a_target_traced_at_the_end_is_switched_back_once_let_go(ctx):
    """A tracer (strace -p, gdb) holds the target when the window ends:
    its sites cannot be switched back then (no thread of it can be held),
    and run.json says so. Its restorer, left running, switches them back
    once the tracer has let it go, and ends: the target used to count on,
    unread, until a later attach."""
    loop = Loop()
    tracer = None
    try:
        proc, out = attach(ctx, loop.p.pid)
        tracer = subprocess.Popen([sys.executable, "-c", TRACER, str(loop.p.pid)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert tracer.stdout.readline().strip() == "seized", "the tracer did not seize the loop"
        end_left_to_restorer(ctx, proc, out, loop.p.pid, "traced")
        time.sleep(12)  # past the restorer's retries for a process that runs
        assert restorers_for(loop.p.pid), "the restorer gave up while the tracer held it"
        tracer.stdin.close()
        tracer.wait(timeout=30)
        wait_for(lambda: not switched(loop.p.pid), "the loop's vDSO to be switched back", timeout=30)
        wait_for(lambda: not restorers_for(loop.p.pid), "its restorer to end", timeout=30)
    finally:
        if tracer and tracer.poll() is None:
            tracer.kill()
            tracer.wait()
        assert loop.close() == 0


def switched_unless_gone(pid):
    """switched(pid), or [] once pid has exited: the target lets the
    children born outside the window go, and one may exit as it is
    looked at."""
    try:
        return switched(pid)
    except OSError:
        return []


def vdso_perms(pid):
    try:
        with open(f"/proc/{pid}/maps") as f:
            return next((line.split()[1] for line in f if "[vdso]" in line), "")
    except OSError:
        return ""


def test_forks_of_a_killed_clockprofs_stub_window_are_made_right_by_its_restorer(ctx):
    """A clockprof is SIGKILLed while its stub holds the target's vDSO
    writable and executable (the tests' hook holds it there 1 s; the
    target forks every 50 ms): the forks made meanwhile inherit that copy,
    and clockprof is not there to send them through the stub again. Its
    restorer does: once it is done, no process of the tree keeps a
    writable and executable vDSO, and none is left switched (a fork kept
    one for life). clockprof is killed once such a fork exists."""
    target = subprocess.Popen([ctx.target("patch_target"), "1"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PATCH_TARGET_FORKS="window"))
    try:
        assert target.stdout.readline().startswith("ready")
        tool = subprocess.Popen(
            [ctx.clockprof, "attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "20",
             "-o", os.path.join(ctx.tmp, "killed.json"), str(target.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, CLOCKPROF_TEST_STUB_PAUSE_MS="1000"))
        wait_for(lambda: vdso_perms(target.pid) == "rwxp", "the stub's window", timeout=60)
        wait_for(lambda: any(vdso_perms(p) == "rwxp" for p in tree(target.pid)[1:]),
                 "a fork inside the stub's window", timeout=60)
        tool.kill()
        tool.wait()
        wait_for(lambda: not restorers_for(target.pid), "the restorer to end", timeout=120)
        procs = tree(target.pid)
        # only the children born with a writable vDSO stay (=window)
        assert len(procs) > 1, "no fork was made inside the stub's window"
        bad = {p: vdso_perms(p) for p in procs if "w" in vdso_perms(p)}
        assert not bad, f"writable vDSO left in {bad}"
        left = {p: f for p, f in ((p, switched_unless_gone(p)) for p in procs) if f}
        assert not left, f"left switched: {left}"
    finally:
        target.stdin.write("quit\n")
        target.stdin.flush()
        target.communicate(timeout=60)


def test_a_fork_of_the_stubs_window_that_stops_at_once_is_said(ctx):
    """The target forks every 50 ms while the stub holds its vDSO
    writable and executable (the tests' hook: 1 s), and each child born
    then stops itself at once, as a child a debugger forks does: no stub
    can be sent through it, its copy of the vDSO stays writable and
    executable. The run says so, naming one."""
    target = subprocess.Popen([ctx.target("patch_target"), "1"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PATCH_TARGET_FORKS="window-stopped"))
    try:
        assert target.stdout.readline().startswith("ready")
        out = os.path.join(ctx.tmp, "stopped.json")
        proc = ctx.run("attach", "-q", "--mechanism", "patch", "-e", "none", "-d", "0.5",
                       "-o", out, str(target.pid),
                       env=dict(os.environ, CLOCKPROF_TEST_STUB_PAUSE_MS="1000"))
        assert proc.returncode == 0, proc.stderr
        kept = [p for p in tree(target.pid) if "w" in vdso_perms(p)]
        assert kept, "no fork was made inside the stub's window"
        # said at attach, and again at detach with those since (the
        # window's closing words)
        said = [part for w in ctx.load_json(out)["warnings"] for part in w.split("; ")
                if "stays writable and executable" in part]
        assert said, ctx.load_json(out)["warnings"]
        named = int(said[-1].split("(process ")[1].split()[0].rstrip(")"))
        assert int(said[-1].split()[0]) == len(kept) and named in kept, (said, kept)
    finally:
        target.stdin.write("quit\n")
        target.stdin.flush()
        target.communicate(timeout=60)


def test_a_restorer_writes_nothing_into_a_member_that_was_never_patched(ctx):
    """attach -p TARGET,MEMBER with MEMBER stopped: the patch refuses it
    before writing anything, and counts the target. clockprof is then
    SIGKILLed: its restorer switches the target back, and must leave the
    member as it is: it waited for it to be continued, then wrote the
    patch's area into its vDSO to find nothing to switch back."""
    loop, member = Loop(), Loop()
    try:
        os.kill(member.p.pid, signal.SIGSTOP)
        wait_for(lambda: "T" in open(f"/proc/{member.p.pid}/stat").read().rsplit(")", 1)[1].split()[0],
                 "the member to stop")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism", "patch",
                                 "-o", os.path.join(ctx.tmp, "members.json"),
                                 "-p", f"{loop.p.pid},{member.p.pid}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        wait_for(lambda: switched(loop.p.pid), "the target's vDSO to be patched")
        assert vdso_image(member.p.pid) == vdso_image("self"), "the member was written at attach"
        proc.kill()
        proc.wait()
        wait_for(lambda: not switched(loop.p.pid), "the target's vDSO to be switched back", timeout=30)
        os.kill(member.p.pid, signal.SIGCONT)
        time.sleep(1)  # a restorer waiting for the member acts as it runs again
        assert vdso_image(member.p.pid) == vdso_image("self"), "the restorer wrote into the member"
        wait_for(lambda: not restorers_for(member.p.pid), "the restorer to end", timeout=30)
    finally:
        os.kill(member.p.pid, signal.SIGCONT)
        assert loop.close() == 0 and member.close() == 0


def test_a_stopped_process_does_not_hold_back_the_restorers_others(ctx):
    """attach -p A,B, then A stopped and clockprof SIGKILLed: its restorer
    switches B back at once, while it waits for A to be continued (it
    tried them one after the other, and waited on A first for as long as
    A stayed stopped); A is switched back once continued."""
    a, b = Loop(), Loop()
    try:
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism", "patch",
                                 "-o", os.path.join(ctx.tmp, "pair.json"),
                                 "-p", f"{a.p.pid},{b.p.pid}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        wait_for(lambda: switched(a.p.pid) and switched(b.p.pid), "both to be patched")
        os.kill(a.p.pid, signal.SIGSTOP)
        wait_for(lambda: "T" in open(f"/proc/{a.p.pid}/stat").read().rsplit(")", 1)[1].split()[0],
                 "A to stop")
        proc.kill()
        proc.wait()
        wait_for(lambda: not switched(b.p.pid), "B to be switched back", timeout=30)
        assert switched(a.p.pid), "A was switched back while stopped"
        os.kill(a.p.pid, signal.SIGCONT)
        wait_for(lambda: not switched(a.p.pid), "A to be switched back once continued", timeout=30)
    finally:
        os.kill(a.p.pid, signal.SIGCONT)
        assert a.close() == 0 and b.close() == 0


# A daemon's double fork: the program forks a child that forks the
# reader and exits at once, so the reader, reparented, is no longer in
# the program's tree; it reads the clock and says its pid. The program
# reads on until its stdin closes.
DOUBLE_FORK = r"""
import os, select, sys, time
child = os.fork()
if child == 0:
    if os.fork() == 0:
        print("reader", os.getpid(), flush=True)
        while True:
            time.monotonic(); time.sleep(0.002)
    os._exit(0)
os.waitpid(child, 0)
while not select.select([sys.stdin], [], [], 0.002)[0]:
    time.monotonic()
"""


def command_of(pid):
    """The child of clockprof pid that runs its command (not a helper)."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        kids = [int(k) for k in f.read().split()]
    for k in kids:
        with open(f"/proc/{k}/cmdline", "rb") as f:
            if not f.read().split(b"\0")[0].startswith(b"cp-"):
                return k
    raise AssertionError(f"clockprof {pid} runs no command: {kids}")


def test_a_process_that_left_the_tree_is_switched_back_by_the_restorer(ctx):
    """`run` of a program whose reader is a daemon's double fork: its
    parent exits, and it is reparented out of the program's tree while
    patched. clockprof SIGKILLed: its restorer switches the program back,
    and the reader too (a clean end did; the restorer looked among the
    program's descendants only, and the reader counted on, unread, for
    good)."""
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "--mechanism", "patch",
                             "-o", os.path.join(ctx.tmp, "double.json"), "--",
                             sys.executable, "-c", DOUBLE_FORK],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    reader = None
    try:
        words = proc.stdout.readline().split()
        assert words and words[0] == "reader", words
        reader = int(words[1])
        root = command_of(proc.pid)
        wait_for(lambda: switched(root) and switched(reader), "both to be patched")
        proc.kill()
        proc.wait()
        wait_for(lambda: not restorers_for(root), "the restorer to end", timeout=60)
        assert not switched(root), "the program was left switched"
        assert not switched(reader), f"the reader {reader} was left switched"
    finally:
        if reader:
            os.kill(reader, signal.SIGKILL)
        proc.kill()
        proc.stdin.close()
        proc.wait()
