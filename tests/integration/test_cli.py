"""The command line as a user of perf or bpftrace expects it: -p PID and
options after the PID, --version and help on every subcommand, the common
options (-q, -v, --color) and option errors worded alike everywhere, stdout
that carries only the output asked for, the summary's wording, and the man
page and bash completion, which are made from the same option tables as
--help (checked here against --help, not against the tables)."""
import json
import os
import re
import shutil
import subprocess

from common import Skip
from readiness import wait_serving

SUBCOMMANDS = ["attach", "run", "ab", "compare", "report"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def help_options(ctx, sub):
    """The long and short options that `clockprof SUB --help` lists."""
    proc = ctx.run(sub, "--help", check=True)
    opts = set()
    for line in proc.stdout.splitlines():
        m = re.match(r"^  (?:(-\w), )?\s*(--[\w-]+)", line)
        if m:
            opts.update(o for o in m.groups() if o)
    assert "--help" in opts and len(opts) > 6, proc.stdout
    return opts


def start_target(ctx):
    target = subprocess.Popen([ctx.target("reads_target"), "time", "1", "0"])
    wait_serving(target)
    return target


def stop(target):
    target.kill()
    target.wait()


def test_attach_takes_pid_option_and_options_after_the_pid(ctx):
    target = start_target(ctx)
    try:
        for args in (["-p", target.pid, "-d", "300ms"], [target.pid, "-d", "300ms"],
                     ["--pid", target.pid, "-d", "300ms"]):
            out = os.path.join(ctx.tmp, "run.json")
            proc = ctx.run("attach", *args, "-q", "-e", "none", "-o", out, timeout=60)
            assert proc.returncode == 0, (args, proc.stderr)
            assert ctx.load_json(out)["target"]["pid"] == target.pid, args
        proc = ctx.run("attach", "-p", target.pid, target.pid)
        assert proc.returncode == 2 and "one PID" in proc.stderr, proc.stderr
    finally:
        stop(target)


def test_verbose_says_when_counting_begins(ctx):
    # -v: one line the moment the probes are live, with run.json's
    # probe.attach_s; -q and no -v: none (make bench times it from spawn).
    target = start_target(ctx)
    out = os.path.join(ctx.tmp, "run.json")
    try:
        proc = ctx.run("attach", "-v", "-d", "300ms", "-e", "none", "-o", out, target.pid, timeout=60)
        assert proc.returncode == 0, proc.stderr
        lines = [l for l in proc.stderr.splitlines() if "probes live" in l]
        assert len(lines) == 1, proc.stderr
        m = re.fullmatch(r"clockprof: probes live (\d+\.\d) ms after start \((\w+)\): counting", lines[0])
        assert m, lines[0]
        run = ctx.load_json(out)
        assert abs(float(m.group(1)) - run["probe"]["attach_s"] * 1000) <= 0.05, (lines[0], run["probe"])
        assert m.group(2) == run["clock_reads"]["mechanism"]
        for quiet in (["-q"], []):
            proc = ctx.run("attach", *quiet, "-d", "300ms", "-e", "none", "-o", out, target.pid, timeout=60)
            assert proc.returncode == 0 and "probes live" not in proc.stderr, proc.stderr
    finally:
        stop(target)


def test_version_and_help_on_every_subcommand(ctx):
    version = ctx.run("--version", check=True).stdout
    assert re.match(r"^clockprof \S+\n$", version), version
    for sub in SUBCOMMANDS:
        proc = ctx.run(sub, "--version")
        assert proc.returncode == 0 and proc.stdout == version and not proc.stderr, sub
        helped = ctx.run("help", sub)
        assert helped.returncode == 0, helped.stderr
        assert helped.stdout == ctx.run(sub, "--help").stdout == ctx.run(sub, "-h").stdout, sub
        assert helped.stdout.startswith(f"usage: clockprof {sub} "), helped.stdout[:80]
    proc = ctx.run("help", "frobnicate")
    assert proc.returncode == 2 and "unknown command 'frobnicate'" in proc.stderr


def test_mistyped_commands_and_long_options_get_the_closest_names(ctx):
    proc = ctx.run("atach", "1")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("clockprof: unknown command 'atach'; did you mean attach? "
                           "(run 'clockprof --help' for the list)\n"), proc.stderr
    proc = ctx.run("help", "comapre")
    assert proc.returncode == 2 and "did you mean compare?" in proc.stderr, proc.stderr
    for sub in ("run", "attach", "ab"):
        proc = ctx.run(sub, "--duraton", "3")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (f"clockprof: unknown option '--duraton'; did you mean "
                               f"--duration? (see 'clockprof {sub} --help')\n"), proc.stderr
    proc = ctx.run("compare", "--bounsd=x")
    assert proc.returncode == 2 and "did you mean --bounds?" in proc.stderr, proc.stderr


def test_help_help_and_run_help_tell_the_exit_codes_run_returns(ctx):
    for args in (["help", "--help"], ["help", "-h"], ["help"]):
        proc = ctx.run(*args)
        assert proc.returncode == 0 and not proc.stderr, (args, proc.stderr)
        assert proc.stdout == ctx.run("--help").stdout, args
    text = " ".join(ctx.run("run", "--help", check=True).stdout.split())
    assert "whatever the command's own exit status" not in text, text
    assert "the command's own status (its exit code, or 128 + the signal that killed it) " \
           "when it failed by itself" in text, text
    ab = " ".join(ctx.run("ab", "--help", check=True).stdout.split())
    assert "a command's own status when it failed by itself" in ab, ab


def test_a_single_valued_option_given_twice_is_refused(ctx):
    out = [os.path.join(ctx.tmp, f"twice-{i}.json") for i in (1, 2)]
    cases = [("run", "-o", out[0], "-o", out[1], "--", "true"),
             ("run", "-d", "1", "--duration=2", "--", "true"),
             ("attach", "--html", out[0], "--html", out[1], "1"),
             ("compare", "-o", out[0], "--output", out[1], "--base", out[0], "--head", out[1]),
             ("report", "-o", out[0], "-o", out[1], out[0])]
    for args in cases:
        proc = ctx.run(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and "given twice; give it once" in proc.stderr, \
            (args, proc.stderr)
        assert not any(os.path.exists(p) for p in out), args


def test_ab_help_lists_its_options_and_compare_help_its_defaults(ctx):
    ab = help_options(ctx, "ab")
    assert {"-d", "--duration", "-r", "--request", "-e", "--events", "--mechanism",
            "--probe", "--ops", "--stacks"} <= ab, ab
    text = ctx.run("compare", "--help", check=True).stdout
    assert "++" not in text, text
    assert "allow +0 and sampled measures +5%" in " ".join(text.split()), text


def test_common_options_are_worded_alike_everywhere(ctx):
    common = None
    for sub in SUBCOMMANDS:
        text = ctx.run(sub, "--help", check=True).stdout
        block = text[text.index("Common options:"):].split("\n\n")[0]
        for opt in ("-q, --quiet", "-v, --verbose", "--color=WHEN", "--version"):
            assert opt in block, (sub, block)
        assert common in (None, block), f"{sub}'s common options differ:\n{block}\n{common}"
        common = block
        proc = ctx.run(sub, "--frobnicate")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == \
            f"clockprof: unknown option '--frobnicate'; see 'clockprof {sub} --help'\n"
        proc = ctx.run(sub, "--color=sometimes")
        assert proc.returncode == 2
        assert proc.stderr == "clockprof: --color must be auto, always or never, not 'sometimes'\n"


def test_option_errors_say_what_is_wrong(ctx):
    proc = ctx.run("run", "-d")
    assert proc.returncode == 2
    assert proc.stderr == ("clockprof: option -d/--duration needs a value (TIME); "
                           "see 'clockprof run --help'\n"), proc.stderr
    proc = ctx.run("attach", "-p")
    assert "needs a value (PID[,PID...])" in proc.stderr, proc.stderr
    proc = ctx.run("run", "--quiet=yes", "--", "true")
    assert proc.returncode == 2 and "takes no value" in proc.stderr, proc.stderr
    bounds = os.path.join(ctx.tmp, "missing")
    proc = ctx.run("compare", "--bounds", bounds, "--base", bounds, "--head", bounds)
    assert proc.returncode == 2 and "Success" not in proc.stderr, proc.stderr
    assert "No such file or directory" in proc.stderr, proc.stderr
    proc = ctx.run("run", "-r", "syscall:nosuch", "--", "true")
    assert proc.returncode == 2 and "unknown syscall 'nosuch'" in proc.stderr
    assert "did you mean" not in proc.stderr, proc.stderr
    proc = ctx.run("run", "-e", "sched:sched_switch", "--", "true")
    assert proc.returncode == 2 and "tracepoint" in proc.stderr, proc.stderr
    assert 'unknown event "sched"' not in proc.stderr, proc.stderr


def test_attach_refused_as_root_gives_the_true_reason(ctx):
    if os.geteuid() != 0:
        raise Skip("needs root: the message under test is root's")
    # Any process this root may not inspect: on a container host often
    # pid 1 (more capabilities than ours). Where root may inspect all,
    # there is no refusal to word.
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            os.readlink(f"/proc/{pid}/exe")
        except PermissionError:
            break
        except OSError:
            continue
    else:
        raise Skip("root may inspect every process here")
    proc = ctx.run("attach", "-d", "1", pid)
    assert proc.returncode == 3, proc.stderr
    assert "run as root" not in proc.stderr and "even as root" in proc.stderr, proc.stderr


def test_run_output_on_stdout_is_only_json(ctx):
    proc = ctx.run("run", "-e", "none", "-o", "-", "--", "sh", "-c", "echo HELLO")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["schema"] == "clockprof.run/1"
    assert "HELLO" in proc.stderr and "clockprof: sh (pid" in proc.stderr, proc.stderr
    # The same with exact counts: 3 requests of 1 read each.
    proc = ctx.run("run", "-q", "-e", "none", "-o", "-", "--",
                   ctx.target("reads_target"), "time", 1, 3)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["clock_reads"]["total"] == 3


def test_folded_on_stdout_is_not_mixed_with_the_summary(ctx):
    proc = ctx.run("run", "-e", "none", "--folded", "-", "--",
                   ctx.target("reads_target"), "time", 1, 3)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines and all(re.match(r"^\S.* \d+$", line) for line in lines), proc.stdout
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == 3, proc.stdout
    assert "clock reads" in proc.stderr, proc.stderr
    proc = ctx.run("run", "-o", "-", "--folded", "-", "--", "true")
    assert proc.returncode == 2 and "only one output" in proc.stderr, proc.stderr


def test_summary_names_the_program_and_aligns(ctx):
    # The kernel keeps 15 characters of the name (comm); the summary
    # gives the executable's whole name.
    exe = os.path.join(ctx.tmp, "a_long_program_name_target")
    os.symlink(ctx.target("reads_target"), exe)
    proc = ctx.run("run", "-r", "func:handle_request", "-e",
                   "task-clock,context-switches,page-faults", "--", exe, "time", 2, 20)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("clockprof: a_long_program_name_target (pid "), proc.stdout
    assert not re.search(r"\de[+-]\d", proc.stdout), proc.stdout
    reads = proc.stdout.split("\nclock reads")[1].split("\n\n")[0]
    rows = [line for line in reads.splitlines() if line.endswith("/op")]
    assert len(rows) >= 3 and len({line.index("/op") for line in rows}) == 1, reads
    counters = proc.stdout.split("\ncounters (")[1].splitlines()[1:4]
    assert len({line.rindex("/op") for line in counters}) == 1, "\n".join(counters)


def test_summary_says_clockprof_ended_the_command(ctx):
    proc = ctx.run("run", "-e", "none", "-d", "300ms", "--",
                   ctx.target("reads_target"), "time", 1, 0, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "command ended: ended by clockprof (SIGTERM)" in proc.stdout, proc.stdout
    proc = ctx.run("run", "-e", "none", "--", "sh", "-c", "kill -TERM $$")
    assert "command ended: killed by SIGTERM" in proc.stdout, proc.stdout


def test_a_cut_command_line_says_so(ctx):
    # 1,503 arguments of ~950 bytes: run.json keeps whole arguments up to
    # 64 KiB (69 of them) and says it cut them and how many there were, as
    # the summary and the report do; it kept 69 without a word before.
    args = ["x" * 950 + str(i) for i in range(1502)]
    out, html = os.path.join(ctx.tmp, "run.json"), os.path.join(ctx.tmp, "r.html")
    proc = ctx.run("run", "-e", "none", "-o", out, "--html", html, "--", "true", *args)
    assert proc.returncode == 0, proc.stderr
    target = ctx.load_json(out)["target"]
    kept = 0
    while sum(len(a) + 1 for a in (["true"] + args)[:kept + 1]) <= 65536:
        kept += 1
    assert kept == 69
    assert target["cmdline"] == (["true"] + args)[:kept]
    assert target["argc"] == 1503 and target["cmdline_truncated"] is True, target["argc"]
    assert "command line cut: run.json keeps the first 69 of its 1503 arguments" in proc.stdout
    with open(html) as f:
        assert "cut: the first 69 of 1,503 arguments" in f.read()
    # A whole command line is not marked.
    proc = ctx.run("run", "-e", "none", "-o", out, "--", "true", "a", "b")
    target = ctx.load_json(out)["target"]
    assert target["cmdline"] == ["true", "a", "b"] and target["argc"] == 3
    assert target["cmdline_truncated"] is False and "cut" not in proc.stdout


def man_page(ctx):
    path = os.path.join(ctx.tmp, "clockprof.1")
    with open(path, "w") as f:
        f.write(ctx.run("--man", check=True).stdout)
    return path


def test_man_page_renders_without_warnings_and_lists_every_option(ctx):
    if not shutil.which("groff") or not shutil.which("man"):
        raise Skip("groff or man missing (make test-deps installs groff-base and man-db)")
    path = man_page(ctx)
    proc = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", path],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    proc = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True,
                          env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="",
                                   MANPAGER="cat", PAGER="cat"))
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    text = re.sub(r".\x08", "", proc.stdout).replace("\u2010", "-")
    for sub in SUBCOMMANDS:
        assert f"clockprof {sub}" in text, sub
        section = text.split(f"   clockprof {sub}\n", 1)[1]
        for opt in help_options(ctx, sub) - {"-q", "--quiet", "-v", "--verbose", "--color",
                                             "-h", "--help", "--version"}:
            assert re.search(rf"(^|[\s,]){re.escape(opt)}\b", section), (sub, opt)
    common = text.split("COMMON OPTIONS", 1)[1]
    for opt in ("--quiet", "--verbose", "--color=WHEN", "--help", "--version"):
        assert opt in common, opt


def test_man_page_description_names_every_mechanism(ctx):
    # It named only uprobes and breakpoints, not the default: the patch,
    # which counts inside the target with no trap.
    roff = ctx.run("--man", check=True).stdout
    text = roff.split(".SH DESCRIPTION\n", 1)[1].split(".SH COMMANDS", 1)[0]
    text = " ".join(text.replace("\\-", "-").replace(".PP\n", "").split())
    assert "By default (--mechanism auto) the reads are counted inside the target: " \
           "its vDSO is patched to count each read in the process itself, with no trap " \
           "(the patch mechanism)." in text, text
    assert "eBPF programs count them on uprobes (every host) or on hardware breakpoints" \
           in text, text
    assert "with eBPF uprobes or hardware breakpoints" not in text, text


def complete(ctx, script, *words, at=None):
    """What bash completion offers for `clockprof WORDS...`, the word at
    index `at` of WORDS (default: the last) being completed. The first word
    is the binary under test, which the script calls for the names it
    cannot know (-r's functions, syscalls)."""
    words = [os.path.abspath(ctx.clockprof), *map(str, words)]
    cword = len(words) - 1 if at is None else at + 1
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    prog = (f"source '{script}'; COMP_WORDS=({quoted}); COMP_CWORD={cword}; "
            "_clockprof; printf '%s\\n' \"${COMPREPLY[@]}\"")
    proc = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=ctx.tmp)
    assert proc.returncode == 0, proc.stderr
    return set(filter(None, proc.stdout.splitlines()))


