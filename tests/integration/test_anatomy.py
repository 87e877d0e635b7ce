"""--anatomy (issue 45, items 1, 2, 5, 7), checked on the raw samples the
collection hands to the rule (CLOCKPROF_TEST_ANATOMY_DUMP, anatomy.h) and
on what the rule made of them (run.json's anatomy):
tests/targets/anatomy_target.c makes requests whose reads, and the
syscalls and sleeps between them, are known by construction. For each
way two reads can be separated, under `run` and `attach`: every sampled
request holds its reads in order, each named by its site and its caller
(reads through one helper apart), and between them exactly the syscalls
and switches the target made; the issue's rule applied to them here
names exactly the reads the construction makes reusable, and so does
run.json, whose measure clock_reads_reusable/op counts them. Nothing timed
is asserted but what construction bounds: back-to-back reads against a
gap of 20 us, and a start and a stop around ~200,000 dependent
multiplications (well over 20 us on any host)."""
import os
import signal
import subprocess
import time

from common import Skip, attach_until_exit
from readiness import wait_for

GAP_NS = 20000
ATTACHED_REQUESTS = "1000"  # a thread's, under attach (600 under run)
SHARE = 0.95
# x86-64 syscall numbers
READ, WRITE, FUTEX, NANOSLEEP, CLOCK_NANOSLEEP = 0, 1, 202, 35, 230
EPOLL_WAITS = {232, 281, 441}
READ_EV, SYSCALL_EV, SWITCH_EV = 0, 1, 2


def collect(ctx, how, mode, *extra):
    """The raw samples of a window over anatomy_target MODE, by `run` or
    `attach`; and the run.json."""
    dump = os.path.join(ctx.tmp, f"anatomy-{how}-{mode}.json")
    out = os.path.join(ctx.tmp, f"anatomy-{how}-{mode}-run.json")
    env = dict(os.environ, CLOCKPROF_TEST_ANATOMY_DUMP=dump)
    opts = ["-q", "-e", "none", "--mechanism", "patch", "--anatomy=40", "--reuse-gap", "20us",
            "-r", "func:handle_request", "-o", out, *extra]
    if how == "run":
        proc = ctx.run("run", *opts, "--", ctx.target("anatomy_target"), mode, 600, env=env)
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    else:
        # the logs are taken in bursts, a tenth of the time: a window of
        # 1 s on a loaded host sampled 6 whole requests
        attach_until_exit(ctx, [ctx.target("anatomy_target"), mode, ATTACHED_REQUESTS],
                          *opts, env=env)
    return ctx.load_json(dump), ctx.load_json(out)


def whole(samples):
    reqs = [r for r in samples["requests"] if not r["truncated"]]
    assert len(reqs) >= 10, (len(reqs), samples["requests_seen"])
    return reqs


def reads_of(req):
    return [e for e in req["events"] if e[1] == READ_EV]


def between(req, a, b):
    """The syscalls and switches between the request's a-th and b-th read."""
    idx = [i for i, e in enumerate(req["events"]) if e[1] == READ_EV]
    return req["events"][idx[a] + 1:idx[b]]


def reusable(samples, gap_ns=GAP_NS, share=SHARE):
    """The issue's rule on the raw samples: {(read, earlier read)} ids."""
    held, seen = {}, {}
    for req in whole(samples):
        last = {}   # clock -> (read id, time, position)
        for pos, ev in enumerate(req["events"]):
            if ev[1] != READ_EV:
                continue
            rid = ev[2]
            clock = samples["reads"][rid]["clock"]
            if clock in last:
                e_rid, e_t, e_pos = last[clock]
                gap = ev[0] - e_t
                blocked = any(x[1] == SYSCALL_EV or (x[1] == SWITCH_EV and x[2] == 1)
                              for x in req["events"][e_pos + 1:pos])
                key = (rid, e_rid)
                seen[key] = seen.get(key, 0) + 1
                held[key] = held.get(key, 0) + (not blocked and gap < gap_ns)
            last[clock] = (rid, ev[0], pos)
    return {k for k in seen if held[k] >= share * seen[k]}


def one_thread_reads(samples, n):
    """Every whole request n reads, on the target's thread."""
    for req in whole(samples):
        assert len(reads_of(req)) == n, req
        assert req["start_ns"] <= req["events"][0][0], req
        # the request begins with a read: only a preemption may come first
        first = [e for e in req["events"] if e[1] != SWITCH_EV or e[2] == 1][0]
        assert first[1] == READ_EV, req
        assert req["events"][-1][0] <= req["end_ns"], req


