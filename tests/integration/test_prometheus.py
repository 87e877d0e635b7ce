"""The PromQL of docs/metrics.md against a real Prometheus (#44, item 7):
Debian's prometheus, on the loopback, scrapes `clockprof run --serve`
once a second, and every query of the page's promql blocks must return
data; the first, reads per request, must return the bundled target's 7
(tests/targets/callsites_target.c, by construction). A query that
divides two metrics without saying `ignoring` the labels only one side
has returns nothing, which is how the page's old per-op query failed."""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from common import Skip
from test_metrics import free_port

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PROMQL = re.compile(r"```promql\n(.*?)```", re.S)


def doc_queries():
    with open(os.path.join(ROOT, "docs", "metrics.md")) as f:
        blocks = PROMQL.findall(f.read())
    queries = [" ".join(line for line in b.splitlines() if not line.startswith("#")).strip()
               for b in blocks]
    assert queries and all(queries), blocks
    return queries


def log_file(ctx, name):
    """A process's stderr, in a file: nothing has to drain it meanwhile."""
    return open(os.path.join(ctx.tmp, name + ".log"), "w")


def log_of(ctx, name):
    with open(os.path.join(ctx.tmp, name + ".log")) as f:
        return f.read()


def start_prometheus(ctx, target):
    binary = shutil.which("prometheus")
    if not binary:
        raise Skip("prometheus is not installed (Debian prometheus; make test-deps installs it)")
    config = os.path.join(ctx.tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: clockprof\n    static_configs:\n"
                f"      - targets: ['{target}']\n")
    port = free_port()
    with log_file(ctx, "prometheus") as log:
        proc = subprocess.Popen([binary, f"--config.file={config}",
                                 f"--storage.tsdb.path={os.path.join(ctx.tmp, 'tsdb')}",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                                stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    return proc, f"http://127.0.0.1:{port}"


def query(api, q):
    """The instant query's result vector, [] while there is none (or
    Prometheus is not answering yet)."""
    url = f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return []   # not answering yet, or slow on a loaded host: asked again
    assert body["status"] == "success", (q, body)
    return body["data"]["result"]


def answers(ctx, api, queries, procs, seconds=60):
    """Every query's result once each has data (rate() needs two scrapes
    in its range, the counters a first interval); fails naming those
    still empty after the time given."""
    deadline = time.monotonic() + seconds
    got = {}
    while time.monotonic() < deadline:
        for name, p in procs.items():
            assert p.poll() is None, f"{name} ended: " + log_of(ctx, name)
        got = {q: query(api, q) for q in queries}
        if all(got.values()):
            return got
        time.sleep(0.5)
    raise AssertionError("no data from: " + "; ".join(q for q, r in got.items() if not r))


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_every_query_of_the_metrics_page_returns_data(ctx):
    queries = doc_queries()
    serve = f"127.0.0.1:{free_port()}"
    with log_file(ctx, "clockprof") as log:
        clockprof = subprocess.Popen([ctx.clockprof, "run", "-q", "-e",
                                      "task-clock,context-switches", "--interval", "1s",
                                      "--interval-output", os.devnull, "-r", "func:handle_request",
                                      "--serve", serve, "--", ctx.target("callsites_target"), "0",
                                      "500"],
                                     stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    prometheus = None
    try:
        prometheus, api = start_prometheus(ctx, serve)
        got = answers(ctx, api, queries, {"clockprof": clockprof, "prometheus": prometheus})
    finally:
        if prometheus:
            stop(prometheus)
        stop(clockprof)
    assert clockprof.returncode == 0, log_of(ctx, "clockprof")
    for q, result in got.items():
        for series in result:
            assert math.isfinite(float(series["value"][1])), (q, series)
    per_request = got[queries[0]]
    assert len(per_request) == 1, per_request
    assert abs(float(per_request[0]["value"][1]) - 7) < 1e-9, per_request
