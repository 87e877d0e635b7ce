"""`clockprof compare` on run files with run.json "anatomy" (issue #45),
written into ctx.tmp by hand (no target, no privileges): the measure
clock_reads_reusable/op is judged only when both sides have it, and
never fails when one side lacks it; a reusable read of base that head
no longer lists is named in the terminal, the markdown and verdict.json,
matched by its site and callers, not by its run's id."""
import os

from test_compare_cli import write_run

REUSABLE = "clock_reads_reusable/op"
# A name that would break a markdown code span or table, or add HTML.
HOSTILE = "tick`s|<b>now</b>"


def read(i, fn, file, line, callers=()):
    return {"id": i, "function": fn, "file": file, "line": line, "module": "/usr/bin/srv",
            "via": "clock_gettime", "clock": "CLOCK_MONOTONIC",
            "callers": [{"function": c[0], "file": c[1], "line": c[2]} for c in callers]}


def anatomy(reads, reusable, judged=True, why=None):
    steps = [{"read": r["id"], "at_ns": 100 * k, "gap_ns": 0 if k == 0 else 100, "syscalls": [],
              "switches": {"voluntary": 0, "preempted": 0}} for k, r in enumerate(reads)]
    return {"sample_size": 200, "sampled_requests": 100, "truncated_requests": 0,
            "requests": 100, "every_request": True, "reuse_gap_ns": 1000, "reuse_share": 0.95,
            "judged": judged, "not_judged_because": why, "reads": reads,
            "shapes": [{"requests": 100, "share": 1.0, "steps": steps}], "other_requests": 0,
            "reusable": reusable if judged else [],
            "reusable_per_op": sum(e["per_op"] for e in reusable) if judged else 0}


def reuse(r, e, per_op, share=0.99):
    return {"read": r, "reuses": e, "share": share, "gap_ns": {"p50": 80, "p99": 300},
            "per_op": per_op}


def run_file(ctx, name, reads_per_op, anat=None, reusable_per_op=None):
    m = {"clock_reads/op": (reads_per_op, "exact", "lower")}
    if reusable_per_op is not None:
        m[REUSABLE] = (reusable_per_op, "exact", "lower")
    extra = {"anatomy": anat} if anat is not None else None
    return write_run(os.path.join(ctx.tmp, name), m, doc_extra=extra)


def compare(ctx, base, head, *args):
    out = os.path.join(ctx.tmp, "verdict.json")
    md = os.path.join(ctx.tmp, "summary.md")
    p = ctx.run("compare", "--base", base, "--head", head, "-o", out, "--markdown", md,
                "--color=never", *args)
    v = ctx.load_json(out) if os.path.exists(out) else None
    return p, v, open(md).read() if os.path.exists(md) else ""


def measure(v, name):
    return {m["name"]: m for m in v["measures"]}.get(name)


# Base: a request reads through one helper from two callers; the second
# read could reuse the first, and Pool::get could reuse handle's read.
BASE_READS = [read(0, "handle", "srv.c", 40),
              read(1, "now_ns", "time.h", 12, [("handle", "srv.c", 42)]),
              read(2, HOSTILE, "srv.c", 60),
              read(3, "Pool::get", "pool.c", 10)]
BASE_REUSABLE = [reuse(3, 2, 0.25), reuse(1, 0, 1.0)]


def test_reusable_measure_judged_when_both_sides_have_it(ctx):
    base = run_file(ctx, "base.json", 4, anatomy(BASE_READS, BASE_REUSABLE), 1.25)
    head = run_file(ctx, "head.json", 5, anatomy(BASE_READS, BASE_REUSABLE), 2.25)
    p, v, _ = compare(ctx, base, head)
    assert p.returncode == 1, p.stderr
    m = measure(v, REUSABLE)
    assert m["status"] == "regressed" and m["fails_gate"], m
    assert v["reusable_removed"] == []
    head = run_file(ctx, "head.json", 4, anatomy(BASE_READS, BASE_REUSABLE), 1.25)
    p, v, _ = compare(ctx, base, head)
    assert p.returncode == 0, p.stdout + p.stderr
    assert measure(v, REUSABLE)["status"] == "within"