def completion_script(ctx):
    path = os.path.join(ctx.tmp, "clockprof.bash")
    with open(path, "w") as f:
        f.write(ctx.run("--completion", "bash", check=True).stdout)
    return path


def test_completion_offers_every_option_of_every_subcommand(ctx):
    script = completion_script(ctx)
    assert set(SUBCOMMANDS) <= complete(ctx, script, "")
    assert complete(ctx, script, "help", "co") == {"compare"}
    for sub in SUBCOMMANDS:
        offered = {o.rstrip("=") for o in complete(ctx, script, sub, "-")}
        assert offered == help_options(ctx, sub), (sub, offered ^ help_options(ctx, sub))


def test_completion_offers_values_pids_files_and_commands(ctx):
    script = completion_script(ctx)
    assert str(os.getpid()) in complete(ctx, script, "attach", "-p", "")
    assert str(os.getpid()) in complete(ctx, script, "attach", "")
    open(os.path.join(ctx.tmp, "base-1.json"), "w").close()
    assert "base-1.json" in complete(ctx, script, "compare", "--base", "bas")
    assert "base-1.json" in complete(ctx, script, "run", "-o", "bas")
    assert complete(ctx, script, "compare", "--color", "=", "al") == {"always"}
    assert complete(ctx, script, "run", "--mechanism", "") == {"auto", "patch", "uprobe", "breakpoint"}
    assert "sh" in complete(ctx, script, "run", "-d", "1", "--", "sh")
    assert complete(ctx, script, "run", "-d", "") == set()


