"""A patched process whose vDSO's private copy is dropped
(madvise(MADV_DONTNEED) over [vdso]): the kernel's own pages come back,
the entries read original, and every read after counts nowhere. The run
said nothing and gave the reads before as the whole (1,000 of 2,000):
a count presented as exact that is not. It must count them or say so."""
N = 1000


def test_a_dropped_vdso_copy_is_counted_or_said(ctx):
    out = f"{ctx.tmp}/dropped.json"
    proc = ctx.run("run", "-q", "-e", "none", "-o", out, "--", ctx.target("vdso_dontneed_target"),
                   N)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    total = run["clock_reads"]["total"]
    said = [w for w in run.get("warnings", []) if "not counted" in w or "vDSO" in w]
    assert total == 2 * N or said, f"counted {total} of {2 * N}, said nothing: {run['warnings']}"