def check_helper(samples):
    """Three reads through now_ns(), from three lines: one site, three
    callers; the second and the third back to back."""
    one_thread_reads(samples, 3)
    reads = samples["reads"]
    assert len(reads) == 3, reads
    assert len({r["pc"] for r in reads}) == 1, reads
    assert len({r["caller"] for r in reads}) == 3 and all(r["caller"] for r in reads), reads
    order = {tuple(e[2] for e in reads_of(r)) for r in whole(samples)}
    assert len(order) == 1, order
    a, b, c = order.pop()
    assert reusable(samples) == {(b, a), (c, b)}, reusable(samples)


def check_separated(samples, want):
    """Two reads with the syscalls in want (one of each set) between them:
    never reusable."""
    one_thread_reads(samples, 2)
    for req in whole(samples):
        calls = [e[2] for e in between(req, 0, 1) if e[1] == SYSCALL_EV]
        for options in want:
            assert any(c in options for c in calls), (want, calls, req)
    assert reusable(samples) == set(), reusable(samples)


def check_slept(samples):
    """... and the thread slept between them in (nearly) every request."""
    slept = sum(any(e[1] == SWITCH_EV and e[2] == 1 for e in between(r, 0, 1))
                for r in whole(samples))
    assert slept >= 0.9 * len(whole(samples)), slept


def check_compute(samples):
    one_thread_reads(samples, 2)
    for req in whole(samples):
        assert not [e for e in between(req, 0, 1) if e[1] == SYSCALL_EV], req
        r = reads_of(req)
        assert r[1][0] - r[0][0] > GAP_NS, req
    assert reusable(samples) == set()


def check_realtime(samples):
    one_thread_reads(samples, 2)
    assert sorted(r["clock"] for r in samples["reads"]) == [0, 1], samples["reads"]
    assert reusable(samples) == set()


def check_threads(samples):
    """Two threads, two reads a request each: each thread's second read
    reuses its own first, whatever the other did meanwhile."""
    one_thread_reads(samples, 2)
    assert len({r["tid"] for r in whole(samples)}) == 2, [r["tid"] for r in whole(samples)]
    # each thread's stack found (its own mapping, the C library's): callers
    assert all(r["caller"] for r in samples["reads"]), samples["reads"]
    got = reusable(samples)
    assert len(got) >= 1 and all(len({a, b}) == 2 for a, b in got), got
    for req in whole(samples):
        assert not [e for e in between(req, 0, 1) if e[1] == SYSCALL_EV], req


CHECKS = {
    "helper": check_helper,
    "pipe": lambda s: check_separated(s, [{WRITE}, {READ}]),
    "nanosleep": lambda s: (check_separated(s, [{NANOSLEEP, CLOCK_NANOSLEEP}]),
                            check_slept(s)),
    "futex": lambda s: (check_separated(s, [{FUTEX}]), check_slept(s)),
    "epoll": lambda s: check_separated(s, [EPOLL_WAITS]),
    "compute": check_compute,
    "realtime": check_realtime,
    "threads": check_threads,
}


# The reads each mode's rule names reusable, as (read, the read it
# reuses) by their place in the request's one shape.
REUSABLE = {"helper": {(1, 0), (2, 1)}, "threads": {(1, 0)}}


def check_judged(run, mode):
    """run.json's anatomy (the rule's side, anatomy-rule) names exactly
    the reads the construction makes reusable, and no other."""
    a = run["anatomy"]
    assert a["judged"] and a["not_judged_because"] is None, a
    assert a["reuse_gap_ns"] == GAP_NS and a["sampled_requests"] >= 10, a
    assert a["shapes"][0]["share"] >= 0.95, a["shapes"]
    steps = [st["read"] for st in a["shapes"][0]["steps"]]
    got = {(steps.index(e["read"]), steps.index(e["reuses"])) for e in a["reusable"]}
    assert got == REUSABLE.get(mode, set()), (got, a["reusable"], steps)
    measure = run["measures"]["clock_reads_reusable/op"]
    assert measure["value"] == a["reusable_per_op"] == float(len(got)), (measure, a)


def _both(ctx, mode):
    for how in ("run", "attach"):
        samples, run = collect(ctx, how, mode)
        try:
            assert samples["gaps_exact"], samples
            assert samples["requests_seen"] == run["request"]["count"], (
                samples["requests_seen"], run["request"])
            CHECKS[mode](samples)
            check_judged(run, mode)
        except AssertionError as e:
            raise AssertionError(f"{how} {mode}: {e}") from e


def test_reads_through_one_helper(ctx):
    _both(ctx, "helper")


def test_reads_separated_by_a_pipe_read(ctx):
    _both(ctx, "pipe")


