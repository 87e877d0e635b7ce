"""--metrics-file and --serve (issue 29, item 2): the Prometheus text
exposition format (0.0.4) that node_exporter's textfile collector and a
Prometheus scrape read. Its counts are exactly those of the bundled target
(tests/targets/callsites_target.c: 7 reads a request, by construction) and
of run.json; `promtool check metrics` (Debian prometheus) accepts it; a
symbol name and a path from the target holding a quote, a backslash and a
newline come out escaped, never forging a label or a line; the --serve
child answers /metrics with counters that only grow between two scrapes,
runs as nobody with no capability, and a non-loopback address is refused
without --serve-any."""
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

from common import Skip, site_line

N = 60  # requests; the target exits after them
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"(,|$)')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], v)


def parse(text):
    """{(name, ((label, value), ...)): value} and {family: type}; fails on
    a line that is neither a comment nor a well-formed sample."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if line.startswith("# HELP "):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels, rest = [], m.group(2) or ""
        while rest:
            lm = LABEL.match(rest)
            assert lm, f"bad labels in {line!r}"
            labels.append((lm.group(1), unescape(lm.group(2))))
            rest = rest[lm.end():]
        key = (m.group(1), tuple(labels))
        assert key not in samples, f"sample twice: {line!r}"
        samples[key] = float(m.group(3))
    return samples, types


def total(samples, name, **labels):
    return sum(v for (n, ls), v in samples.items()
               if n == name and all(dict(ls).get(k) == w for k, w in labels.items()))


def promtool_check(text):
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool is not installed (Debian prometheus; make test-deps installs it)")
    proc = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def metrics_run(ctx, *options):
    out, prom = os.path.join(ctx.tmp, "run.json"), os.path.join(ctx.tmp, "clockprof.prom")
    proc = ctx.run("run", "-q", "-o", out, "--metrics-file", prom, *options)
    assert proc.returncode == 0, proc.stderr
    with open(prom) as f:
        return ctx.load_json(out), f.read()


def test_metrics_file_counts_exact_as_constructed(ctx):
    run, text = metrics_run(ctx, "-r", "func:handle_request", "--",
                            ctx.target("callsites_target"), N, 1000)
    s, types = parse(text)
    reads = run["clock_reads"]
    assert total(s, "clockprof_clock_reads_total") == reads["total"] == 7 * N
    for entry, n in (("clock_gettime", 4 * N), ("gettimeofday", 2 * N), ("time", N)):
        assert total(s, "clockprof_clock_reads_total", entry=entry) == n, (entry, text)
    assert total(s, "clockprof_clock_reads_by_path_total", path="vdso") == 7 * N
    assert total(s, "clockprof_clock_reads_by_path_total", path="syscall") == 0
    assert total(s, "clockprof_clock_reads_by_clock_total") == 7 * N
    assert total(s, "clockprof_call_site_reads_total") == 7 * N
    sites = {(dict(ls)["site"], dict(ls)["via"], dict(ls)["location"].partition(":")[2]): v
             for (n, ls), v in s.items() if n == "clockprof_call_site_reads_total"}

    def at(marker, inlined_at=None):
        line = site_line("callsites_target.c", marker)
        return f"{line} (inlined at line {site_line('callsites_target.c', inlined_at)})" \
            if inlined_at else str(line)
    # now_ns, inlined into handle_request at two lines: a series each.
    assert sites == {("handle_request > now_ns", "clock_gettime", at("now_ns", "inline1")): N,
                     ("handle_request > now_ns", "clock_gettime", at("now_ns", "inline2")): N,
                     ("read_wall_twice", "gettimeofday", at("read_wall_twice")): 2 * N,
                     ("read_mono", "clock_gettime", at("read_mono")): N,
                     ("read_time", "time", at("read_time")): N,
                     ("read_timespec", "timespec_get", at("read_timespec")): N}, sites
    # Every request but each thread's first, partial one: 7 reads each.
    requests = run["request"]["count"]
    assert requests == N - 1
    assert total(s, "clockprof_requests_total") == requests
    assert types["clockprof_reads_per_request"] == "histogram"
    assert total(s, "clockprof_reads_per_request_bucket", le="6") == 0
    assert total(s, "clockprof_reads_per_request_bucket", le="7") == requests
    assert total(s, "clockprof_reads_per_request_bucket", le="+Inf") == requests
    assert total(s, "clockprof_reads_per_request_count") == requests
    assert total(s, "clockprof_reads_per_request_sum") == 7 * requests
    # Every series names the executable as started (absolute: the path
    # the command ran by); the kernel's file beside it; none a pid.
    exe = run["target"]["exec_path"]
    assert exe.startswith("/") and os.path.samefile(exe, run["target"]["exe"]), run["target"]
    assert all(dict(ls).get("executable") == exe for (n, ls) in s if n != "clockprof_build_info")
    assert total(s, "clockprof_executable_info", file=run["target"]["exe"]) == 1
    assert "pid" not in text
    assert all(n.endswith("_total") for n, t in types.items() if t == "counter")
    assert total(s, "clockprof_probe_info", mechanism=reads["mechanism"]) == 1


def test_metrics_file_accepted_by_promtool(ctx):
    _, text = metrics_run(ctx, "-r", "func:handle_request", "--",
                          ctx.target("callsites_target"), N, 1000)
    promtool_check(text)


def test_metrics_sites_beyond_n_are_other(ctx):
    _, text = metrics_run(ctx, "--metrics-sites", 2, "-r", "func:handle_request", "--",
                          ctx.target("callsites_target"), N, 1000)
    s, _ = parse(text)
    sites = {dict(ls)["site"]: v for (n, ls), v in s.items()
             if n == "clockprof_call_site_reads_total"}
    assert len(sites) == 3 and "other" in sites, sites
    assert sum(sites.values()) == 7 * N, sites


def read_while_running(path, proc, after=None):
    """The metrics file's text once it exists (and differs from after)
    while clockprof still runs."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, "clockprof ended before the file was rewritten"
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            if text and text != after:
                return text
        time.sleep(0.1)
    raise AssertionError("the metrics file was not written during the window")