def test_completion_offers_request_boundaries_functions_and_syscalls(ctx):
    script = completion_script(ctx)
    target = os.path.abspath(ctx.target("callsites_target"))  # complete() runs in ctx.tmp
    assert complete(ctx, script, "run", "-r", "") == {"func:", "syscall:"}
    assert complete(ctx, script, "attach", "--request", "sys") == {"syscall:"}
    assert complete(ctx, script, "run", "-r", "syscall:sendm") == \
        {"syscall:sendmsg", "syscall:sendmmsg"}
    # The command's functions once it is on the line, before or after -r.
    assert complete(ctx, script, "run", "-r", "func:handle_req", "--", target, at=2) == \
        {"func:handle_request"}
    assert "func:main" in complete(ctx, script, "run", "-r", "func:ma", "--", target, at=2)
    assert complete(ctx, script, "run", "-r", "func:handle_req") == set()  # no command yet
    # bash splits "func:NAME" at ':' (COMP_WORDBREAKS): only NAME is completed.
    assert complete(ctx, script, "run", "-d", "1", "-r", "func", ":", "handle_req", "--",
                    target, at=6) == {"handle_request"}
    assert complete(ctx, script, "ab", "3", "d", "-r", "syscall", ":", "sendm") == \
        {"sendmsg", "sendmmsg"}
    # attach: the PID's executable.
    proc = subprocess.Popen([target, "0", "100"], stdout=subprocess.DEVNULL)
    try:
        assert complete(ctx, script, "attach", "-d", "1", "-r", "func:handle_req", proc.pid,
                        at=4) == {"func:handle_request"}
        assert complete(ctx, script, "attach", "-p", proc.pid, "-r", "func:handle_req") == \
            {"func:handle_request"}
    finally:
        proc.kill()
        proc.wait()


