"""Call sites under `attach` with the vDSO patch: each read named at the
program's own line, as `run` names it and as the uprobes do, for threads
that exist before the attach, threads born in the window, and a second
attach to a process patched before (its table reused). A thread's first
read through a clock wrapper claims its site in the thread's block; were
the sites switched before the wrappers' rules were written, that claim
would be at the wrapper (glibc's clock_gettime.c) for good."""
import os
import signal
import socket
import subprocess
import threading

from common import Skip
from readiness import wait_attached, wait_for, wait_paced_requests, wait_serving
import servers

# tests/targets/callsites_target.c, per request: {(function, via): reads}
CALLSITES = {
    ("handle_request", "clock_gettime"): 2,
    ("read_mono", "clock_gettime"): 1,
    ("read_wall_twice", "gettimeofday"): 2,
    ("read_time", "time"): 1,
    ("read_timespec", "timespec_get"): 1,
}


def cpu_s(pid):
    """The CPU time pid has run, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_cpu(target, seconds):
    """Waits until target (one that spins between its requests, never
    sleeping) has run `seconds` more of CPU: many requests, whatever the
    host's load."""
    start = cpu_s(target.pid)
    wait_for(lambda: target.poll() is None and cpu_s(target.pid) - start >= seconds,
             f"target (pid {target.pid}) to run {seconds} s of CPU")


