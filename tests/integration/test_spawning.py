"""Programs that start programs (tests/targets/spawn_target.c): each
request reads the clock, starts /bin/true by posix_spawn, system(),
vfork+exec or fork+exec, waits, and reads again. glibc's posix_spawn and
system() start the child with clone(CLONE_VM | CLONE_VFORK): it runs in
its parent's memory, with its parent's thread pointer, until its exec.
Its reads, its exec and its exit are never taken for its own: the
parent's slot in the patch's table is the parent's (issue 43, item 13:
each exec summed the parent's slot as the child's, 120 reads in 54
requests for 20 in 9). Exact against construction: 2 reads a request,
under run and under attach, the patch and uprobes alike."""
import os

from common import Skip, attach_until_exit

MECHANISMS = ("uprobe", "patch")
N = 10
ATTACHED_REQUESTS = "300"  # >= 1.5 s of requests: the attach is set up well before
HOWS = ("posix_spawn", "system", "vfork", "fork")


def check_rows(ctx, run, target_reads):
    """The target's row has its reads; each program it started, none."""
    rows = run.get("processes")
    if rows is None:
        return
    assert rows[0]["pid"] == run["target"]["pid"], rows[0]
    assert rows[0]["reads"] == target_reads, rows[0]
    assert all(r["reads"] == 0 for r in rows[1:] if r["counted"]), rows


def test_run_counts_a_spawning_program_exactly(ctx):
    """`run`, each way of starting a program: 2N reads in N - 1 requests,
    2 in each; the programs started read nothing."""
    for how in HOWS:
        out = os.path.join(ctx.tmp, f"spawn-{how}.json")
        proc = ctx.run("run", "-q", "-e", "none", "-r", "func:serve_one", "-o", out, "--",
                       ctx.target("spawn_target"), how, N)
        assert proc.returncode == 0, f"{how}: exit {proc.returncode}: {proc.stderr}"
        run = ctx.load_json(out)
        assert run["clock_reads"]["total"] == 2 * N, (how, run["clock_reads"], run["warnings"])
        assert run["request"]["count"] == N - 1, (how, run["request"])
        assert run["per_request"]["histogram"] == [[2, N - 1]], (how, run["per_request"])
        check_rows(ctx, run, 2 * N)


def attach_once(ctx, how, tree):
    """`attach` to a spawn_target making ATTACHED_REQUESTS requests, until
    it exits (--tree: its children followed, the patch only): run.json.
    A window of a number of requests, not of seconds: `-d 1` on a loaded
    host saw one boundary hit, no request."""
    out = os.path.join(ctx.tmp, f"attach-{how}.json")
    attach_until_exit(ctx, [ctx.target("spawn_target"), how, ATTACHED_REQUESTS, "5"], "-q",
                      "-e", "none", "-r", "func:serve_one", "-o", out,
                      *(("--tree",) if tree else ()))
    return ctx.load_json(out)


def test_attach_counts_a_spawning_program_exactly(ctx):
    """`attach` (and with the patch `attach --tree`, which follows the
    programs started): every request in the window 2 reads, the reads
    those requests and at most the two open ends' (2 each)."""
    for how in ("posix_spawn", "system", "vfork"):
        for tree in ((False, True) if ctx.counted() == "patch" else (False,)):
            run = attach_once(ctx, how, tree)
            n = run["request"]["count"]
            total = run["clock_reads"]["total"]
            assert n > 0, (how, tree, run["request"], run["warnings"])
            assert run["per_request"]["histogram"] == [[2, n]], (how, tree, run["per_request"])
            assert 2 * n <= total <= 2 * n + 4, (how, tree, total, n, run["warnings"])


def test_a_passing_memory_sharer_does_not_refuse_the_patch(ctx):
    """spawn_target clone_vm: each request's child shares the target's
    memory for 3 ms (clone(CLONE_VM), no vfork wait) and reads nothing, so
    at almost any instant one does, but none lasts. The patch counts the
    target, exactly: it had refused it ("shares its memory"), as a loaded
    host refused a posix_spawn one whose parent was preempted between its
    clone and its vfork wait."""
    if ctx.counted() != "patch":
        raise Skip("the patch's refusal")
    out = os.path.join(ctx.tmp, "attach-clone_vm.json")
    attach_until_exit(ctx, [ctx.target("spawn_target"), "clone_vm", "600", "0"], "-q",
                      "-e", "none", "--mechanism", "patch", "-r", "func:serve_one", "-o", out)
    run = ctx.load_json(out)
    n = run["request"]["count"]
    assert run["clock_reads"]["mechanism"] == "patch" and n > 0, (run["probe"], run["request"])
    assert run["per_request"]["histogram"] == [[2, n]], run["per_request"]
