"""Waiting for readiness by polling the condition itself, never by a fixed
sleep: a fixed sleep is either too long on a fast host or too short on a
slow one (hosts of this kind differ 2-3x in speed). Each wait has a generous
timeout and fails saying what it was waiting for."""
import os
import time

TIMEOUT = 60  # s; only reached when something is broken


def wait_for(cond, what, timeout=TIMEOUT, interval=0.01):
    """Polls cond() until it returns a true value, which is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(interval)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def task_state(stat_path):
    """The state letter (R, S, T, ...) in a /proc .../stat file; "" when
    the task is gone."""
    stat = _read(stat_path)
    return stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else ""


def _alive(proc, what):
    if proc.poll() is not None:
        raise AssertionError(f"{what}: process {proc.pid} exited with {proc.returncode}")


def wait_serving(target, threads=1, timeout=TIMEOUT):
    """Waits until the reference target `target` (a Popen of reads_target)
    serves requests: libc is mapped (exec and the dynamic loader are done,
    so an attach finds everything it probes), it has `threads` threads, and
    its main thread is asleep (reads_target only sleeps in the nanosleep
    that paces its requests, or before starting its late threads)."""
    what = f"reads_target (pid {target.pid}) to serve with {threads} thread(s)"

    def ready():
        _alive(target, what)
        tasks = os.listdir(f"/proc/{target.pid}/task") if os.path.isdir(f"/proc/{target.pid}/task") else []
        return ("/libc.so.6" in _read(f"/proc/{target.pid}/maps") and
                len(tasks) >= threads and task_state(f"/proc/{target.pid}/stat") == "S")
    wait_for(ready, what, timeout)


def wait_attached(proc, timeout=TIMEOUT):
    """Waits until `clockprof attach` (a Popen) has its probes in place and
    its window open: it holds BPF programs, and the pidfd that watches the
    target, which it opens after attaching every probe, just before the
    window starts. Read from its own /proc/PID/fd, so another clockprof (or
    one that is still being torn down) cannot be mistaken for it."""
    what = f"clockprof attach (pid {proc.pid}) to have its probes live"

    def ready():
        if proc.poll() is not None:
            raise AssertionError(f"{what}: it exited with {proc.returncode}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        links = set()
        try:
            for fd in os.listdir(f"/proc/{proc.pid}/fd"):
                try:
                    links.add(os.readlink(f"/proc/{proc.pid}/fd/{fd}"))
                except OSError:
                    pass
        except OSError:
            return False
        return "anon_inode:bpf-prog" in links and "anon_inode:[pidfd]" in links
    wait_for(ready, what, timeout)


def _voluntary_switches(pid):
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return None


def wait_paced_requests(target, n, timeout=TIMEOUT):
    """Waits until a target that sleeps once per request (a nanosleep after
    each, as reads_target and the call-site targets pace themselves) has
    slept n more times than when called: n - 1 requests at least ran whole
    since then. For a window that must hold some requests before it is
    closed; a fixed sleep would hold none on a slow enough host."""
    what = f"target (pid {target.pid}) to serve {n} requests"
    start = _voluntary_switches(target.pid)

    def ready():
        _alive(target, what)
        now = _voluntary_switches(target.pid)
        return start is not None and now is not None and now - start >= n
    wait_for(ready, what, timeout)