def test_metrics_file_rewritten_every_interval_with_sites(ctx):
    prom = os.path.join(ctx.tmp, "every.prom")
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-d", "6", "-r",
                             "func:handle_request", "--interval", "0.5s",
                             "--interval-output", os.path.join(ctx.tmp, "intervals.jsonl"),
                             "--metrics-file", prom, "--",
                             ctx.target("callsites_target"), "0", "500"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = read_while_running(prom, proc)
        time.sleep(1.2)
        second = read_while_running(prom, proc, after=first)
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    a, types = parse(first)
    b, _ = parse(second)
    for k, v in a.items():
        if types.get(k[0]) == "counter":
            assert k in b and b[k] >= v, (k, v, b.get(k))
    assert total(b, "clockprof_clock_reads_total") > total(a, "clockprof_clock_reads_total") > 0
    # Call sites are named at each interval, not only at the end.
    assert total(a, "clockprof_call_site_reads_total") > 0, first
    promtool_check(second)


def hostile_target(ctx):
    """A program whose clock-reading function has a symbol name holding a
    quote, a backslash and a newline (no debug info: the name is the
    symbol's), in a directory whose name holds them too."""
    src = os.path.join(ctx.tmp, "hostile.c")
    with open(src, "w") as f:
        f.write("#include <stdlib.h>\n#include <time.h>\n"
                "__attribute__((noinline)) void victim(void)\n"
                "{ struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); }\n"
                "int main(int c, char **v) { for (int i = atoi(v[1]); i > 0; i--) victim(); return 0; }\n")
    name = 'ev"il\\fn\n} 1\nclockprof_forged{x="y'
    where = os.path.join(ctx.tmp, 'dir"q\\b\nl')
    os.mkdir(where)
    exe = os.path.join(where, "hostile")
    subprocess.run(["cc", "-O1", "-o", exe, src], check=True)
    subprocess.run(["objcopy", f"--redefine-sym=victim={name}", exe], check=True)
    return exe, name


def test_metrics_names_from_the_target_escaped(ctx):
    exe, name = hostile_target(ctx)
    run, text = metrics_run(ctx, "-e", "none", "--", exe, 50)
    assert run["call_sites"][0]["function"] == name, run["call_sites"]
    s, _ = parse(text)  # every line a comment or a whole sample
    assert not any(n == "clockprof_forged" for n, _ in s), text
    sites = {dict(ls)["site"]: v for (n, ls), v in s.items()
             if n == "clockprof_call_site_reads_total"}
    assert sites == {name: 50}, sites
    assert {dict(ls)["executable"] for (n, ls) in s if n != "clockprof_build_info"} == {exe}
    promtool_check(text)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
        return r.read().decode()


