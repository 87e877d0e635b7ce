"""Call sites of a library that was dlclose()d in the window, and another
loaded where it was (the review of stop 56). Sites are named by address
against the maps as last read (LIB_B loaded), so the reads the unloaded
library made are named in the one loaded at its place, whatever the
mechanism: the counts are whole, their file is not. Each read is named in
the file that made it, or the run says which file took whose place; it
said nothing before."""
import os
import shutil

N = 2000  # calls of the first library's dl_clock_read, 3 reads each


def by_module(run):
    out = {}
    for s in run["call_sites"]:
        name = os.path.basename(s.get("module") or "?")
        out[name] = out.get(name, 0) + s["count"]
    return out


def test_reads_of_a_dlclosed_library_are_named_in_it_or_said(ctx):
    libs = []
    for name in ("liba_clock.so", "libb_clock.so"):
        libs.append(os.path.join(ctx.tmp, name))
        shutil.copy(ctx.target("libdl_clock.so"), libs[-1])
    out = os.path.join(ctx.tmp, "dlswap.json")
    proc = ctx.run("run", "-q", "-e", "none", "--mechanism", ctx.counted(), "-o", out, "--",
                   ctx.target("dlswap_target"), *libs, N)
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.split()
    assert said[2] == said[5], f"the second library was not loaded at the first's place: {said}"
    run = ctx.load_json(out)
    assert run["clock_reads"]["total"] == 9 * N, run["clock_reads"]
    got = by_module(run)
    told = [w for w in run["warnings"]
            if "libb_clock.so was mapped where" in w and "liba_clock.so" in w]
    assert (got.get("liba_clock.so") == 3 * N and got.get("libb_clock.so") == 6 * N) or told, (
        f"named {got}, and nothing said: {run['warnings']}")
