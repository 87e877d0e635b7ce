"""Real servers from Debian packages for tests/integration/test_servers.py:
each starts on 127.0.0.1, with the ground truth (tests/truth/clock_truth.c)
preloaded, and is driven by a load generator bounded in count and time.
A server whose package is not installed raises Skip naming the package."""
import os
import shutil
import signal
import socket
import subprocess
import sys

from common import Skip
from readiness import wait_for
import truth

LOAD_TIMEOUT = 120  # s; every generator also stops by its request count


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need(program, package):
    path = shutil.which(program) or (program if os.path.isabs(program) and
                                     os.access(program, os.X_OK) else None)
    if not path:
        raise Skip(f"{program} not installed (Debian package {package}; `make test-deps` installs it)")
    return path


def http_get(port, path="/"):
    """One HTTP/1.0 request on a fresh connection; the whole reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1."), reply[:80]
    return reply


def ab(port, n, path="/", keepalive=False):
    """ApacheBench: exactly n requests, one at a time; returns requests/s."""
    cmd = [need("ab", "apache2-utils"), "-q", "-n", str(n), "-c", "1", "-s", "30"]
    cmd += ["-k"] if keepalive else []
    out = subprocess.run(cmd + [f"http://127.0.0.1:{port}{path}"], capture_output=True,
                         text=True, timeout=LOAD_TIMEOUT, check=True).stdout
    assert f"Complete requests:      {n}" in out and "Failed requests:        0" in out, out
    assert "Non-2xx responses" not in out, out
    return float(out.split("Requests per second:")[1].split()[0])


class Server:
    """A started server: .pid (the process that serves), .truth, .port."""

    name = ""
    truth_boundary = ""     # the reply syscall the truth library delimits by
    request = ""            # clockprof's -r SPEC for the same boundary
    function = None         # a func: boundary in the server's binary, if any

    def __init__(self, ctx, preload=True):
        """preload=False: without the truth library (make bench)."""
        self.ctx, self.port, self.proc, self.preload = ctx, free_port(), None, preload
        self.dir = os.path.join(ctx.tmp, self.name)
        os.makedirs(self.dir, exist_ok=True)
        self.truth = truth.Truth(os.path.join(self.dir, "truth"))

    def env(self):
        if not self.preload:
            return dict(os.environ)
        env = dict(os.environ, LD_PRELOAD=self.ctx.target("clock_truth.so"))
        env.update(truth.env(self.truth.path, self.truth_boundary))
        return env

    def write(self, name, text):
        """Writes text to name in the server's directory; returns its path."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def launch(self, cmd, ready=None, **kw):
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(cmd, env=self.env(), stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True, **kw)
        wait_for(self._listening, f"{self.name} to listen on 127.0.0.1:{self.port}")
        if self.preload:
            wait_for(ready or self.truth.ready, f"{self.name} to load the truth library")
        self.pid = self.serving_pid()

    def _listening(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited {self.proc.returncode}: "
                                 f"{open(self.log.name).read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def serving_pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.proc:
            self.log.close()

    def one_request(self):
        """One request: delimits the serving thread's first interval."""
        http_get(self.port)

    def load(self, n):
        """n requests; returns requests per second."""
        return ab(self.port, n)


class Redis(Server):
    name = "redis"
    truth_boundary = "write"
    request = "syscall:write"
    function = "func:processCommand"

    def start(self):
        exe = need("redis-server", "redis-server")
        self.launch([exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no", "--loglevel", "warning", "--dir", self.dir,
                     "--io-threads", "1"])

    def one_request(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(b"PING\r\n")
            assert s.recv(64) == b"+PONG\r\n"

    def load(self, n):
        """redis-benchmark GET: n requests over one connection, one at a
        time (-P 1), so each reply is one write."""
        exe = need("redis-benchmark", "redis-tools")
        out = subprocess.run([exe, "-h", "127.0.0.1", "-p", str(self.port), "-t", "get",
                              "-n", str(n), "-c", "1", "-q", "--csv"], capture_output=True,
                             text=True, timeout=LOAD_TIMEOUT, check=True).stdout
        return float(out.strip().splitlines()[-1].split(",")[1].strip('"'))


NGINX_CONF = """daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    sendfile off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {dir}/www;
    }}
}}
"""


class Nginx(Server):
    """One worker process serves; the master forks it (the truth library
    gives the worker its own slot). sendfile off: a response is one writev
    (header and body)."""
    name = "nginx"
    truth_boundary = "writev"
    request = "syscall:writev"
    function = "func:ngx_http_finalize_request"

    def start(self):
        exe = need("/usr/sbin/nginx", "nginx-light")
        os.makedirs(os.path.join(self.dir, "www"), exist_ok=True)
        # nginx's worker runs as nobody: it must reach the file (mkdtemp: 0700)
        for d in (self.ctx.tmp, self.dir, os.path.join(self.dir, "www")):
            os.chmod(d, 0o755)
        self.write(os.path.join("www", "index.html"), "<p>" + "clockprof " * 100 + "</p>\n")
        conf = self.write("nginx.conf", NGINX_CONF.format(dir=self.dir, port=self.port))
        self.launch([exe, "-e", "stderr", "-c", conf, "-p", self.dir])

    def serving_pid(self):
        def worker():
            kids = open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read().split()
            if not kids or (self.preload and int(kids[0]) not in self.truth.pids()):
                return None
            return int(kids[0])
        return wait_for(worker, "the nginx worker process")

    def load(self, n):
        return ab(self.port, n, "/index.html", keepalive=True)


PYTHON_SERVER = r"""
import http.server, sys, time

# PORT [threading]: threading, a thread per connection whose requests
# stay on it (HTTP/1.1), else one thread serves every connection
THREADING = sys.argv[2:] == ["threading"]

class Handler(http.server.BaseHTTPRequestHandler):
    wbufsize = 65536  # header and body leave in one send at the end
    if THREADING:
        protocol_version = "HTTP/1.1"

    def do_GET(self):
        started = time.monotonic()          # 1 read
        stamp = time.time()                 # 1 read
        body = b"%.6f %.6f\n" % (stamp, time.monotonic() - started)  # 1 read
        self.send_response(200)             # Date header: time.time(), 1 read
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer if THREADING else http.server.HTTPServer
server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


class Python(Server):
    """Debian's python3 (not a pyenv shim): one thread serves every
    connection (HTTPServer, not ThreadingHTTPServer)."""
    name = "python"
    truth_boundary = "sendto"
    request = "syscall:sendto"

    def start(self):
        exe = need("/usr/bin/python3", "python3")
        script = self.write("server.py", PYTHON_SERVER)
        self.launch([exe, script, str(self.port)])


NODE_SERVER = r"""
const http = require('http');
http.createServer((req, res) => {
  const t0 = process.hrtime.bigint();
  const now = Date.now();
  const body = `${now} ${String(process.hrtime.bigint() - t0).padStart(12)}\n`;  // one length: ab checks it
  res.writeHead(200, {'Content-Length': Buffer.byteLength(body)});
  res.end(body);
}).listen(+process.argv[2], '127.0.0.1');
"""


class Node(Server):
    name = "node"
    truth_boundary = "writev"
    request = "syscall:writev"

    def start(self):
        exe = need("node", "nodejs")
        script = self.write("server.js", NODE_SERVER)
        self.launch([exe, script, str(self.port)])


JAVA_SERVER = r"""
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

public class Server {
    public static void main(String[] args) throws Exception {
        HttpServer server = HttpServer.create(
            new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 64);
        server.createContext("/", exchange -> {
            long t0 = System.nanoTime();
            long now = System.currentTimeMillis();
            byte[] body = String.format("%d %12d\n", now, System.nanoTime() - t0)
                .getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();  // no executor: the dispatcher thread runs the handler
    }
}
"""


class Java(Server):
    """OpenJDK's com.sun.net.httpserver, run from source (java Server.java).
    HotSpot reads the clock through libjvm's PLT (os::javaTimeNanos,
    javaTimeMillis), also from JIT-compiled code, so the preloaded truth
    sees it. One exchange is three writes (headers, body, the end), so a
    "request" of both counts is one write of the dispatcher thread."""
    name = "java"
    truth_boundary = "write"
    request = "syscall:write"

    def start(self):
        exe = need("java", "openjdk-17-jdk-headless")
        script = self.write("Server.java", JAVA_SERVER)
        self.launch([exe, "-Xshare:auto", script, str(self.port)])

    def load(self, n):
        """JDK's HttpServer once reset a connection ab was reading (CI,
        breakpoint mechanism; not reproduced in 74,000 requests with and
        without clockprof since): ab then stops, exit 104 (ECONNRESET). The
        truth library and clockprof still cover the same requests, so the
        load runs again, once, and says so; a server that died fails it."""
        try:
            return ab(self.port, n)
        except subprocess.CalledProcessError as e:
            if e.returncode != 104:
                raise
            print(f"     java: ab: connection reset by the server "
                  f"({(e.stderr or '').strip()[-80:]}); the load runs again", flush=True)
            return ab(self.port, n)


class GoServer(Server):
    """tests/targets/go_http_server.go: no truth library (Go calls the
    vDSO itself); its reads per request are known by construction."""
    name = "go"

    def env(self):
        return dict(os.environ)

    def start(self):
        path = os.path.join(self.ctx.targets, "go_http_server")
        if not os.path.exists(path):
            raise Skip("no Go compiler on this machine (make test-deps installs golang-go)")
        self.launch([path, str(self.port)], ready=lambda: True)


ALL = {"redis": Redis, "nginx": Nginx, "python": Python, "node": Node, "java": Java,
       "go": GoServer}
