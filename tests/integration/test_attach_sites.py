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

from common import Skip, rust_target
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
    """{(function, via, file, line, inlined, inlined_at line): reads per
    request}."""
    got = {}
    for s in run["call_sites"]:
        key = (s["function"], s["via"], os.path.basename(s["file"] or ""), s["line"],
               tuple(s["inlined"]), (s["inlined_at"] or {}).get("line"))
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
    per_function = {}
    for k, v in uprobe.items():
        per_function[k[0]] = round(per_function.get(k[0], 0) + v, 3)
    assert per_function == construction, uprobe
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


def wait_started(target, exe):
    """Waits until target (a Popen) runs exe and has paced a few requests:
    its libraries are mapped (static or not, printing or not)."""
    what = f"{exe} (pid {target.pid}) to start"

    def running():
        assert target.poll() is None, f"{what}: it exited {target.returncode}"
        try:
            return os.readlink(f"/proc/{target.pid}/exe") == os.path.realpath(exe)
        except OSError:
            return False
    wait_for(running, what)
    wait_paced_requests(target, 5)


def check_target_lines(ctx, argv, sources, construction, boundary="func:handle_request"):
    """A bundled target (argv) attached while it serves, by uprobes and
    twice by the patch: the same sites (function, via, file, line,
    inlined) at the same reads per request, every one in sources, and per
    function as construction has them ({function: reads per request})."""
    target = subprocess.Popen([str(a) for a in argv], stdout=subprocess.DEVNULL)
    try:
        wait_started(target, argv[0])
        got = {}
        for i, mechanism in enumerate(("uprobe", "patch", "patch")):
            run = sites(attach(ctx, target, mechanism, boundary))
            per_function = {}
            for k, v in run.items():
                per_function[k[0]] = round(per_function.get(k[0], 0) + v, 3)
            assert per_function == construction, (argv, mechanism, run)
            assert all(k[2] in sources and k[3] > 0 for k in run), (argv, mechanism, run)
            got.setdefault(mechanism, run)
            assert run == got["uprobe"], (argv, i, run, got["uprobe"])
    finally:
        stop(target)


# tests/targets/reads_target.c, MODE K=2: reads per request (its header),
# all in handle_request (read_once inlined) but wrapper's, in my_now.
READS_MODES = {"clock_gettime": 2, "clocks": 12, "gettimeofday": 2, "time": 2,
               "timespec_get": 2, "syscall": 6, "cputime": 4, "mix": 6}


def test_attach_names_the_lines_of_every_reads_target_mode(ctx):
    # Each way of reading the clock, attached to 2 threads (the second
    # started at once), and static; the same targets as under `run` in
    # test_mechanisms.py's every-bundled-target test.
    cases = [(m, "reads_target", {"handle_request": n}) for m, n in READS_MODES.items()]
    cases += [("wrapper", "reads_target", {"my_now": 2}),
              ("mix", "reads_target_static", {"handle_request": 6})]
    for mode, name, construction in cases:
        check_target_lines(ctx, [ctx.target(name), mode, 2, 0, 1, 0], {"reads_target.c"},
                           construction)


def test_attach_names_the_lines_of_every_call_site_target(ctx):
    # The call-site targets test_call_sites.py checks under `run`, each
    # attached: its reads per request (from its source) at its own lines,
    # through frame pointers, CFI alone (no frame pointers; stripped, with
    # a separate debug file), C++ templates, the program's own library,
    # the C library's wrappers that call clock_gettime themselves (glibc;
    # static musl, where no libc function of the vDSO is probed).
    c = {f: n for (f, via), n in CALLSITES.items()}
    cpp = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"
    cases = [
        ("callsites_target_nofp", "callsites_target.c", c),
        ("callsites_target_stripped", "callsites_target.c", c),
        ("callsites_cpp_target", "callsites_cpp_target.cpp",
         {"app::Timer<int>::elapsed(std::vector<int, std::allocator<int> > const&)": 1,
          f"app::Timer<{cpp} >::elapsed(std::vector<{cpp}, std::allocator<{cpp} > > const&)": 1,
          "app::wall_seconds()": 1}),
        ("callsites_lib_target", "callsites_lib.c", {"lib_read_clock": 2}),
        ("wrapper_sites_target", "wrapper_sites_target.c", {"handle_request": 5}),
        ("wrapper_sites_target_musl_static", "wrapper_sites_target.c", {"handle_request": 5}),
    ]
    for name, source, construction in cases:
        if not os.path.exists(os.path.join(ctx.targets, name)):
            print(f"     {name} not built (musl-gcc not installed): left out", flush=True)
            continue
        check_target_lines(ctx, [ctx.target(name), 0, 1000], {source}, construction)