def test_reads_separated_by_nanosleep(ctx):
    _both(ctx, "nanosleep")


def test_reads_separated_by_a_futex_wait_that_sleeps(ctx):
    _both(ctx, "futex")


def test_reads_separated_by_epoll_wait(ctx):
    _both(ctx, "epoll")


def test_a_start_and_a_stop_around_computation(ctx):
    _both(ctx, "compute")


def test_realtime_after_monotonic(ctx):
    _both(ctx, "realtime")


def test_two_threads_interleaved(ctx):
    _both(ctx, "threads")


def test_uprobes_record_the_requests_but_judge_no_read(ctx):
    """The uprobe fallback records each request as it happens (every read
    a trap): its reads told apart by their callers, the syscalls between
    them; nothing is judged, and the run says why."""
    for mode, want in (("helper", None), ("pipe", [{WRITE}, {READ}])):
        dump = os.path.join(ctx.tmp, f"anatomy-uprobe-{mode}.json")
        out = os.path.join(ctx.tmp, f"anatomy-uprobe-{mode}-run.json")
        proc = ctx.run("run", "-q", "-e", "none", "--mechanism", "uprobe", "--anatomy",
                       "-r", "func:handle_request", "-o", out, "--",
                       ctx.target("anatomy_target"), mode, 600,
                       env=dict(os.environ, CLOCKPROF_TEST_ANATOMY_DUMP=dump))
        assert proc.returncode == 0, proc.stderr
        samples, run = ctx.load_json(dump), ctx.load_json(out)
        assert not samples["gaps_exact"], samples
        if want:
            check_separated(samples, want)
        else:
            one_thread_reads(samples, 3)
            assert len({r["caller"] for r in samples["reads"]}) == 3, samples["reads"]
        a = run["anatomy"]
        assert not a["judged"] and "traps" in a["not_judged_because"], a
        assert a["shapes"] and "clock_reads_reusable/op" not in run["measures"], a


def held_tracepoints(pid):
    """The tracepoints process pid holds raw_tracepoint links on (its fds'
    fdinfo)."""
    held = set()
    fds = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fds) if os.path.isdir(fds) else ():
        try:
            with open(os.path.join(fds, fd)) as f:
                info = dict(line.split(":\t", 1) for line in f.read().splitlines()
                            if ":\t" in line)
        except OSError:
            continue
        if info.get("link_type") == "raw_tracepoint" and "tp_name" in info:
            held.add(info["tp_name"])
    return held


def test_the_host_pays_for_syscalls_only_in_bursts(ctx):
    """The sys_enter and sched_switch links (which put every syscall of the
    host on the slow path) are held only during a burst, anatomy.bpf.c's
    under the patch and the session's under uprobes: with one burst of 2 s
    as the window opens and the next an hour later
    (CLOCKPROF_TEST_ANATOMY_BURST), clockprof holds them, then, its window
    still open (it ends only at SIGINT, sent after), holds neither; the
    samples came from the burst. Nothing timed: each state is waited for."""
    for mechanism in ("patch", "uprobe"):
        try:
            samples = _one_burst(ctx, mechanism)
            one_thread_reads(samples, 3)
            assert samples["gaps_exact"] == (mechanism == "patch"), samples
        except AssertionError as e:
            raise AssertionError(f"{mechanism}: {e}") from e


def _one_burst(ctx, mechanism):
    dump = os.path.join(ctx.tmp, f"anatomy-burst-{mechanism}.json")
    target = subprocess.Popen([ctx.target("anatomy_target"), "helper", "0"])
    env = dict(os.environ, CLOCKPROF_TEST_ANATOMY_DUMP=dump,
               CLOCKPROF_TEST_ANATOMY_BURST="2000/3600000")
    both = {"sys_enter", "sched_switch"}
    try:
        proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism",
                                 mechanism, "--anatomy=40", "-r", "func:handle_request",
                                 "-o", os.path.join(ctx.tmp, "anatomy-burst-run.json"),
                                 str(target.pid)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: both <= held_tracepoints(proc.pid) or proc.poll() is not None,
                     "the burst's links")
            assert proc.poll() is None, f"clockprof exited {proc.returncode}: {proc.stderr.read()}"
            wait_for(lambda: not both & held_tracepoints(proc.pid),
                     "the burst's links detached with the window open")
            assert proc.poll() is None, f"clockprof exited {proc.returncode}: {proc.stderr.read()}"
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        target.kill()
        target.wait(timeout=30)
    return ctx.load_json(dump)


