"""Bad input and impossible profiling: one clear line on stderr and the
documented exit code (docs/exit-codes.md: 2 usage/input, 3 could not profile), nothing launched or
attached when the input is wrong."""
import os
import subprocess

from readiness import wait_serving


def one_line_error(proc, code, *words):
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}: {proc.stderr}"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("clockprof: "), lines[0]
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"


def test_help_and_version(ctx):
    for args in (["--help"], ["--version"], ["attach", "--help"], ["run", "--help"]):
        proc = ctx.run(*args)
        assert proc.returncode == 0 and proc.stdout and not proc.stderr, args


def test_no_such_process(ctx):
    one_line_error(ctx.run("attach", "-d", "1", 4194000), 3, "no such process")


def test_kernel_thread(ctx):
    one_line_error(ctx.run("attach", "-d", "1", 2), 3, "kernel thread")


def test_bad_pid(ctx):
    one_line_error(ctx.run("attach", "12abc"), 2, "invalid PID")


def test_bad_duration(ctx):
    one_line_error(ctx.run("run", "-d", "5x", "--", "true"), 2, "invalid duration", "500ms")


def test_bad_spec(ctx):
    one_line_error(ctx.run("run", "-r", "handle_request", "--", "true"), 2,
                   "func:SYMBOL")
    one_line_error(ctx.run("run", "-r", "syscall:sendtoo", "--", "true"), 2,
                   "unknown syscall", "sendto")


def test_unknown_symbol_suggests(ctx):
    marker = os.path.join(ctx.tmp, "never")
    proc = ctx.run("run", "-r", "func:handle_requets", "--", ctx.target("reads_target"),
                   "time", 1, 5)
    one_line_error(proc, 2, "no function 'handle_requets'", "did you mean handle_request")
    assert not os.path.exists(marker)


def test_no_symbol_table_says_what_to_try(ctx):
    """A func: boundary in an executable stripped of every symbol (as
    Debian's memcached is): the message names the syscall: boundaries to
    try, the syscalls the running target made in a one-second look (this
    target only paces its requests with clock_nanosleep), and --ops; a
    launched command, held before it ran, is told to attach instead."""
    bare = os.path.join(ctx.tmp, "reads_target_bare")
    subprocess.run(["strip", "--strip-all", "-o", bare, ctx.target("reads_target")], check=True)
    proc = ctx.run("run", "-r", "func:handle_request", "--", bare, "time", 1, 5)
    one_line_error(proc, 2, "no symbol table", "syscall:NAME", "attach", "--ops")
    target = subprocess.Popen([bare, "time", "1", "0"], stdout=subprocess.DEVNULL)
    try:
        wait_serving(target)
        proc = ctx.run("attach", "-d", "1", "-r", "func:handle_request", target.pid)
    finally:
        target.kill()
        target.wait()
    one_line_error(proc, 2, "no symbol table", "in 1 s it made clock_nanosleep ", "--ops")


def unwritable_output_refused_before_launch(ctx, output, expected):
    marker = os.path.join(ctx.tmp, "launched")
    proc = ctx.run("run", "-o", output, "--", "touch", marker)
    one_line_error(proc, 2, expected)
    assert not os.path.exists(marker), "the command ran although the output is unwritable"


def test_unwritable_output_checked_before_launch(ctx):
    unwritable_output_refused_before_launch(ctx, "/nonexistent/dir/run.json", "/nonexistent/dir")


def test_command_not_found(ctx):
    one_line_error(ctx.run("run", "--", "/nonexistent/program"), 2, "cannot run")


def test_unknown_command_and_option(ctx):
    one_line_error(ctx.run("frobnicate"), 2, "unknown command")
    one_line_error(ctx.run("attach", "--frob", "1"), 2, "--frob")


def test_missing_privileges(ctx):
    target = subprocess.Popen([ctx.target("reads_target"), "time", "1", "0"])
    try:
        wait_serving(target)
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               ctx.clockprof, "attach", "-d", "1", str(target.pid)],
                              capture_output=True, text=True, timeout=30)
    finally:
        target.kill()
        target.wait()
    one_line_error(proc, 3, "root")


def test_run_reports_exit_status(ctx):
    out = os.path.join(ctx.tmp, "run.json")
    proc = ctx.run("run", "-o", out, "--", "sh", "-c", "exit 7")
    # The run is written and the summary printed, then clockprof exits with
    # the command's own status (a failing command is no good run).
    assert proc.returncode == 7, proc.stderr
    assert "exit code 7" in proc.stdout
    assert ctx.load_json(out)["target"]["exit_status"] == {"code": 7}


def test_hostile_names_never_reach_the_terminal(ctx):
    # The command's name (comm) is the target's to choose: an escape
    # sequence in it must not be printed raw.
    evil = os.path.join(ctx.tmp, "\x1b]0;pwn\x07\x1b[31mx")
    os.symlink(ctx.target("reads_target"), evil)
    proc = ctx.run("run", "-e", "none", "--", evil, "time", 1, 20)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout, repr(proc.stdout[:200])


def test_names_that_are_not_utf8_still_give_a_run_file(ctx):
    evil = os.path.join(ctx.tmp.encode(), b"h\xffx")
    os.symlink(ctx.target("reads_target"), evil)
    out = os.path.join(ctx.tmp, "run.json")
    proc = subprocess.run([ctx.clockprof.encode(), b"run", b"-q", b"-e", b"none", b"-o", out.encode(),
                           b"--", evil, b"time", b"1", b"10", b"arg\xfe"], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    target = ctx.load_json(out)["target"]
    # Each invalid byte is U+FFFD, as docs/run-json.md says ('?' before).
    assert target["comm"] == "h\ufffdx" and target["cmdline"][-1] == "arg\ufffd", target


def test_run_ends_the_command_with_sigterm(ctx):
    # The command never ends by itself. clockprof sends it SIGTERM when the
    # window ends and SIGKILL 2 s later: its exit status tells which ended
    # it, with no wall-clock bound (how long the whole command takes is a
    # figure of `make bench`).
    out = os.path.join(ctx.tmp, "run.json")
    try:
        proc = ctx.run("run", "-q", "-e", "none", "-d", "500ms", "-o", out, "--",
                       ctx.target("reads_target"), "time", 1, 0, timeout=60)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("clockprof run -d 500ms still running after 60 s: "
                             f"the command was not ended\n{e}") from None
    assert proc.returncode == 0, proc.stderr
    assert ctx.load_json(out)["target"]["exit_status"] == {"signal": "SIGTERM"}


def test_output_under_proc_checked_before_launch(ctx):
    # /proc takes no new file even for root: said before the command runs,
    # not after the whole window.
    unwritable_output_refused_before_launch(ctx, "/proc/clockprof-run.json",
                                            "/proc/clockprof-run.json")


def test_output_to_open_descriptor(ctx):
    # `-o >(gzip > x)` and /dev/stdout name an open pipe: written, not replaced.
    proc = ctx.run("run", "-q", "-e", "none", "-o", "/dev/stdout", "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert '"clockprof.run/1"' in proc.stdout, proc.stdout[:200]
    r, w = os.pipe()
    child = subprocess.Popen([ctx.clockprof, "run", "-q", "-e", "none", "-o", f"/dev/fd/{w}",
                              "--", "true"], pass_fds=(w,), stderr=subprocess.PIPE, text=True)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    assert child.wait(timeout=60) == 0, child.stderr.read()
    assert '"clockprof.run/1"' in data, data[:200]
