"""What every start-up pays before the window opens, in figures that do not
depend on the host's speed: the instructions the kernel's verifier walks
through for each BPF program clockprof loads (bpf_prog_info's
verified_insns, in the fdinfo of clockprof's program fds). Its time is
most of an attach's cost: a program of 44,000 walked instructions held
every attach back 25-40 ms here, one of 5,000 about 5 ms. A plain loop
over a few hundred words, or a helper inlined where every state of its
caller reaches it, multiplies the count; bpf_loop callbacks and global
functions keep it down (probes/patch_reads.bpf.h, probes/read_hooks.bpf.h).
The budget, above the most any combination here walks (~24,000: a boundary
program with processes followed), leaves room for a kernel whose verifier
walks more; every combination of mechanism, boundary and processes is
held to it."""
import os
import subprocess

from common import fd_infos
from readiness import wait_attached, wait_serving

BUDGET = 30000


def verified_insns(pid):
    """{prog_id: verified instructions} of the programs process pid holds."""
    return {int(i["prog_id"]): int(i["verified_insns"]) for i in fd_infos(pid)
            if "prog_id" in i and "verified_insns" in i}


def programs_walked(ctx, argv):
    """The verifier's walk of each program a clockprof command (argv, run
    with a window long enough to be looked at) loaded."""
    proc = subprocess.Popen([ctx.clockprof, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_attached(proc)
        walked = verified_insns(proc.pid)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, f"{' '.join(argv)}: exit {proc.returncode}: {err}"
    assert walked, f"{' '.join(argv)}: no program's verified_insns in its fdinfo"
    return walked


def over_budget(walked):
    return sorted(n for n in walked.values() if n > BUDGET)


BOUNDARIES = ([], ["-r", "func:handle_request"], ["-r", "syscall:nanosleep"])


def assert_cheap(ctx, argv):
    walked = programs_walked(ctx, argv)
    assert not over_budget(walked), (
        f"{' '.join(argv)}: programs the verifier walked more than {BUDGET} instructions "
        f"of: {over_budget(walked)} (all: {sorted(walked.values())})")
    return walked


def test_each_program_is_cheap_to_verify_at_attach(ctx):
    out = os.path.join(ctx.tmp, "run.json")
    targets = [subprocess.Popen([ctx.target("reads_target"), "clock_gettime", "2", "0", "0"])
               for _ in range(2)]
    try:
        for t in targets:
            wait_serving(t)
        pid, both = str(targets[0].pid), f"{targets[0].pid},{targets[1].pid}"
        for mechanism, who in (("uprobe", [pid]), ("uprobe", ["--stacks", pid]),
                               ("patch", [pid]), ("patch", ["--tree", pid]),
                               ("patch", ["-p", both])):
            for opts in BOUNDARIES:
                assert_cheap(ctx, ["attach", "-q", "-e", "none", "-o", out, "-d", "30",
                                   "--mechanism", mechanism, *opts, *who])
    finally:
        for t in targets:
            t.kill()
            t.wait()


def test_each_program_is_cheap_to_verify_when_forks_are_followed(ctx):
    # run follows the processes its command forks: the exec and exit hooks
    # sum their tables, and with a boundary closed in the target their
    # requests too (sum_child_requests: its histogram and sites).
    out = os.path.join(ctx.tmp, "run.json")
    for opts in BOUNDARIES:
        walked = assert_cheap(ctx, ["run", "-q", "-e", "none", "-o", out, "-d", "30",
                                    "--mechanism", "patch", *opts, "--",
                                    ctx.target("reads_target"), "clock_gettime", "2", "0", "0"])
        assert len(walked) >= 4, f"expected the lifecycle hooks too: {walked}"


def test_the_patch_walks_little_more_than_uprobes_at_a_plain_attach(ctx):
    # The table's sums are walked once, by the exit program (attached at
    # sched_prepare_exec too, where on_clock_func walked them again for the
    # C library's execve: ~3,700 instructions), and without their request
    # blocks' requests where no boundary is closed in the target (~2,800
    # more): the patch's attach is held back by its verifier's work, which
    # the uprobe mechanism's does not do (4,998 + 3,828 instructions were
    # walked where uprobes walked 1,582 in all). A target counted alone
    # has its reads through syscall() in those blocks (its syscall()
    # redirected), summed at its exit too: 3,272 against 1,610, with the
    # sums zeroed once per pass (each bpf_loop the verifier inlines copies
    # the program: four made the load 2 ms longer, 3,564 walked).
    out = os.path.join(ctx.tmp, "run.json")
    target = subprocess.Popen([ctx.target("reads_target"), "clock_gettime", "2", "0", "0"])
    try:
        wait_serving(target)
        total = {m: sum(programs_walked(ctx, ["attach", "-q", "-e", "none", "-o", out, "-d", "30",
                                              "--mechanism", m, str(target.pid)]).values())
                 for m in ("uprobe", "patch")}
    finally:
        target.kill()
        target.wait()
    assert total["patch"] <= total["uprobe"] + 2000, total