def test_options_need_anatomy_and_a_boundary(ctx):
    for args, says in ((["--reuse-gap", "2us"], "need --anatomy"),
                       (["--anatomy"], "needs -r"),
                       (["--anatomy=0", "-r", "func:x"], "invalid --anatomy"),
                       (["--anatomy", "-r", "func:x", "--reuse-share", "1.5"],
                        "invalid --reuse-share")):
        proc = ctx.run("run", *args, "--", "true")
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)


def test_a_frame_pointer_into_a_guard_page_off_the_thread_s_stack(ctx):
    """Code written into a target never harms it: a sampled request's
    second read is made on a coroutine's stack (swapcontext) with rbp
    pointing into a guard page above it, below the stack the request's
    boundary had, and less than 64 KiB above the read's stack pointer
    (as code without frame pointers may leave it). The read of its
    callers follows no frame off the thread's own stack's mapping: the
    target lives, the read is counted, with no caller; the first read
    (on the thread's stack) keeps its caller. Failed before (SIGSEGV)."""
    samples, run = collect(ctx, "run", "coroutine")
    assert run["target"]["exit_status"] == {"code": 0}, run["target"]["exit_status"]
    count = run["request"]["count"]
    assert count == 599 and run["clock_reads"]["in_requests"] == 2 * count, (
        count, run["clock_reads"])
    one_thread_reads(samples, 2)
    reads = samples["reads"]
    by_pc = {}
    for r in reads:
        by_pc.setdefault(r["pc"], []).append(r)
    assert len(by_pc) == 2, reads
    on_coroutine = [rs for rs in by_pc.values() if all(not r["caller"] for r in rs)]
    assert len(on_coroutine) == 1, reads
    assert all(not r["caller2"] for r in on_coroutine[0]), reads
    assert any(r["caller"] for rs in by_pc.values() for r in rs), reads


def test_a_run_that_follows_forks_says_only_the_target_is_sampled(ctx):
    """The log is the target's own: processes run follows (here the
    target's children, fork_tree_target) are counted but not sampled, and
    the run says so rather than presenting the target's requests as the
    service's."""
    out = os.path.join(ctx.tmp, "anatomy-forks-run.json")
    proc = ctx.run("run", "-q", "-e", "none", "--mechanism", "patch", "--anatomy",
                   "-r", "func:serve_one", "-o", out, "--",
                   ctx.target("fork_tree_target"), 2, 50)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    assert len(run["processes"]) == 4, run["processes"]
    said = f"--anatomy: the sampled requests are process {run['target']['pid']}'s only; " \
           "the 3 other processes counted are not sampled"
    assert said in run["warnings"], run["warnings"]


def test_go_reads_on_goroutines_judged_by_construction(ctx):
    """Go: the patch counts a goroutine, not a thread, and so does the
    log. go_target's `now 2` calls time.Now twice a request, on one
    line (main.readNow): each reads CLOCK_REALTIME then CLOCK_MONOTONIC,
    with no syscall between. Exactly two reads could go: the second
    REALTIME read reusing the first, and the second MONOTONIC reusing
    the first (the other clock's read between them breaks nothing)."""
    if not os.path.exists(ctx.target("go_target")):
        raise Skip("no Go compiler on this machine (make test-deps installs golang-go)")
    out = os.path.join(ctx.tmp, "anatomy-go-run.json")
    proc = ctx.run("run", "-q", "-e", "none", "--mechanism", "patch", "--anatomy=40",
                   "--reuse-gap", "20us", "-r", "func:main.handleRequest", "-o", out, "--",
                   ctx.target("go_target"), "now", 2, 3000)
    assert proc.returncode == 0, proc.stderr
    anatomy = ctx.load_json(out)["anatomy"]
    assert anatomy["judged"] and anatomy["sampled_requests"] >= 10, anatomy
    reads = anatomy["reads"]
    got = sorted((reads[u["read"]]["clock"], reads[u["reuses"]]["clock"],
                  reads[u["read"]]["function"]) for u in anatomy["reusable"])
    assert got == [("CLOCK_MONOTONIC", "CLOCK_MONOTONIC", "main.readNow"),
                   ("CLOCK_REALTIME", "CLOCK_REALTIME", "main.readNow")], anatomy["reusable"]
    assert anatomy["shapes"][0]["share"] >= 0.5, anatomy["shapes"]
    assert [len(s["steps"]) for s in anatomy["shapes"][:1]] == [4], anatomy["shapes"]