def test_reusable_measure_on_one_side_only_is_not_judged(ctx):
    base = run_file(ctx, "base.json", 4, anatomy(BASE_READS, BASE_REUSABLE), 1.25)
    head = run_file(ctx, "head.json", 4)
    p, v, md = compare(ctx, base, head)
    assert p.returncode == 0, p.stdout + p.stderr
    assert v["status"] == "pass"
    m = measure(v, REUSABLE)
    assert m["status"] == "removed" and not m["fails_gate"], m
    assert m["reason"] == ("not judged: the base runs have it, the head runs do not (they were "
                           "profiled without --anatomy); it is judged only when both sides have it")
    assert v["summary"]["removed_not_allowed"] == 0
    # Head has no anatomy: nothing to say of reads it removed.
    assert v["reusable_removed"] is None
    assert "Reusable in base" not in md and "reusable in base" not in p.stdout
    # The other way round, base counted where gaps are not exact.
    base = run_file(ctx, "base.json", 4, anatomy(BASE_READS, [], judged=False,
                                                 why="counted by uprobe: a trap in each gap"))
    head = run_file(ctx, "head.json", 4, anatomy(BASE_READS, BASE_REUSABLE), 1.25)
    p, v, _ = compare(ctx, base, head)
    assert p.returncode == 0, p.stdout + p.stderr
    m = measure(v, REUSABLE)
    assert m["status"] == "added" and not m["fails_gate"], m
    assert "their reuse was not judged: counted by uprobe: a trap in each gap" in m["reason"]
    assert v["reusable_removed"] is None
    # Not judged either with --fail-on-inconclusive: it is not inconclusive.
    p, v, _ = compare(ctx, base, head, "--fail-on-inconclusive")
    assert p.returncode == 0 and v["status"] == "pass", p.stdout + p.stderr


def test_reusable_read_head_removed_is_named(ctx):
    base = run_file(ctx, "base.json", 4, anatomy(BASE_READS, BASE_REUSABLE), 1.25)
    # Head: the helper's read from handle (line 42) is gone; the other
    # pair stays reusable under other ids; a read through the helper from
    # another caller is new.
    head_reads = [read(0, "Pool::get", "pool.c", 10), read(1, HOSTILE, "srv.c", 60),
                  read(2, "handle", "srv.c", 40),
                  read(3, "now_ns", "time.h", 12, [("stats", "srv.c", 70)])]
    head = run_file(ctx, "head.json", 3, anatomy(head_reads, [reuse(0, 1, 0.25)]), 0.25)
    p, v, md = compare(ctx, base, head)
    assert p.returncode == 0, p.stdout + p.stderr
    assert measure(v, REUSABLE)["status"] == "improved"
    gone = v["reusable_removed"]
    assert len(gone) == 1, gone
    g = gone[0]
    assert g["read"] == {"function": "now_ns", "file": "time.h", "line": 12,
                         "callers": [{"function": "handle", "file": "srv.c", "line": 42}]}
    assert g["reuses"] == {"function": "handle", "file": "srv.c", "line": 40, "callers": []}
    assert g["per_op"] == 1.0 and g["share"] == 0.99 and g["still_read"] is False
    assert g["gap_ns"] == {"p50": 80, "p99": 300}
    assert ("reusable in base, not in head: now_ns time.h:12 \u2190 handle srv.c:42 "
            "(could reuse handle srv.c:40; 1 reads/op in base): the read is gone") in p.stdout
    assert ("- Reusable in base, not in head: `now_ns time.h:12 \u2190 handle srv.c:42` "
            "(could reuse `handle srv.c:40`; 1 reads/op in base): the read is gone") in md


def test_reusable_read_still_made_but_no_longer_reusable(ctx):
    base = run_file(ctx, "base.json", 4, anatomy(BASE_READS, BASE_REUSABLE), 1.25)
    # Head still reads at pool.c:10, but no longer could reuse the hostile
    # one's value (a syscall now lies between them).
    head = run_file(ctx, "head.json", 4, anatomy(BASE_READS, [reuse(1, 0, 1.0)]), 1.0)
    p, v, md = compare(ctx, base, head)
    assert p.returncode == 0, p.stdout + p.stderr
    gone = v["reusable_removed"]
    assert len(gone) == 1 and gone[0]["read"]["function"] == "Pool::get", gone
    assert gone[0]["still_read"] is True
    # The hostile name stays one code span: its backtick fenced, its pipe
    # escaped, its markup not markup.
    assert ("- Reusable in base, not in head: `Pool::get pool.c:10` (could reuse "
            "``tick`s\\|<b>now</b> srv.c:60``; 0.25 reads/op in base): "
            "still read, no longer reusable") in md, md
    assert "could reuse tick`s|<b>now</b> srv.c:60; 0.25 reads/op in base" in p.stdout
