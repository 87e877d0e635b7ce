"""breakpoint attach: attaching to a target that keeps creating threads
succeeds every time and counts exactly. thread_spawner starts a thread
every 10 ms, each serving requests of exactly K clock reads, so threads are
born (from creators whose breakpoints are being opened) during every
attach; a thread that inherited only part of the breakpoints, or inherited
one before its program was attached, would show up as a failed attach or as
requests with fewer than K reads."""
import os
import subprocess
import threading

from common import require_breakpoints
from readiness import wait_for

# The mechanism under test (uprobe is the default).
MECH = ["--mechanism", "breakpoint"]

K = 3            # clock reads per request, by construction
CYCLES = 100
STREAMS = 4       # spawners attached to side by side, CYCLES / STREAMS each
INTERVAL_MS = 10  # a new thread this often


def start_spawner(ctx):
    # K reads per request, 20 requests per thread (1 ms apart), a thread
    # every INTERVAL_MS, until killed.
    return subprocess.Popen([ctx.target("thread_spawner"), str(K), "20", str(INTERVAL_MS)])


def attach_once(ctx, pid, out):
    return subprocess.run([ctx.clockprof, "attach", *MECH, "-q", "-d", "0.1", "-e", "none",
                           "-r", "func:handle_request", "-o", out, str(pid)],
                          capture_output=True, text=True, timeout=60)


def check_cycle(ctx, name, proc, out):
    assert proc.returncode == 0, f"{name}: exit {proc.returncode}: {proc.stderr}"
    run = ctx.load_json(out)
    hist = run["per_request"]["histogram"]
    assert run["request"]["count"] > 0, f"{name}: no request seen"
    assert run["clock_reads"]["per_op"] == K, f"{name}: {run['clock_reads']}"
    assert len(hist) == 1 and hist[0][0] == K, f"{name}: histogram {hist}, {run['probe']}"


def spawning(spawner):
    """Whether the spawner is past its loader and has begun creating threads."""
    if spawner.poll() is not None:
        raise AssertionError(f"thread_spawner exited with {spawner.returncode}")
    return ("/libc.so.6" in open(f"/proc/{spawner.pid}/maps").read() and
            len(os.listdir(f"/proc/{spawner.pid}/task")) >= 2)


def attach_cycles(ctx, stream, cycles, failures):
    """Attaches `cycles` times, one after the other, to one spawner."""
    spawner = start_spawner(ctx)
    out = os.path.join(ctx.tmp, f"run{stream}.json")
    try:
        # Attach only once threads are being born, the moment under test.
        wait_for(lambda: spawning(spawner), f"thread_spawner (pid {spawner.pid}) to start threads")
        for i in range(cycles):
            if os.path.exists(out):
                os.unlink(out)
            check_cycle(ctx, f"spawner {stream} cycle {i}",
                        attach_once(ctx, spawner.pid, out), out)
            assert spawner.poll() is None, "the spawner died"
    except Exception as e:  # noqa: BLE001 - reported by the test
        failures.append(e)
    finally:
        spawner.kill()
        spawner.wait()


def test_attach_cycles_while_threads_are_born(ctx):
    require_breakpoints(ctx)
    # Most of a cycle is the kernel unregistering clockprof's uprobes on
    # exit (a grace period per probe, on the order of 0.25 s here), not
    # CPU: STREAMS spawners, each attached to CYCLES / STREAMS times in a row,
    # keep the 100 cycles well inside a minute (on 2 CPUs).
    failures = []
    streams = [threading.Thread(target=attach_cycles,
                                args=(ctx, n, CYCLES // STREAMS, failures))
               for n in range(STREAMS)]
    for t in streams:
        t.start()
    for t in streams:
        t.join()
    assert not failures, failures