def test_a_thread_that_made_rdtsc_fault_lives(ctx):
    """A thread may make rdtsc fault (PR_SET_TSC, PR_TSC_SIGSEGV); the
    program itself then takes none: it reads time() and the coarse clock,
    which the vDSO serves without it. The anatomy's code takes no rdtsc
    it does not: not at the boundary, not at those reads (logged with no
    stamp, never judged). Under run and attach the target lives and its
    reads are counted. Failed before (SIGSEGV, with or without reads)."""
    for mode in ("read", "none"):
        out = os.path.join(ctx.tmp, f"anatomy-notsc-{mode}.json")
        opts = ["-q", "-e", "none", "--mechanism", "patch", "--anatomy", "-r",
                "func:handle_request", "-o", out]
        proc = ctx.run("run", *opts, "--", ctx.target("notsc_target"), mode, 300)
        assert proc.returncode == 0, (mode, proc.returncode, proc.stderr)
        run = ctx.load_json(out)
        assert run["request"]["count"] == 299, run["request"]
        assert run["clock_reads"]["in_requests"] == (2 * 299 if mode == "read" else 0), (
            run["clock_reads"])
        if mode == "read":
            assert run["anatomy"]["untimed_requests"] > 0, run["anatomy"]
            assert run["anatomy"]["reusable"] == [], run["anatomy"]
    target = subprocess.Popen([ctx.target("notsc_target"), "read", "0"], stdout=subprocess.PIPE)
    try:
        assert target.stdout.readline() == b"ready\n"
        out = os.path.join(ctx.tmp, "anatomy-notsc-attach.json")
        proc = ctx.run("attach", "-q", "-e", "none", "--mechanism", "patch", "--anatomy", "-r",
                       "func:handle_request", "-d", "1", "-o", out, target.pid)
        assert proc.returncode == 0, proc.stderr
        assert target.poll() is None, f"the target died: {target.returncode}"
        time.sleep(0.2)  # past the detach: still alive
        assert target.poll() is None, f"the target died: {target.returncode}"
    finally:
        target.kill()
        target.wait(timeout=30)


def test_a_clocksource_the_vdso_reads_without_rdtsc_collects_nothing(ctx):
    """Where the host's clocksource is not read with rdtsc by the vDSO
    (hpet, acpi_pm: the vDSO falls back to the syscall), a read of any
    clock takes no rdtsc, so the log may take none: nothing is collected
    and the run says why (the clocksource named by a test hook)."""
    out = os.path.join(ctx.tmp, "anatomy-hpet.json")
    proc = ctx.run("run", "-q", "-e", "none", "--mechanism", "patch", "--anatomy", "-r",
                   "func:handle_request", "-o", out, "--", ctx.target("notsc_target"), "read",
                   100, env=dict(os.environ, CLOCKPROF_TEST_CLOCKSOURCE="hpet"))
    assert proc.returncode == 0, proc.stderr
    anatomy = ctx.load_json(out)["anatomy"]
    assert not anatomy["judged"] and anatomy["sampled_requests"] == 0, anatomy
    assert "clocksource (hpet) is not read with rdtsc" in anatomy["not_judged_because"], anatomy



def anonymous_code(pid):
    """The start of pid's anonymous executable mapping: in a C program,
    the vDSO patch's counter table's code pages alone."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 5 and fields[1].startswith("r-x"):
                return fields[0].split("-")[0]
    return None


def test_the_collection_never_writes_the_program_the_target_exec_ed(ctx):
    """Code written into a target never harms it: the command exec()s in
    an --anatomy window, clockprof follows it and patches the new program,
    which then maps its own memory where the old image's counter table
    lay (table_squatter). The collection's writes into that table (the
    window's close sets its sampling word) went by pid to the process's
    newest patch, the new program's, and landed in its memory ("written
    at +..."). They go to the program patched, and fail once it is gone."""
    env = dict(os.environ, ANATOMY_TARGET_EXEC=ctx.target("table_squatter"))
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "--mechanism", "patch",
                             "--anatomy=40", "-r", "func:handle_request",
                             "-o", os.path.join(ctx.tmp, "anatomy-exec-run.json"), "--",
                             ctx.target("anatomy_target"), "helper", "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "serving", proc.stderr.read()
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            target = int(f.read().split()[0])
        code = wait_for(lambda: anonymous_code(target), "the command's table")
        os.kill(target, signal.SIGUSR1)
        proc.stdin.write(code + "\n")
        proc.stdin.flush()
        said = proc.stdout.readline().strip()
        if said == "taken":  # the new program's own mappings lie there
            raise Skip("the new program maps the old table's place itself")
        assert said == "squatting", f"table_squatter said {said!r}: {proc.stderr.read()}"
        proc.send_signal(signal.SIGINT)  # the window ends, then the command
        said = proc.stdout.readline().strip()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
        assert said == "intact", f"clockprof wrote into the new program: {said}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