def attach(ctx, target, mechanism, boundary="func:handle_request", paced=True):
    """`attach -r boundary` to target (a Popen) with mechanism, its window
    holding many requests (paced: 20 of a target that sleeps after each;
    else 0.2 s of a spinning one's CPU): the run.json."""
    out = os.path.join(ctx.tmp, f"attach-{mechanism}.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "-d", "120",
                             "--mechanism", mechanism, "-r", boundary,
                             "-o", out, str(target.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_attached(proc)
        if paced:
            wait_paced_requests(target, 20)
        else:
            wait_cpu(target, 0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    run = ctx.load_json(out)
    assert run["clock_reads"]["mechanism"] == mechanism, run["clock_reads"]
    return run


def sites(run):
    """{(function, via, file, line, inlined): reads per request}."""
    got = {}
    for s in run["call_sites"]:
        key = (s["function"], s["via"], os.path.basename(s["file"] or ""), s["line"],
               tuple(s["inlined"]))
        got[key] = got.get(key, 0) + s["in_requests"]
    n = run["clock_reads"]["in_requests"]
    assert sum(got.values()) == n, (got, n)
    per_op = run["clock_reads"]["per_op"]
    return {k: round(v * per_op / n, 3) for k, v in got.items()}


def check_same_lines(ctx, target, source, construction, attaches=2):
    """Patch (attaches times, the later ones reusing the first's table)
    and uprobes name the same lines of source at the same reads per
    request, each as construction has them ({function: per request})."""
    uprobe = sites(attach(ctx, target, "uprobe"))
    assert {k[0]: v for k, v in uprobe.items()} == construction, uprobe
    assert all(k[2] == source for k in uprobe), uprobe
    for i in range(attaches):
        patch = sites(attach(ctx, target, "patch"))
        assert patch == uprobe, (i, patch, uprobe)


def callsites(ctx, rate):
    target = subprocess.Popen([ctx.target("callsites_target"), "0", str(rate)],
                              stdout=subprocess.PIPE)
    target.stdout.readline()   # "ready": its libraries are mapped
    return target


def stop(target):
    target.kill()
    target.wait()


def test_attach_names_the_callers_lines(ctx):
    # 1000 requests a second: reads all through the attach, a first one
    # through each wrapper wherever the sites and the rules come apart.
    target = callsites(ctx, 1000)
    try:
        check_same_lines(ctx, target, "callsites_target.c",
                         {f: n for (f, via), n in CALLSITES.items()})
    finally:
        stop(target)


def test_attach_names_each_threads_lines(ctx):
    # tests/targets/reads_target.c: 4 threads reading before the attach,
    # each request 3 clock_gettime reads (read_once, inlined).
    target = subprocess.Popen([ctx.target("reads_target"), "clock_gettime", "3", "0", "3", "0"],
                              stdout=subprocess.DEVNULL)
    try:
        wait_serving(target, threads=4)
        check_same_lines(ctx, target, "reads_target.c", {"handle_request": 3.0})
    finally:
        stop(target)


def test_attach_names_the_lines_of_threads_born_in_the_window(ctx):
    # tests/targets/thread_spawner.c: a thread every 5 ms, each 50
    # requests of 3 reads 1 ms apart: some live before the attach, most
    # are born in its window.
    target = subprocess.Popen([ctx.target("thread_spawner"), "3", "50", "5"],
                              stdout=subprocess.DEVNULL)
    try:
        wait_serving(target, threads=2)
        check_same_lines(ctx, target, "thread_spawner.c", {"handle_request": 3.0})
    finally:
        stop(target)


def test_attach_names_go_lines(ctx):
    # tests/targets/go_target.go mix: time.Now (2 reads) in main.readNow,
    # time.Since (1) in main.readSince; the runtime calls the vDSO itself,
    # from time.now, a frame the thunk hops out of by rbp. The scheduler's
    # own reads (sysmon) are in no request, and uprobes name their via
    # clock_gettime: left out.
    if not os.path.exists(ctx.target("go_target")):
        raise Skip("go_target not built (no Go toolchain)")
    target = subprocess.Popen([ctx.target("go_target"), "mix", "0", "0"],
                              stdout=subprocess.DEVNULL)
    try:
        wait_cpu(target, 0.1)
        got = {}
        for mechanism in ("uprobe", "patch", "patch"):
            run = attach(ctx, target, mechanism, "func:main.handleRequest", paced=False)
            got[mechanism] = {k: v for k, v in sites(run).items() if v}
            assert {k[0]: v for k, v in got[mechanism].items()} == \
                {"main.readNow": 2.0, "main.readSince": 1.0}, (mechanism, got)
        assert got["patch"] == got["uprobe"], got
    finally:
        stop(target)


def ping_until(server, stop):
    """PING after PING over one connection to a redis server, until stop
    (a threading.Event) is set."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        while not stop.is_set():
            s.sendall(b"PING\r\n")
            assert s.recv(64) == b"+PONG\r\n"


def attach_server(ctx, server, mechanism, requests=2000):
    """`attach -r` the server's reply syscall with mechanism, a load of
    requests driven while attached: {site: reads per request}."""
    out = os.path.join(ctx.tmp, f"{server.name}-{mechanism}.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism", mechanism,
                             "-r", server.request, "-o", out, str(server.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()
    pings = threading.Thread(target=ping_until, args=(server, stop))
    try:
        pings.start()      # requests served all through the attach
        wait_attached(proc)
        stop.set()
        pings.join()
        server.one_request()
        server.load(requests)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    run = ctx.load_json(out)
    assert run["clock_reads"]["mechanism"] == mechanism, run["clock_reads"]
    return sites(run)


def test_attach_names_redis_lines_as_uprobes(ctx):
    # Debian's redis-server, GET over one connection: the sites of every
    # request (half a read a request or more) the patch names as the
    # uprobes do, at reads per request within 2%, on a first attach and on
    # a second that reuses its table. Its cron's reads fall in requests at
    # its own pace (the uprobes' slower requests hold more), and jemalloc's
    # now and then: they are not compared.
    server = servers.Redis(ctx, preload=False)
    try:
        server.start()
        uprobe = attach_server(ctx, server, "uprobe")
        main = {k: v for k, v in uprobe.items() if v >= 0.5}
        for i in range(2):
            patch = attach_server(ctx, server, "patch")
            assert {k for k, v in patch.items() if v >= 0.5} == set(main), (i, patch, uprobe)
            for k, v in main.items():
                assert abs(patch[k] - v) <= 0.02 * v, (i, k, patch[k], v)
            # none at the C library's wrapper itself
            assert not [k for k in patch if k[0] == "clock_gettime"], (i, patch)
    finally:
        server.stop()
