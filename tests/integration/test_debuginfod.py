"""--debuginfod: a stripped executable's call sites are named from a debug
file that a debuginfod server gives, asked once, after the window, through
libdw's client; without the option no server is asked (docs/call-sites.md's
promise: a download before the window would hold it back), and the summary
says once what would name them. The server is a local http.server in the
debuginfod layout (/buildid/HEX/debuginfo) serving the target's debug file,
which is not on this machine's debug paths."""
import http.server
import os
import shutil
import subprocess
import threading
import time


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return out.split("Build ID:")[1].split()[0]


class Server:
    """A debuginfod server in a thread: the monotonic time of each request."""

    def __init__(self, root):
        self.asked = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=root, **kw)

            def do_GET(self):
                server.asked.append((time.monotonic(), self.path))
                super().do_GET()

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def setup(ctx):
    """The stripped target alone in a directory (its debug file elsewhere),
    and a server that has the debug file under its build-id."""
    exe = os.path.join(ctx.tmp, "callsites_target_stripped")
    shutil.copy(ctx.target("callsites_target_stripped"), exe)
    hexid = build_id(exe)
    root = os.path.join(ctx.tmp, "srv", "buildid", hexid)
    os.makedirs(root)
    shutil.copy(ctx.target("callsites_target_stripped.debug"), os.path.join(root, "debuginfo"))
    return exe, Server(os.path.join(ctx.tmp, "srv"))


def profile(ctx, exe, url, *opts):
    out = os.path.join(ctx.tmp, "run.json")
    env = dict(os.environ, DEBUGINFOD_CACHE_PATH=os.path.join(ctx.tmp, "cache"))
    env.pop("DEBUGINFOD_TIMEOUT", None)
    if url:
        env["DEBUGINFOD_URLS"] = url
    else:
        env.pop("DEBUGINFOD_URLS", None)
    started = time.monotonic()
    proc = ctx.run("run", "-d", "1", "-e", "none", *opts, "-o", out, "--", exe, 0, 500,
                   env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    run = ctx.load_json(out)
    return proc, run, started, {s["function"] for s in run["call_sites"]}


def test_no_server_is_asked_without_the_option(ctx):
    exe, server = setup(ctx)
    try:
        proc, run, _, names = profile(ctx, exe, server.url)
    finally:
        server.close()
    assert server.asked == [], server.asked
    assert "read_mono" not in names, names
    hints = [w for w in run["warnings"] if "have no name" in w]
    assert len(hints) == 1 and "--debuginfod" in hints[0], run["warnings"]
    assert "callsites_target_stripped" in hints[0], hints


def test_the_option_names_sites_after_the_window(ctx):
    exe, server = setup(ctx)
    try:
        proc, run, started, names = profile(ctx, exe, server.url, "--debuginfod")
    finally:
        server.close()
    assert len(server.asked) == 1 and server.asked[0][1].endswith("/debuginfo"), server.asked
    # asked once, and not before the 1 s window had passed
    assert server.asked[0][0] - started >= run["windows"]["clock_reads"]["duration_s"], \
        (server.asked, started)
    assert {"read_mono", "read_time", "read_timespec", "read_wall_twice"} <= names, names
    assert not [w for w in run["warnings"] if "have no name" in w], run["warnings"]


def test_an_unreachable_server_ends_with_a_warning(ctx):
    exe, server = setup(ctx)
    server.close()  # its port now refuses
    proc, run, _, names = profile(ctx, exe, server.url, "--debuginfod")
    assert "read_mono" not in names, names
    said = [w for w in run["warnings"] if "have no name" in w]
    assert len(said) == 1 and "got no debug file" in said[0] and "10 s" in said[0], run["warnings"]


def test_the_option_without_servers_says_so(ctx):
    exe, server = setup(ctx)
    server.close()
    proc, run, _, names = profile(ctx, exe, None, "--debuginfod")
    assert any("DEBUGINFOD_URLS is not set" in w for w in run["warnings"]), run["warnings"]
