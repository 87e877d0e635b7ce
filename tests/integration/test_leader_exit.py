"""A process whose main thread has exited (pthread_exit in main) while
others serve on: /proc/PID shows it a zombie, its maps read empty, and its
root, map_files and mem are gone, though the process lives. Its memory and
files are read through a live thread's /proc/PID/task/TID. Before, the
patch counted none of its reads under attach ("the target's memory was
gone before its vDSO counts could be read") and named a library it loaded
by addresses alone under run; the uprobes silently missed the reads the
library made through its own PLT stubs, which the kernel cannot probe for
such a process: that is said."""
import os
import signal
import subprocess

from common import code_changed, require_breakpoints
from test_follow_forks import pristine_outside_padding
from readiness import task_state, wait_attached, wait_for

BEFORE, AFTER = 100, 200


def argv(ctx):
    return [ctx.target("leader_exit_target"), ctx.target("libdl_clock.so"), BEFORE, AFTER]


def run_it(ctx, mechanism):
    out = os.path.join(ctx.tmp, f"run-{mechanism}.json")
    proc = ctx.run("run", "-q", "-e", "none", "--mechanism", mechanism, "-o", out, "--",
                   *argv(ctx), stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return ctx.load_json(out)


def attach_it(ctx, mechanism, after=AFTER, *opts, then=None, command=None):
    """Attached while the main thread lives; it exits once the window is
    open, and every read comes after. then(target), once clockprof is done,
    before the target is waited for (killed after). command: another
    target's, whose main thread exits at a line on stdin as this one's."""
    out = os.path.join(ctx.tmp, f"attach-{mechanism}.json")
    target = subprocess.Popen(command or [str(a) for a in argv(ctx)[:3] + [after]],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        wait_for(lambda: "/libc.so.6" in open(f"/proc/{target.pid}/maps").read(),
                 "the target's loader")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism",
                                 mechanism, "-o", out, *opts, str(target.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        target.stdin.write(b"\n")
        target.stdin.close()
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"exit {proc.returncode}: {stderr}"
        if then:
            then(target)
        else:
            assert target.wait(timeout=60) == 0, f"the target exited {target.returncode}"
    finally:
        if target.poll() is None:
            target.kill()
            target.wait(timeout=30)
    return ctx.load_json(out)


def check_exact(run, lib):
    """Every read counted, the library's named at its lines: construction."""
    assert run["clock_reads"]["by_entry"] == {"clock_gettime": BEFORE + 2 * AFTER,
                                             "gettimeofday": 2 * AFTER}, run["clock_reads"]
    in_lib = sorted((s["function"], s["line"], s["count"]) for s in run["call_sites"]
                    if s.get("module") == lib)
    assert in_lib == [("dl_clock_read", 14, AFTER), ("dl_clock_read", 15, AFTER),
                      ("dl_clock_read", 16, AFTER)], (run["call_sites"], run["warnings"])
    assert not [w for w in run["warnings"] if "no file" in w or "replaced on disk" in w
                or "cannot be read" in w or "was mapped after" in w], run["warnings"]


def leaderless_said(run):
    """The warning that uprobes held there may have gone (another
    program's removal on the same file takes them out)."""
    return [w for w in run["warnings"] if "main thread exited during the window" in w]


def test_the_patch_counts_a_process_whose_main_thread_exited(ctx):
    """Attached, the patch counts it alone, with no uprobe at all: nothing
    to say. Run follows its forks with a uprobe on syscall(), which is
    said."""
    lib = ctx.target("libdl_clock.so")
    for how in (run_it, attach_it):
        run = how(ctx, "patch")
        assert run["clock_reads"]["mechanism"] == "patch", run["clock_reads"]
        check_exact(run, lib)
        assert len(leaderless_said(run)) == (how is run_it), run["warnings"]


def test_the_patch_leaves_it_as_it_was(ctx):
    """A window that ends while it runs on: its code and its vDSO's entries
    are switched back through a live thread, as for any target."""
    def pristine(target):
        tid = next(int(t) for t in os.listdir(f"/proc/{target.pid}/task") if int(t) != target.pid)
        assert pristine_outside_padding(tid) == []
        assert code_changed(tid, jumps_too=True) == 0

    run = attach_it(ctx, "patch", 100000, "-d", "1", then=pristine)
    assert run["clock_reads"]["mechanism"] == "patch" and run["clock_reads"]["total"] > 0, run


def test_breakpoints_count_it_too(ctx):
    """The vDSO's entries are watched thread by thread: the library's
    reads are seen, and the library found by the looks the main thread's
    exit starts (the dynamic linker's uprobe may go: said)."""
    require_breakpoints(ctx)
    lib = ctx.target("libdl_clock.so")
    for how in (run_it, attach_it):
        check_exact(how(ctx, "breakpoint"), lib)


def test_uprobes_say_what_they_cannot_count_there(ctx):
    """The kernel limits a uprobe to a process by its main thread's memory:
    once that thread has exited, a file mapped later gets none, and those
    placed before go with another program's removal of one on the same
    file (another clockprof's, at any time). Both are said; the counts,
    which that removal decides, are not asserted."""
    lib = ctx.target("libdl_clock.so")
    for how in (run_it, attach_it):
        run = how(ctx, "uprobe")
        said = [w for w in run["warnings"] if "was mapped after" in w]
        assert len(said) == 1 and lib in said[0], run["warnings"]
        assert len(leaderless_said(run)) == 1, run["warnings"]


def live_tid(pid):
    return next(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)


def patched_then(ctx, name, then):
    """An attach with the patch while the main thread lives; once it has
    exited and the library is loaded, its vDSO patched, then(target, proc,
    tid, out) with clockprof still in its window."""
    from test_patch_leftovers import switched
    out = os.path.join(ctx.tmp, f"{name}.json")
    target = subprocess.Popen([str(a) for a in argv(ctx)[:3] + [100000]], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        wait_for(lambda: "/libc.so.6" in open(f"/proc/{target.pid}/maps").read(),
                 "the target's loader")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism",
                                 "patch", "-o", out, str(target.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        target.stdin.write(b"\n")
        target.stdin.close()
        assert target.stdout.readline() == b"loaded\n"
        tid = live_tid(target.pid)
        wait_for(lambda: switched(tid), "the vDSO to be patched")
        then(target, proc, tid, out)
    finally:
        if target.poll() is None:
            os.kill(target.pid, signal.SIGCONT)
            target.kill()
            target.wait(timeout=30)


def test_a_killed_clockprofs_restorer_switches_it_back(ctx):
    """clockprof SIGKILLed in a window on a process whose main thread has
    exited: its restorer switches the vDSO back through a live thread, as
    for any target."""
    from test_patch_leftovers import switched

    def killed(target, proc, tid, _):
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: not switched(tid), "the vDSO to be switched back", timeout=30)
        assert target.poll() is None, "the target died"

    patched_then(ctx, "killed", killed)


def test_stopped_at_the_end_it_is_left_to_the_restorer_and_said(ctx):
    """Stopped (kill -STOP) when the window ends, after its main thread
    exited: the switch back is refused (no thread runs the stub), and that
    is said and left to the restorer, which switches it back once it is
    continued, as for any target. The zombie main thread made both take the
    process for gone: nothing was said and it counted on for good."""
    from test_patch_leftovers import switched

    def stopped(target, proc, tid, out):
        os.kill(target.pid, signal.SIGSTOP)
        wait_for(lambda: task_state(f"/proc/{target.pid}/task/{tid}/stat") == "T",
                 "the target to stop")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        warnings = ctx.load_json(out)["warnings"]
        assert any(str(target.pid) in w and "switches it back once it runs again" in w
                   for w in warnings), warnings
        os.kill(target.pid, signal.SIGCONT)
        wait_for(lambda: not switched(tid), "the vDSO to be switched back", timeout=30)

    patched_then(ctx, "stopped", stopped)


def test_attach_after_the_main_thread_exited_says_so(ctx):
    """Its /proc/PID shows no executable then: refused, saying why, where
    it said the process had exited or was a zombie."""
    target = subprocess.Popen([str(a) for a in argv(ctx)[:3] + [100000]], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL)
    try:
        target.stdin.write(b"\n")
        target.stdin.close()
        wait_for(lambda: open(f"/proc/{target.pid}/stat").read().rsplit(")", 1)[1].split()[0]
                 == "Z", "the main thread to exit")
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "1", target.pid)
        assert proc.returncode == 3, (proc.returncode, proc.stderr)
        assert "main thread has exited" in proc.stderr and proc.stderr.count("\n") == 1, \
            proc.stderr
    finally:
        target.kill()
        target.wait(timeout=30)


def test_the_switch_back_holds_no_thread_a_stop_would_interrupt(ctx):
    """The thread a stub runs on is chosen among those blocked by whether
    a stop restarts their call unseen: a read on a socket with a timeout
    returns EINTR instead (signal(7)), told by its descriptor, which was
    read from /proc/PID/fd, empty once the main thread has exited. Its
    read failed with EINTR at the switch back, where the pipe's reader
    beside it restarts unseen."""
    def alive(target):
        assert target.poll() is None, (target.returncode, target.stdout.read())

    run = attach_it(ctx, "patch", AFTER, "-d", "1", then=alive,
                    command=[ctx.target("leader_exit_reader")])
    assert run["clock_reads"]["mechanism"] == "patch", run["clock_reads"]


def test_a_process_on_its_way_out_is_not_said_leaderless(ctx):
    """A process that ends while a thread of its waits in fsync: its main
    thread is a zombie while that one, killed, waits for the writeback
    (a tenth of a second for 256 MB here). The process is exiting, not serving
    on without its main thread: nothing is said. Before, a look in that
    while took it for leaderless and said its uprobes may have gone."""
    data = os.path.join(ctx.tmp, "fsync.dat")
    for mechanism in ("uprobe", "patch"):
        out = os.path.join(ctx.tmp, f"fsync-{mechanism}.json")
        proc = ctx.run("run", "-q", "-e", "none", "--mechanism", mechanism, "-o", out, "--",
                       ctx.target("exit_fsync_target"), data, 256, stdin=subprocess.DEVNULL)
        os.unlink(data)
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        assert not leaderless_said(run), (mechanism, run["warnings"])