def test_attach_names_chrono_and_rust_lines(ctx):
    # tests/targets/chrono_target.cpp: K (2) steady_clock::now and K
    # system_clock::now in handle_request; rust_target.rs: K (2)
    # Instant::now in read_instant, one SystemTime::now in handle_request.
    check_target_lines(ctx, [ctx.target("chrono_target"), 2, 0], {"chrono_target.cpp"},
                       {"handle_request()": 4})
    check_target_lines(ctx, [rust_target(ctx), 2, 0], {"rust_target.rs"},
                       {"rust_target::read_instant": 2, "rust_target::handle_request": 1},
                       "func:rust_target::handle_request")


def ping_until(server, stop):
    """PING after PING over one connection to a redis server, until stop
    (a threading.Event) is set."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        while not stop.is_set():
            s.sendall(b"PING\r\n")
            assert s.recv(64) == b"+PONG\r\n"


def ab_until(server, stop):
    """ApacheBench's keep-alive requests, as the load's (servers.ab: the
    window may hold many of them on a loaded host, and requests of
    another kind would differ in reads), until stop is set."""
    path = "/index.html" if server.name == "nginx" else "/"
    ab = subprocess.Popen([servers.need("ab", "apache2-utils"), "-q", "-k", "-c", "1",
                           "-n", "100000000", "-s", "30", f"http://127.0.0.1:{server.port}{path}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        stop.wait()
    finally:
        ab.kill()
        ab.wait()


def attach_server(ctx, server, mechanism, requests=2000, busy=ping_until):
    """`attach -r` the server's reply syscall with mechanism, a load of
    requests driven while attached (busy(server, stop) drives others while
    it attaches): {site: reads per request}."""
    return sites(attach_server_run(ctx, server, mechanism, ["-r", server.request], requests,
                                   busy))


def attach_server_run(ctx, server, mechanism, opts, requests, busy):
    """`attach` the server with mechanism and opts, as attach_server: its
    run.json."""
    out = os.path.join(ctx.tmp, f"{server.name}-{mechanism}.json")
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism", mechanism,
                             *opts, "-o", out, str(server.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()
    pings = threading.Thread(target=busy, args=(server, stop))
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
    return run


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


def same_main_sites(name, uprobe, patch, share, structural, paced):
    """The sites of at least `share` reads per request, patch as uprobes
    (but those `paced` names, whose reads per request follow the server's
    pace), and each site `structural` names (a predicate) at its reads per
    request within 2%; none at the C library's wrapper."""
    main = {k for k, v in uprobe.items() if v >= share and not paced(k)}
    assert {k for k, v in patch.items() if v >= share and not paced(k)} == main, \
        (name, patch, uprobe)
    compared = [k for k in main if structural(k)]
    assert compared, (name, uprobe)
    for k in compared:
        assert abs(patch[k] - uprobe[k]) <= 0.02 * uprobe[k], (name, k, patch, uprobe)
    assert not [k for k in patch if k[0] == "clock_gettime"], (name, patch)


def lines_as_uprobes(ctx, server, share, structural=lambda k: True, measure=None,
                     paced=lambda k: False):
    """Uprobes, then the patch twice (the second reusing the first's
    table), each attached while requests are served: same_main_sites."""
    measure = measure or (lambda m: attach_server(ctx, server, m, busy=ab_until))
    try:
        server.start()
        uprobe = measure("uprobe")
        for i in range(2):
            same_main_sites(f"{server.name} patch {i + 1}", uprobe, measure("patch"), share,
                            structural, paced)
    finally:
        server.stop()
    return uprobe


def test_attach_names_nginx_lines_as_uprobes(ctx):
    # Debian's nginx worker, a static file over ab -k, -r syscall:writev:
    # ngx_time_update's gettimeofday and clock_gettime once a request each.
    uprobe = lines_as_uprobes(ctx, servers.Nginx(ctx, preload=False), 0.5)
    by_entry = {}
    for k, v in uprobe.items():
        by_entry[k[:2]] = by_entry.get(k[:2], 0) + v
    assert {k: round(v, 1) for k, v in by_entry.items() if v >= 0.5} == \
        {("ngx_time_update", "gettimeofday"): 1.0, ("ngx_time_update", "clock_gettime"): 1.0}, \
        uprobe


