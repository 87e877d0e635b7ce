"""--mechanism auto: the vDSO patch where it can be used, else uprobes with
the patch's own reason, decided before anything is counted; --stacks picks
uprobes at once. Each fallback case is also asked of --mechanism patch by
name, which stays strict (exit 3, the reason, no run written). The target
is left as it was (its vDSO's entries read as the kernel's own) and counts
right. `ab` picks the mechanism once for all its runs.

Every test names --mechanism auto itself: they hold whatever the default
is (CP_MECHANISM_DEFAULT)."""
import glob
import os
import shutil
import signal
import subprocess
import tempfile

from common import Skip
from readiness import task_state, wait_attached, wait_for
from test_vdso_patch import Target

ROUNDS = 100
THREADS = 2
# patch_target's round as uprobes see it: clock_gettime MONOTONIC, REALTIME,
# PROCESS_CPUTIME_ID and time; its gettimeofday goes through a dlsym
# pointer, which passes no PLT stub (the patch counts it, uprobes cannot).
UPROBE_READS_PER_ROUND = 4


def PatchTarget(ctx, env=None, under=()):
    """tests/targets/patch_target, driven over its stdin, perhaps under a
    tracer (argv before the target's own)."""
    return Target(ctx.target("patch_target"), THREADS, env=env, under=under)


def maps_of(pid):
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


def vdso_range(pid):
    for line in maps_of(pid).splitlines():
        if line.rstrip().endswith("[vdso]"):
            lo, hi = line.split()[0].split("-")
            return int(lo, 16), int(hi, 16)
    raise AssertionError(f"process {pid} has no [vdso]")


def read_vdso(pid):
    lo, hi = vdso_range(pid)
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(lo)
        return mem.read(hi - lo)


def entry_offsets(image):
    """The clock entries' offsets in a vDSO image, from its own symbols."""
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(image)
        f.flush()
        out = subprocess.run(["readelf", "-W", "--dyn-syms", f.name], capture_output=True,
                             text=True, check=True).stdout
    offsets = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 8 and words[7].split("@")[0] in (
                "__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time"):
            offsets[words[7].split("@")[0]] = int(words[1], 16)
    assert len(offsets) == 3, out
    return offsets


def assert_entries_pristine(pid):
    """The target's clock entries read as this kernel's own vDSO (this
    process's, never patched): no jump left at any of them."""
    own, theirs = read_vdso(os.getpid()), read_vdso(pid)
    assert len(own) == len(theirs)
    for name, off in entry_offsets(own).items():
        assert theirs[off:off + 16] == own[off:off + 16], f"{name} of process {pid} was changed"


