"""`run` follows the processes the target forks (lib/probe/window/
window_processes.c): each counted in its own copy of the patched vDSO,
its requests by its own boundaries, every count exact against
tests/targets/fork_tree_target, whose tree of processes reads and serves
a known number of times; `--no-inherit` counts the target alone."""
import os
import signal
import subprocess
import time

from common import Skip

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
    request of each counted, each process in its own row."""
    run, _ = run_tree(ctx, "func:serve_one", 3, 50)
    check_tree(run, expected_tree(3, 50))
    assert not any("not counted" in w for w in run["warnings"]), run["warnings"]


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


def test_run_follows_a_child_that_outlives_the_target(ctx):
    """A syscall boundary, and a child still running when the target exits
    (the window's end): its table is read whole, its vDSO switched back,
    and it runs on to exit cleanly at SIGTERM."""
    run, out = run_tree(ctx, "syscall:getppid", 2, 40, "linger")
    line = [x for x in out.splitlines() if x.startswith("linger ")]
    assert line, f"the lingering child said nothing: {out!r}"
    pid = int(line[0].split()[1])
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


def test_no_inherit_counts_the_target_alone(ctx):
    """--no-inherit: the root's reads and requests only, the others said
    not counted, and no processes member."""
    run, _ = run_tree(ctx, "func:serve_one", 3, 50, extra=("--no-inherit",))
    assert run["clock_reads"]["total"] == READS * 100, run["clock_reads"]
    assert run["request"]["count"] == 99, run["request"]
    assert "processes" not in run, run.get("processes")
    assert any("started 3 processes" in w for w in run["warnings"]), run["warnings"]


def test_a_boundary_another_process_runs_is_not_followed(ctx):
    """A func: boundary in a file another process runs (another instance
    of the target's executable, outside its tree) would trap that process
    too: the forks are not followed, and the warning names it."""
    other = subprocess.Popen([ctx.target("fork_tree_target"), "0", "1", "linger"],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = other.stdout.readline()
        assert line.startswith("linger "), line
        lingerer = int(line.split()[1])
        run, _ = run_tree(ctx, "func:serve_one", 2, 20)
        assert run["clock_reads"]["total"] == READS * 40, run["clock_reads"]
        assert any("not followed" in w and "also runs" in w for w in run["warnings"]), \
            run["warnings"]
        assert "processes" not in run
    finally:
        os.kill(lingerer, signal.SIGTERM)
        other.wait(timeout=30)


def test_a_child_that_execs_is_said_not_counted(ctx):
    """A shell runs each command in a child that execs: those are not
    counted (they run another program), and the warning says how many."""
    out = os.path.join(ctx.tmp, "sh.json")
    target = ctx.target("lifecycle_target")
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--", "/bin/sh", "-c",
                   f"{target} fork 5 3; {target} fork 5 3")
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    assert any("2 processes the target started exec()ed another program" in w
               for w in run["warnings"]), run["warnings"]
    rows = run["processes"]
    assert sum(1 for r in rows if r["execed"]) == 2, rows
    assert all(r["reads"] is None and not r["counted"] for r in rows if r["execed"]), rows