def test_completion_names_are_never_expanded_by_the_shell(ctx):
    # A symbol name is the target's to choose: "`touch ...`" must come back
    # as text, never run (compgen -W would run it).
    src = os.path.join(ctx.tmp, "hostile.c")
    exe = os.path.join(ctx.tmp, "hostile")
    mark = os.path.join(ctx.tmp, "ran")
    with open(src, "w") as f:
        f.write("void victim(void) {}\nint main(void) { victim(); return 0; }\n")
    subprocess.run(["cc", "-o", exe, src], check=True)
    subprocess.run(["objcopy", f"--redefine-sym=victim=`touch {mark}`x", exe], check=True)
    script = completion_script(ctx)
    offered = complete(ctx, script, "run", "-r", "func:`", "--", exe, at=2)
    assert offered == {f"func:`touch {mark}`x"}, offered
    assert not os.path.exists(mark)


def test_make_demo_builds_only_what_it_runs_in_parallel_and_quietly(ctx):
    # A dry run into an empty build directory lists every command a clean
    # `make demo` would run: clockprof and the demo's target, not the Go,
    # Rust or Java test targets; -j, and -s unless V=1.
    build = os.path.join(ctx.tmp, "demo-build")
    dry = subprocess.run(["make", "-n", "demo", f"O={build}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    for other in ("go build", "rustc", "javac", "go_target", "rust_target"):
        assert other not in dry.stdout, other
    assert "callsites_target" in dry.stdout and "clockreads.bpf.o" in dry.stdout, dry.stdout[-2000:]
    sub = [line for line in dry.stdout.splitlines() if " deps clockprof " in line]
    assert sub and " -s " in sub[0] and re.search(r" -j\d+ ", sub[0]), sub
    loud = subprocess.run(["make", "-n", "demo", f"O={build}", "V=1"], cwd=ROOT,
                          capture_output=True, text=True).stdout
    assert [line for line in loud.splitlines() if " deps clockprof " in line and " -s " not in line]
    assert not os.path.exists(build)


def test_make_install_and_uninstall(ctx):
    dest = os.path.join(ctx.tmp, "dest")
    dry = subprocess.run(["make", "-n", "install", f"DESTDIR={dest}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert dry.returncode == 0 and "apt-get" not in dry.stdout, dry.stdout + dry.stderr
    proc = subprocess.run(["make", "-s", "install", f"DESTDIR={dest}", "PREFIX=/usr"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    files = ["usr/bin/clockprof", "usr/share/man/man1/clockprof.1",
             "usr/share/bash-completion/completions/clockprof"]
    for f in files:
        assert os.path.isfile(os.path.join(dest, f)), f
    with open(os.path.join(dest, files[1])) as f:
        assert f.read() == ctx.run("--man").stdout
    proc = subprocess.run(["make", "-s", "uninstall", f"DESTDIR={dest}", "PREFIX=/usr"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not any(os.path.exists(os.path.join(dest, f)) for f in files)