def attach(ctx, pid, mechanism, out):
    """Starts clockprof attach; returns it once counting (or its exit)."""
    proc = subprocess.Popen([ctx.clockprof, "attach", "--mechanism", mechanism, "-e", "none",
                             "-o", out, str(pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc


def counted_by_fallback(ctx, target, reason_has):
    """attach --mechanism auto to target, ROUNDS rounds read, ended by
    SIGINT: counted by uprobes exactly, with the patch's reason said in
    run.json and the summary."""
    out = os.path.join(ctx.tmp, "auto.json")
    proc = attach(ctx, target.pid, "auto", out)
    wait_attached(proc)
    target.go(ROUNDS)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, f"exit {proc.returncode}: {stderr}"
    run = ctx.load_json(out)
    probe = run["probe"]
    assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]
    assert probe["requested_mechanism"] == "auto", probe
    assert reason_has in (probe["fallback_reason"] or ""), probe
    assert run["clock_reads"]["total"] == UPROBE_READS_PER_ROUND * ROUNDS * THREADS, \
        run["clock_reads"]
    assert "counted by uprobe (asked: auto); the patch was not used: " + \
        probe["fallback_reason"] in stdout, stdout
    assert_entries_pristine(target.pid)


def refused_by_name(ctx, pid, reason_has):
    """--mechanism patch by name: exit 3, the reason, no run written."""
    out = os.path.join(ctx.tmp, "patch.json")
    proc = ctx.run("attach", "-q", "--mechanism", "patch", "-d", "0.2", "-e", "none",
                   "-o", out, pid)
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert reason_has in proc.stderr, proc.stderr
    assert not os.path.exists(out)


def test_auto_falls_back_under_a_seccomp_filter_that_kills_on_mmap(ctx):
    """The stub's mmap would kill the target: auto counts with uprobes,
    the target lives on, reads right and has its vDSO as it was."""
    target = PatchTarget(ctx, env={"PATCH_TARGET_SECCOMP": "kill-mmap"})
    try:
        counted_by_fallback(ctx, target, "seccomp filter")
        refused_by_name(ctx, target.pid, "seccomp filter")
        assert_entries_pristine(target.pid)
        target.go(10)
    finally:
        rc, out = target.quit()
    assert rc == 0 and "bad 0" in out, f"target exited {rc}: {out}"


def own_seccomp_filters():
    """The filters this process has (and a target it starts inherits)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Seccomp_filters:"):
                return int(line.split()[1])
    return 0


def test_auto_falls_back_under_a_kill_on_mmap_filter_past_many_others(ctx):
    """70 filters that allow everything, a kill-on-mmap one installed
    last: every filter is read and run, not the oldest 64 (the newest,
    skipped, killed the target with SIGSYS in the stub's mmap). The
    refusal names the filter as a user counts them; auto counts with
    uprobes and the target lives on, reading right."""
    stacked = 70
    newest = f"the newest of its {stacked + 1 + own_seccomp_filters()} seccomp filters"
    target = PatchTarget(ctx, env={"PATCH_TARGET_SECCOMP": "kill-mmap",
                                   "PATCH_TARGET_SECCOMP_STACK": str(stacked)})
    try:
        refused_by_name(ctx, target.pid, newest)
        counted_by_fallback(ctx, target, newest)
        target.go(10)
    finally:
        rc, out = target.quit()
    assert rc == 0 and "bad 0" in out, f"target exited {rc}: {out}"


def attached_by_fallback(ctx, pid, reason_has):
    """attach --mechanism auto for 0.3 s to a target that cannot run now:
    counted by uprobes, the patch's reason said."""
    out = os.path.join(ctx.tmp, "auto.json")
    proc = ctx.run("attach", "-q", "--mechanism", "auto", "-d", "0.3", "-e", "none", "-o", out, pid)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    run = ctx.load_json(out)
    assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]
    assert reason_has in (run["probe"]["fallback_reason"] or ""), run["probe"]


def anon_maps(pid):
    return sum(1 for line in maps_of(pid).splitlines() if len(line.split()) == 5)


def test_a_stopped_target_is_refused_and_left_as_it_was(ctx):
    """A target stopped by SIGSTOP runs nothing until a SIGCONT: a thread
    sent through the stub then would run it with clockprof gone (and
    beside a later attach's stub: the target died of SIGSEGV). The patch is
    refused at once, saying the target is stopped (it was held, blamed on
    memory-deny-write-execute after the stub's timeout, and its stub ran
    at SIGCONT: maps 26 -> 31); auto counts with uprobes; continued, the
    target has its mappings and vDSO as they were, and reads right."""
    target = PatchTarget(ctx)
    try:
        maps = anon_maps(target.pid)
        os.kill(target.pid, signal.SIGSTOP)
        wait_for(lambda: task_state(f"/proc/{target.pid}/stat") == "T", "the target to stop")
        refused_by_name(ctx, target.pid, "is stopped")
        attached_by_fallback(ctx, target.pid, "is stopped")
        os.kill(target.pid, signal.SIGCONT)
        target.go(10)
        assert anon_maps(target.pid) == maps, "code or a table was left in the stopped target"
        assert_entries_pristine(target.pid)
    finally:
        os.kill(target.pid, signal.SIGCONT)
        rc, out = target.quit()
    assert rc == 0 and "bad 0" in out, f"target exited {rc}: {out}"


class Freezer:
    """A cgroup of its own for one process, frozen and thawed: cgroup v2's
    cgroup.freeze where cgroup2 is mounted, else v1's freezer."""

    def __init__(self, pid):
        self.dir = None
        for mount, knob, frozen, thawed, state in self.kinds():
            path = os.path.join(mount, f"clockprof-test-{os.getpid()}")
            try:
                os.mkdir(path)
            except OSError:
                continue
            if os.path.exists(os.path.join(path, knob)):
                self.dir, self.knob, self.frozen, self.thawed, self.state = \
                    path, knob, frozen, thawed, state
                with open(os.path.join(path, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
                return
            os.rmdir(path)
        raise Skip("no cgroup freezer to be had here (cgroup v2 or v1's freezer, writable)")

    @staticmethod
    def kinds():
        with open("/proc/self/mounts") as f:
            mounts = [line.split() for line in f]
        for m in mounts:
            if m[2] == "cgroup2":
                yield m[1], "cgroup.freeze", "1", "0", ("cgroup.events", "frozen 1")
        for m in mounts:
            if m[2] == "cgroup" and "freezer" in m[3].split(","):
                yield m[1], "freezer.state", "FROZEN", "THAWED", ("freezer.state", "FROZEN")

    def _set(self, value):
        with open(os.path.join(self.dir, self.knob), "w") as f:
            f.write(value)

    def freeze(self):
        self._set(self.frozen)
        name, line = self.state
        wait_for(lambda: line in open(os.path.join(self.dir, name)).read(), "the cgroup to freeze")

    def thaw(self):
        self._set(self.thawed)

    def remove(self):
        """Once its process has exited."""
        wait_for(lambda: not open(os.path.join(self.dir, "cgroup.procs")).read().strip(),
                 "the frozen cgroup to empty")
        os.rmdir(self.dir)


def test_a_frozen_target_is_refused_and_left_as_it_was(ctx):
    """A target in a frozen cgroup (docker pause, systemd's freeze) runs
    nothing until it is thawed, though its threads read S, not T: a
    thread sent through the stub would run it at the thaw, clockprof gone.
    Refused at once, as a stopped target is (it was held, sent, and blamed
    on memory-deny-write-execute after the stub's timeout); thawed, the
    target has its mappings and vDSO as they were, and reads right."""
    target = PatchTarget(ctx)
    freezer = None
    try:
        freezer = Freezer(target.pid)
        maps = anon_maps(target.pid)
        freezer.freeze()
        refused_by_name(ctx, target.pid, "is stopped")
        attached_by_fallback(ctx, target.pid, "cgroup frozen")
        freezer.thaw()
        target.go(10)
        assert anon_maps(target.pid) == maps, "code or a table was left in the frozen target"
        assert_entries_pristine(target.pid)
    finally:
        if freezer and freezer.dir:
            freezer.thaw()
        rc, out = target.quit()
        if freezer and freezer.dir:
            freezer.remove()
    assert rc == 0 and "bad 0" in out, f"target exited {rc}: {out}"


def test_a_target_stopped_before_its_stub_ran_is_not_switched_after(ctx):
    """The thread sent through the stub that switches the sites is stopped
    before the stub's first instruction (here its process stops itself in
    the handler of a signal a test hook sends as the thread is held; a
    cgroup frozen 15 ms into a plain attach did the same): the patch is
    refused after the stub's wait and auto counts with uprobes. Continued,
    the stub ran on and switched every entry to a table nobody read or
    would switch back, the run having said the patch was not used. The
    sites are taken out of the request given up: continued, the target's
    entries are the kernel's own and it reads right."""
    target = PatchTarget(ctx, env={"PATCH_TARGET_STOP_AT_USR1": "2"})  # 1: the table's
    try:
        out = os.path.join(ctx.tmp, "auto.json")
        proc = ctx.run("attach", "-q", "--mechanism", "auto", "-e", "none", "-d", "0.3",
                       "-o", out, str(target.pid),
                       env=dict(os.environ, CLOCKPROF_TEST_SIGNAL_HELD=str(target.pid)))
        assert proc.returncode == 0, (proc.returncode, proc.stderr)
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]
        assert "is stopped" in (run["probe"]["fallback_reason"] or ""), run["probe"]
        os.kill(target.pid, signal.SIGCONT)
        target.go(10)  # the stub has run: its thread is back where it was
        assert_entries_pristine(target.pid)
    finally:
        os.kill(target.pid, signal.SIGCONT)
        rc, said = target.quit()
    assert rc == 0 and "bad 0" in said, f"target exited {rc}: {said}"


def test_a_32_bit_program_is_refused_by_every_mechanism(ctx):
    """A 32-bit (ia32) program: the patch's code is x86-64 and refused it,
    and auto's uprobes counted each of its vDSO reads twice and none of
    its clock syscalls (run failed before that, "cannot read the entry
    point", its auxv read as 64-bit words). Every mechanism refuses it
    now, saying why, before anything runs in it; the program lives on."""
    path = os.path.join(ctx.targets, "clock_loop_m32")
    if not os.path.exists(path):
        raise Skip("no 32-bit target: the compiler cannot build -m32 (gcc-multilib)")
    for mechanism in ("auto", "uprobe", "patch"):
        proc = ctx.run("run", "-q", "--mechanism", mechanism, "-e", "none", "-o",
                       os.path.join(ctx.tmp, "m32.json"), "--", path, "vdso", "1000")
        assert proc.returncode == 3, (mechanism, proc.returncode, proc.stderr)
        assert "is a 32-bit program" in proc.stderr, proc.stderr
    target = subprocess.Popen([path, "vdso", "100000000"], stdout=subprocess.PIPE, text=True)
    try:
        # Its libc is mapped by its loader, after the kernel mapped the
        # vDSO: the maps read at once can catch exec half done. A kernel
        # with abi.vsyscall32=0 gives a 32-bit program no vDSO at all.
        wait_for(lambda: "libc" in maps_of(target.pid), "the target's loader")
        image = read_vdso(target.pid) if "[vdso]" in maps_of(target.pid) else None
        proc = ctx.run("attach", "-q", "-e", "none", "-d", "0.2", "-o",
                       os.path.join(ctx.tmp, "m32.json"), str(target.pid))
        assert proc.returncode == 3 and "is a 32-bit program" in proc.stderr, proc.stderr
        assert target.poll() is None, "the target died"
        assert image is None or read_vdso(target.pid) == image, "its vDSO was written"
        anonymous = [line.split() for line in maps_of(target.pid).splitlines()]
        assert not [f for f in anonymous if len(f) == 5 and "x" in f[1]], "a table's code pages"
    finally:
        target.kill()
        target.wait()


def test_a_filter_installed_in_the_window_that_kills_mmap_allows_the_switch_back(ctx):
    """A seccomp filter that kills on mmap, installed mid-window (a
    sandbox set up late): the switch back maps nothing (the table is
    there), so the filter allows it. It was weighed as a stub that maps
    the table, refused ("would not allow syscall 9"), and the entries
    stayed switched, counting where nobody read, until the process
    exited. The window's patch counted its rounds exactly."""
    target = PatchTarget(ctx)
    try:
        out = os.path.join(ctx.tmp, "auto.json")
        proc = attach(ctx, target.pid, "auto", out)
        wait_attached(proc)
        target.go(ROUNDS)
        target.p.stdin.write("seccomp kill-mmap\n")
        target.p.stdin.flush()
        assert target.p.stdout.readline().strip() == "seccomp"
        proc.send_signal(signal.SIGINT)
        _, said = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"exit {proc.returncode}: {said}"
        run = ctx.load_json(out)
        assert run["clock_reads"]["mechanism"] == "patch", run["clock_reads"]
        assert run["clock_reads"]["total"] == 5 * ROUNDS * THREADS, run["clock_reads"]
        assert not [w for w in run["warnings"] if "seccomp" in w], run["warnings"]
        assert_entries_pristine(target.pid)
        target.go(10)
    finally:
        rc, said = target.quit()
    assert rc == 0 and "bad 0" in said, f"target exited {rc}: {said}"


def test_a_threads_own_seccomp_filter_is_the_one_checked(ctx):
    """Filters are per thread: workers that put a kill-on-mmap filter on
    themselves alone (no TSYNC), busy in user space, are the threads the
    stub would run on, and the process's status (its leader's) shows no
    filter. The held thread's own filters are checked: the patch is
    refused naming one, auto counts with uprobes, and the target lives on
    (it died of SIGSYS inside the stub)."""
    target = Target(ctx.target("patch_target"), THREADS, "check",
                    env={"PATCH_TARGET_THREAD_SECCOMP": "kill-mmap"})
    try:
        refused_by_name(ctx, target.pid, "seccomp filter")
        attached_by_fallback(ctx, target.pid, "seccomp filter")
        assert_entries_pristine(target.pid)
    finally:
        rc, out = target.quit()
    assert rc == 0 and "bad 0" in out, f"target exited {rc}: {out}"


def test_a_container_filter_allows_the_stub_with_a_boundary(ctx):
    """A container runtime's filter (a deny-list here) allows every call of
    the stub, also the two more of a redirected boundary: the patch is
    used and counts each request exactly (more than 8 calls were read as
    "a seccomp filter that cannot be read", and refused)."""
    target = PatchTarget(ctx, env={"PATCH_TARGET_SECCOMP": "container"})
    try:
        out = os.path.join(ctx.tmp, "container.json")
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "--mechanism", "patch", "-e", "none",
                                 "-r", "func:one_round", "-o", out, str(target.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_attached(proc)
        target.go(ROUNDS)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, (proc.returncode, stderr)
    finally:
        rc, text = target.quit()
    assert rc == 0 and "bad 0" in text, f"target exited {rc}: {text}"
    run = ctx.load_json(out)
    assert run["clock_reads"]["mechanism"] == "patch", run["clock_reads"]
    assert run["request"]["closed_in_target"], (run["request"], run["warnings"])
    # each thread's last round ends no request: it is followed by none
    assert run["per_request"]["histogram"] == [[5, THREADS * (ROUNDS - 1)]], run["per_request"]


def test_auto_falls_back_for_a_target_already_traced(ctx):
    """A target under strace cannot be held: uprobes count it."""
    if not shutil.which("strace"):
        raise Skip("strace is not installed")
    target = PatchTarget(ctx, under=["strace", "-f", "-qq", "-o", os.devnull])
    try:
        counted_by_fallback(ctx, target, "already under a debugger (traced by process")
        refused_by_name(ctx, target.pid, "already under a debugger")
    finally:
        rc, out = target.quit()
    assert rc == 0 and "bad 0" in out, f"target exited {rc}: {out}"


def run_demo(ctx, *opts, under=(), out="run.json"):
    """clockprof run on the demo target (7 reads per request)."""
    path = os.path.join(ctx.tmp, out)
    proc = subprocess.run([*under, ctx.clockprof, "run", "-d", "0.5", "-r", "func:handle_request",
                           "-e", "none", "-o", path, *opts, "--",
                           ctx.target("callsites_target")],
                          capture_output=True, text=True, timeout=120)
    return proc, path


def test_auto_counts_with_the_patch_where_it_can(ctx):
    proc, path = run_demo(ctx, "--mechanism", "auto")
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(path)
    assert run["clock_reads"]["mechanism"] == "patch", run["clock_reads"]
    assert run["probe"]["requested_mechanism"] == "auto"
    assert run["probe"]["fallback_reason"] is None
    assert run["clock_reads"]["per_op"] == 7.0, run["clock_reads"]
    assert "pause_ms" in run["probe"], run["probe"]
    assert "counted by patch (asked: auto)" in proc.stdout, proc.stdout
    assert "the patch was not used" not in proc.stdout


def test_auto_picks_uprobes_for_stacks(ctx):
    """Whole stacks are walked by the kernel at each read: auto says so
    and counts with uprobes, stacks and all; patch by name is a usage
    error, as before."""
    proc, path = run_demo(ctx, "--mechanism", "auto", "--stacks")
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(path)
    assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]
    assert "--stacks" in run["probe"]["fallback_reason"], run["probe"]
    assert run["clock_reads"]["per_op"] == 7.0
    assert sum(s["count"] for s in run["stacks"]) == run["clock_reads"]["total"]
    assert "the patch was not used: --stacks needs the kernel" in proc.stdout, proc.stdout
    proc, path = run_demo(ctx, "--mechanism", "patch", "--stacks", out="patch.json")
    assert proc.returncode == 2 and "--stacks" in proc.stderr, proc.stderr


def test_auto_falls_back_when_the_patch_fails_its_self_test(ctx):
    """clockprof itself under a seccomp filter (systemd's
    MemoryDenyWriteExecute, here tests/targets/seccomp_exec): the patch's
    self-test fails before the command is touched; auto counts it exactly
    with uprobes, patch by name exits 3."""
    under = [ctx.target("seccomp_exec")]
    proc, path = run_demo(ctx, "--mechanism", "auto", under=under)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(path)
    assert run["clock_reads"]["mechanism"] == "uprobe", run["clock_reads"]
    assert "self-test" in run["probe"]["fallback_reason"], run["probe"]
    assert run["clock_reads"]["per_op"] == 7.0, run["clock_reads"]
    proc, path = run_demo(ctx, "-q", "--mechanism", "patch", under=under, out="patch.json")
    assert proc.returncode == 3 and "self-test" in proc.stderr, (proc.returncode, proc.stderr)
    assert not os.path.exists(path)


def ab_runs(ctx, directory, under=()):
    proc = subprocess.run([*under, ctx.clockprof, "ab", "2", directory, "-q", "--mechanism", "auto",
                           "-d", "0.3", "-r", "func:handle_request", "-e", "none",
                           "--", ctx.target("callsites_target"),
                           "--", ctx.target("callsites_target")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = {os.path.basename(p): ctx.load_json(p)
            for p in glob.glob(os.path.join(directory, "*.json"))}
    assert sorted(runs) == ["base-1.json", "base-2.json", "head-1.json", "head-2.json"], runs
    return runs


def test_ab_picks_the_mechanism_once(ctx):
    """The first run's choice is asked of every later run by name: with
    the patch usable all four count with it; where the first run falls
    back, all four count with uprobes. compare takes either set, and
    refuses a base of one with a head of the other."""
    patched = os.path.join(ctx.tmp, "patched")
    runs = ab_runs(ctx, patched)
    assert {r["clock_reads"]["mechanism"] for r in runs.values()} == {"patch"}, runs
    assert runs["base-1.json"]["probe"]["requested_mechanism"] == "auto"
    assert {r["probe"]["requested_mechanism"] for n, r in runs.items()
            if n != "base-1.json"} == {"patch"}
    fell_back = os.path.join(ctx.tmp, "fell_back")
    runs = ab_runs(ctx, fell_back, under=[ctx.target("seccomp_exec")])
    assert {r["clock_reads"]["mechanism"] for r in runs.values()} == {"uprobe"}, runs
    assert "self-test" in runs["base-1.json"]["probe"]["fallback_reason"]
    assert {r["probe"]["requested_mechanism"] for n, r in runs.items()
            if n != "base-1.json"} == {"uprobe"}
    assert {r["clock_reads"]["per_op"] for r in runs.values()} == {7.0}
    for d in (patched, fell_back):
        proc = ctx.run("compare", "-q", "--base", *glob.glob(f"{d}/base-*.json"),
                       "--head", *glob.glob(f"{d}/head-*.json"))
        assert proc.returncode in (0, 1), proc.stderr
    proc = ctx.run("compare", "-q", "--base", *glob.glob(f"{fell_back}/base-*.json"),
                   "--head", *glob.glob(f"{patched}/head-*.json"))
    assert proc.returncode == 2 and "counted with uprobe" in proc.stderr, proc.stderr
