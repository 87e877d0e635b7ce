"""What a clockprof that did not end was doing, taken before it is killed.

A hang seen once in a loaded CI run cannot be studied after the harness
has killed it: by then nothing says where it waited. This takes, for the
process and each one descended from it, every thread's state, wait channel
and kernel stack, and for clockprof itself each thread's user stack (gdb,
where the machine has it), so the failure's own text says where it hung."""
import os
import shutil
import signal
import subprocess

from common import tree


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError as e:
        return f"({e.strerror})"


def _threads(pid):
    """One block per thread of pid: its name, state, wait channel and
    kernel stack."""
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:
        return [f"  (process {pid} has gone)"]
    out = []
    for tid in tids:
        task = f"/proc/{pid}/task/{tid}"
        status = _read(f"{task}/status").splitlines()
        state = next((line.split(":", 1)[1].strip() for line in status
                      if line.startswith("State:")), "?")
        out.append(f"  thread {tid} {_read(f'{task}/comm')} {state} "
                   f"wchan {_read(f'{task}/wchan')}")
        out += ["    " + line for line in _read(f"{task}/stack").splitlines()]
    return out


def _user_stacks(pid):
    if not shutil.which("gdb"):
        return ["  (no gdb here: no user stacks)"]
    try:
        proc = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex",
                               "thread apply all bt"], capture_output=True, text=True,
                              errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        return ["  (gdb did not end in 60 s)"]
    return ["  " + line for line in proc.stdout.splitlines() if line.startswith(("Thread", "#"))]


def hang_report(pid):
    """The text: each process of pid's tree, its threads, then pid's user
    stacks."""
    out = []
    for p in tree(pid):
        argv = _read(f"/proc/{p}/cmdline").replace("\0", " ").split()
        out.append(f"process {p} ({' '.join(argv)})")
        out += _threads(p)
    out.append(f"user stacks of {pid}:")
    return "\n".join(out + _user_stacks(pid))


class Hung(subprocess.TimeoutExpired):
    """A timeout whose text carries the hang report (its output)."""

    def __str__(self):
        return f"{super().__str__()}\n{self.output}"


def report_and_end(proc):
    """The hang report of a Popen that did not end; then it and every
    process below it killed (a command `run` launched holds its pipes
    open) and it reaped."""
    try:
        report = hang_report(proc.pid)
    except Exception as e:  # the kill must come whatever the report did
        report = f"(no report: {e!r})"
    end(proc)
    return report


def end(proc):
    """proc and every process below it killed, proc reaped."""
    for p in reversed(tree(proc.pid)):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    proc.wait()