def test_attach_names_node_lines_as_uprobes(ctx):
    # Node's http server (servers.py), -r syscall:writev: libuv's
    # uv__hrtime (the handler's two process.hrtime.bigint() and the
    # loop's own updates), uv__io_poll's, and V8's Time::Now (Date.now,
    # once a request). How many times the loop wakes in a request is the
    # server's pace: uprobes' slower reads make it 5-8% fewer (both
    # mechanisms exact against the truth library: test_servers.py), so
    # only Date.now's site is compared for its count; V8's TimeTicks::Now
    # is left out: 0.1-0.5 a request on a quiet host, 0.8 under uprobes and
    # 1.3 under the patch beside two busy loops, its pace too.
    uprobe = lines_as_uprobes(ctx, servers.Node(ctx, preload=False), 0.9,
                              lambda k: k[0] == "v8::base::Time::Now()",
                              paced=lambda k: k[0] == "v8::base::TimeTicks::Now()")
    assert round(uprobe[("v8::base::Time::Now()", "gettimeofday", "", None, (), None)], 2) == 1.0, uprobe
    assert sum(v for k, v in uprobe.items() if k[0] == "uv__hrtime") >= 2, uprobe


def go_sites(ctx, server, mechanism):
    """{site: reads per request} of the Go server (no boundary: its
    goroutines move between threads), requests counted by main.stamp's
    reads, 6 each (go_http_server.go)."""
    run = attach_server_run(ctx, server, mechanism, [], 2000, ab_until)
    got = {}
    for s in run["call_sites"]:
        key = (s["function"], s["via"], os.path.basename(s["file"] or ""), s["line"],
               tuple(s["inlined"]), (s["inlined_at"] or {}).get("line"))
        got[key] = got.get(key, 0) + s["count"]
    stamp = sum(v for k, v in got.items() if k[0] == "main.stamp")
    assert stamp >= 6 * 2001, (stamp, got)
    return {k: round(v * 6 / stamp, 3) for k, v in got.items()}


def test_attach_names_go_server_lines_as_uprobes(ctx):
    # tests/targets/go_http_server.go, net/http over ab -k: main.stamp's
    # three time.Now lines, 2 reads each, by construction, and net/http's
    # own (a connection's state, deadlines, the Date header, the
    # request's time), the same lines, but a connection's state changes
    # also as ab's connections come and go at a window's edges (5.82 vs
    # 5.99 a request seen on a loaded host): main.stamp's alone are held
    # to 2%. The runtime's reads (sysmon, the scheduler's idle Ps) come at
    # its own pace and are named via clock_gettime by uprobes, via
    # runtime.nanotime by the patch: left out.
    server = servers.GoServer(ctx)
    uprobe = lines_as_uprobes(ctx, server, 0.5, lambda k: k[0] == "main.stamp",
                              measure=lambda m: {
        k: v for k, v in go_sites(ctx, server, m).items() if not k[0].startswith("runtime.")})
    # the window's two edges may each cut a request between its stamps:
    # a line a read off (6 / ~6,000 requests' reads = 0.001 a request)
    stamp = {k[3]: v for k, v in uprobe.items() if k[0] == "main.stamp"}
    assert len(stamp) == 3 and all(abs(v - 2.0) <= 0.002 for v in stamp.values()), uprobe
    assert all(k[2] and k[3] for k, v in uprobe.items() if v >= 0.5), uprobe


def test_attach_finds_a_site_for_every_read_of_busy_threads(ctx):
    """tests/targets/burst_target.c: 3 threads read as fast as they can,
    each from its own function, in bursts paused all together. 5 attaches
    to it: every read in each window is at one of the 3 sites, none
    without a site. The window's start takes the counts and the sites at
    one instant, in a pause; a test hook sleeps 50 ms between the two on
    its first try, as a loaded host may: a start that read them apart
    counted the reads made there with no site (from the second attach,
    whose threads have their slots in the table already)."""
    gap = dict(os.environ, CLOCKPROF_TEST_READ_GAP_MS="50")
    target = subprocess.Popen([ctx.target("burst_target"), "3", "2000", "20"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().startswith("ready"), "burst_target did not start"
        for i in range(5):
            out = os.path.join(ctx.tmp, f"burst-{i}.json")
            proc = subprocess.run([ctx.clockprof, "attach", "-q", "-e", "none", "-d", "0.3",
                                   "-o", out, str(target.pid)],
                                  capture_output=True, text=True, timeout=120, env=gap)
            assert proc.returncode == 0, proc.stderr
            run = ctx.load_json(out)
            total = run["clock_reads"]["total"]
            by_site = {s["function"]: s["count"] for s in run["call_sites"]}
            assert not [w for w in run["warnings"] if "no call site" in w], (i, run["warnings"])
            assert set(by_site) == {"read_a", "read_b", "read_c"}, (i, by_site)
            assert total > 0 and sum(by_site.values()) == total, (i, by_site, total)
    finally:
        stop(target)