def server_child(pid):
    """The pid of clockprof's child that runs as nobody (the server)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        if int(status["PPid"]) == pid and status["Uid"].split()[0] == "65534":
            return int(entry), {k: v.strip() for k, v in status.items()}
    return None, None


def wait_for_counts(url, proc):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            text = scrape(url)
            if total(parse(text)[0], "clockprof_clock_reads_total") > 0:
                return text
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.2)
    raise AssertionError("no counts served within 30 s")


def test_serve_two_scrapes_monotonic_from_an_unprivileged_child(ctx):
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    proc = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-d", "8", "-r",
                             "func:handle_request", "--serve", f"127.0.0.1:{port}", "--",
                             ctx.target("callsites_target"), "0", "500"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = wait_for_counts(url, proc)
        child, status = server_child(proc.pid)
        assert child, "no child of clockprof runs as nobody"
        for key in ("Uid", "Gid"):
            assert set(status[key].split()) == {"65534"}, status[key]
        for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            assert int(status[cap], 16) == 0, (cap, status[cap])
        assert status["NoNewPrivs"] == "1" and status["Groups"] == "", status
        time.sleep(3)  # the live text is renewed once a second
        second = scrape(url)
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
            raise AssertionError("/other answered")
        except urllib.error.HTTPError as e:
            assert e.code == 404
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    a, types = parse(first)
    b, _ = parse(second)
    counters = [k for k in a if types.get(k[0]) == "counter" or
                re.sub(r"_(bucket|sum|count)$", "", k[0]) in
                [n for n, t in types.items() if t == "histogram"]]
    assert counters
    for k in counters:
        assert k in b and b[k] >= a[k], (k, a[k], b.get(k))
    assert total(b, "clockprof_clock_reads_total") > total(a, "clockprof_clock_reads_total")
    assert total(b, "clockprof_requests_total") > total(a, "clockprof_requests_total")
    # 7 reads in each complete request, live as at the end.
    assert total(b, "clockprof_reads_per_request_sum") == \
        7 * total(b, "clockprof_reads_per_request_count")
    promtool_check(second)
    time.sleep(0.5)
    assert not os.path.exists(f"/proc/{child}/status") or server_child(proc.pid)[0] is None


def test_serve_beyond_loopback_needs_serve_any(ctx):
    mark = os.path.join(ctx.tmp, "launched")
    for addr in ("0.0.0.0", "[::]"):
        proc = ctx.run("run", "--serve", f"{addr}:{free_port()}", "--", "touch", mark)
        assert proc.returncode == 2, proc.stderr
        assert "--serve-any" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, \
            proc.stderr
    proc = ctx.run("run", "--serve", "nonsense", "--", "touch", mark)
    assert proc.returncode == 2 and "ADDR:PORT" in proc.stderr, proc.stderr
    proc = ctx.run("run", "--serve-any", "--", "touch", mark)
    assert proc.returncode == 2 and "--serve" in proc.stderr, proc.stderr
    assert not os.path.exists(mark)


def test_serve_port_taken_said_before_launch(ctx):
    mark = os.path.join(ctx.tmp, "launched")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = ctx.run("run", "--serve", f"127.0.0.1:{port}", "--", "touch", mark)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr, proc.stderr
    assert not os.path.exists(mark)


def test_serve_child_ends_with_clockprof_even_killed(ctx):
    # SIGKILL leaves clockprof no time to close anything: the child's
    # parent-death signal ends it all the same, and the port is free.
    target = subprocess.Popen([ctx.target("callsites_target"), "0", "500"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    proc = subprocess.Popen([ctx.clockprof, "attach", "-q", "-e", "none", "--mechanism",
                             "uprobe", "--serve", f"127.0.0.1:{port}", str(target.pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_counts(f"http://127.0.0.1:{port}/metrics", proc)
        child, _ = server_child(proc.pid)
        assert child
        proc.kill()
        proc.wait(timeout=60)
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{child}/status") and time.monotonic() < deadline:
            with open(f"/proc/{child}/status") as f:
                if "State:\tZ" in f.read():
                    break
            time.sleep(0.1)
        else:
            assert not os.path.exists(f"/proc/{child}/status"), "the server outlived clockprof"

        # The leader shows Z while its other threads (libmicrohttpd's) still
        # exit: the socket closes with the last of them.
        def closed():
            with socket.socket() as sock:
                return sock.connect_ex(("127.0.0.1", port)) != 0
        deadline = time.monotonic() + 10
        while not closed() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert closed(), "still listening"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        target.kill()
        target.wait()
