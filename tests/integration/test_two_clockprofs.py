"""Two clockprofs on one target (lib/probe/mech/patch/patch_owner.h): the
first holds the vDSO patch, and its window stays exact while a second
comes and goes. The second is refused the patch naming the first by pid
(`--mechanism patch`: exit 3) or, under auto, counts with uprobes, exact
too. A first that was SIGKILLed (a zombie not yet reaped, or gone)
refuses nothing: the second patches and counts exactly."""
import os
import signal
import subprocess

from readiness import wait_attached, wait_for, wait_paced_requests, wait_serving

K = 2  # reads per request, by construction (reads_target clock_gettime K)


def start_target(ctx):
    """3 threads (2 late ones, at once), each serving requests of K reads
    until killed."""
    return subprocess.Popen([ctx.target("reads_target"), "clock_gettime", str(K), "0", "2", "0"])


def attach(ctx, name, pid, *opts):
    out = os.path.join(ctx.tmp, f"{name}.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-o", out, *map(str, opts), str(pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def finish(proc, timeout=120):
    stdout, stderr = proc.communicate(timeout=timeout)
    return proc.returncode, stderr


def exact(run, mechanism):
    """Every complete request read the clock exactly K times, counted by
    mechanism."""
    assert run["clock_reads"]["mechanism"] == mechanism, run["clock_reads"]["mechanism"]
    hist = run["per_request"]["histogram"]
    assert len(hist) == 1 and hist[0][0] == K, hist
    assert run["clock_reads"]["per_op"] == K, run["clock_reads"]["per_op"]
    assert run["request"]["count"] > 0


def second_comes_and_goes(ctx, first, target):
    """While first (a Popen of clockprof holding target's patch) counts:
    the patch asked by name is refused naming it, auto counts with
    uprobes, exactly; then target serves on. The auto run's requests."""
    wait_paced_requests(target, 20)
    named, _ = attach(ctx, "named", target.pid, "--mechanism", "patch", "-d", "1",
                      "-r", "func:handle_request")
    rc, err = finish(named)
    assert rc == 3, f"exit {rc}: {err}"
    assert f"another clockprof (process {first.pid})" in err, err
    second, out = attach(ctx, "second", target.pid, "-d", "1", "-r", "func:handle_request")
    rc, err = finish(second)
    assert rc == 0, f"exit {rc}: {err}"
    run = ctx.load_json(out)
    exact(run, "uprobe")
    assert f"process {first.pid}" in run["probe"]["fallback_reason"], run["probe"]
    wait_paced_requests(target, 50)  # the first counts on after the second is gone
    return run["request"]["count"]


def first_after(ctx, first, out, seconds):
    """The first ended by Ctrl-C: its window exact, holding the second's
    requests and 49 more at least (its main thread served 50 after it)."""
    first.send_signal(signal.SIGINT)
    rc, err = finish(first)
    assert rc == 0, f"exit {rc}: {err}"
    run = ctx.load_json(out)
    exact(run, "patch")
    assert run["request"]["count"] >= seconds + 49, (run["request"]["count"], seconds)


def test_an_attach_beside_an_attach_leaves_it_exact(ctx):
    target = start_target(ctx)
    try:
        wait_serving(target, threads=3)
        first, out = attach(ctx, "first", target.pid, "--mechanism", "patch",
                            "-r", "func:handle_request")
        wait_attached(first)
        seconds = second_comes_and_goes(ctx, first, target)
        first_after(ctx, first, out, seconds)
    finally:
        target.kill()
        target.wait()


class Child:
    """The command a `clockprof run` launched, as wait_* want it."""

    def __init__(self, run):
        self.run = run
        self.pid = wait_for(lambda: self._pid(), f"clockprof run (pid {run.pid}) to launch")

    def _pid(self):
        try:
            with open(f"/proc/{self.run.pid}/task/{self.run.pid}/children") as f:
                kids = f.read().split()
        except OSError:
            kids = []
        return int(kids[0]) if kids else None

    def poll(self):
        return None if os.path.exists(f"/proc/{self.pid}") else 0


def test_an_attach_on_a_run_command_leaves_the_run_exact(ctx):
    out = os.path.join(ctx.tmp, "first.json")
    first = subprocess.Popen([ctx.clockprof, "run", "-q", "-o", out, "--mechanism", "patch",
                              "-r", "func:handle_request", "--",
                              ctx.target("reads_target"), "clock_gettime", str(K), "0", "2", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        child = Child(first)
        wait_serving(child, threads=3)
        wait_attached(first)
        seconds = second_comes_and_goes(ctx, first, child)
        first_after(ctx, first, out, seconds)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def test_a_sigkilled_first_refuses_no_second(ctx):
    """The first's record stays in the target's vDSO with its pid: dead (a
    zombie, then reaped), it refuses nothing."""
    target = start_target(ctx)
    try:
        wait_serving(target, threads=3)
        first, _ = attach(ctx, "first", target.pid, "--mechanism", "patch",
                          "-r", "func:handle_request")
        wait_attached(first)
        first.send_signal(signal.SIGKILL)
        wait_for(lambda: open(f"/proc/{first.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
                 "the killed clockprof to be a zombie")
        for name in ("zombie", "reaped"):
            wait_paced_requests(target, 20)
            second, out = attach(ctx, name, target.pid, "--mechanism", "patch", "-d", "1",
                                 "-r", "func:handle_request")
            rc, err = finish(second)
            assert rc == 0, f"first {name}: exit {rc}: {err}"
            exact(ctx.load_json(out), "patch")
            first.wait()
    finally:
        target.kill()
        target.wait()


def refused_then_first_ends(ctx, first, pid, after=None):
    """A second clockprof asking pid's patch by name is refused it, naming
    first (a Popen of clockprof), which then ends by Ctrl-C, well; after:
    called once the second has ended."""
    named, _ = attach(ctx, "named", pid, "--mechanism", "patch", "-d", "1")
    rc, err = finish(named)
    if after:
        after()
    assert rc == 3, f"exit {rc}: {err}"
    assert f"another clockprof (process {first.pid})" in err, err
    first.send_signal(signal.SIGINT)
    rc, err = finish(first)
    assert rc == 0, f"exit {rc}: {err}"


def test_a_fork_in_the_firsts_window_is_refused_too(ctx):
    """run follows the processes its command forks, reading their tables
    from zero: one forked in its window carries the patch's header, and a
    second clockprof is refused it alike, naming the first."""
    out = os.path.join(ctx.tmp, "first.json")
    first = subprocess.Popen([ctx.clockprof, "run", "-q", "-o", out, "--mechanism", "patch",
                              "--", ctx.target("fork_tree_target"), "idle", "1", "5"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = {int(first.stdout.readline().split()[1]) for _ in range(2)}  # root and child
        child = (ready - {Child(first).pid}).pop()
        refused_then_first_ends(ctx, first, child,
                                lambda: os.kill(child, signal.SIGTERM))  # the root waits for it
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def test_a_member_followed_into_its_exec_stays_the_firsts(ctx):
    """A member given that exec()s is followed into its new image, which
    the first patches and names itself in; the patch of its old image,
    dropped then, must not clear that record. Without address
    randomization (setarch -R) the new vDSO lies where the old one did, so
    a write meant for the old image lands in the new one: the second
    clockprof must still be refused, naming the first."""
    target = start_target(ctx)
    program = f"{ctx.target('reads_target')} clock_gettime {K} 0 0 0"
    member = subprocess.Popen(["setarch", "-R", "sh", "-c", f"read x; exec {program}"],
                              stdin=subprocess.PIPE)
    first = None
    try:
        wait_serving(target, threads=3)
        wait_for(lambda: os.readlink(f"/proc/{member.pid}/exe").endswith("sh"),
                 "the member's shell to run")
        first, _ = attach(ctx, "first", f"{target.pid},{member.pid}", "--mechanism", "patch")
        wait_attached(first)
        member.stdin.write(b"x\n")
        member.stdin.flush()
        wait_for(lambda: os.readlink(f"/proc/{member.pid}/exe").endswith("reads_target"),
                 "the member to exec")
        wait_serving(member)
        wait_paced_requests(member, 5)
        refused_then_first_ends(ctx, first, member.pid)
    finally:
        for proc in (first, target, member):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
