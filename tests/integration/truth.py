"""Reads the counts of tests/truth/clock_truth.c (the LD_PRELOAD ground
truth) from its shared file while the server runs: one slot per process,
64-bit counters, layout fixed by that file."""
import mmap
import os
import struct

MAGIC = 0x6874757274706300
CALLS = ("clock_gettime", "gettimeofday", "time", "syscall_clock",
         "write", "writev", "sendto", "sendmsg", "realtime", "monotonic")
READS = ("clock_gettime", "gettimeofday", "time", "syscall_clock")
HEADER = 4


class Snapshot:
    """Counts of one process at one moment; subtract two for a window."""

    def __init__(self, calls, requests, reads_in_requests, hist):
        self.calls, self.requests = calls, requests
        self.reads_in_requests, self.hist = reads_in_requests, hist

    def __sub__(self, other):
        return Snapshot({k: v - other.calls[k] for k, v in self.calls.items()},
                        self.requests - other.requests,
                        self.reads_in_requests - other.reads_in_requests,
                        [a - b for a, b in zip(self.hist, other.hist)])

    def __add__(self, other):
        return Snapshot({k: v + other.calls[k] for k, v in self.calls.items()},
                        self.requests + other.requests,
                        self.reads_in_requests + other.reads_in_requests,
                        [a + b for a, b in zip(self.hist, other.hist)])

    @property
    def reads(self):
        return sum(self.calls[k] for k in READS)

    @property
    def per_request(self):
        return self.reads_in_requests / self.requests if self.requests else None

    def histogram(self):
        """[[reads, requests], ...] like run.json's per_request.histogram."""
        return [[i, n] for i, n in enumerate(self.hist) if n]


def env(path, boundary):
    """Environment variables that load the truth library into a server."""
    return {"CLOCK_TRUTH_FILE": path, "CLOCK_TRUTH_BOUNDARY": boundary}


class Truth:
    def __init__(self, path):
        self.path = path
        self._map = None

    def _mapped(self):
        if self._map is None:
            with open(self.path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        magic, nslots, ncalls, nhist = struct.unpack_from("<4Q", self._map, 0)
        assert magic == MAGIC and ncalls == len(CALLS), "not a clock_truth file"
        return nslots, ncalls, nhist

    def ready(self):
        """The library is loaded and has claimed a slot."""
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            return False
        try:
            return bool(self.pids())
        except (AssertionError, ValueError, OSError):
            return False

    def _slots(self):
        nslots, ncalls, nhist = self._mapped()
        size = 1 + ncalls + 2 + nhist
        for i in range(nslots):
            off = 8 * (HEADER + i * size)
            vals = struct.unpack_from(f"<{size}Q", self._map, off)
            if vals[0]:
                yield vals, ncalls

    def pids(self):
        return [v[0] for v, _ in self._slots()]

    def reads_by_pid(self):
        """Reads per process, every slot of it summed: a process that
        exec()s claims a new slot in its new image."""
        out = {}
        for vals, ncalls in self._slots():
            calls = dict(zip(CALLS, vals[1:1 + ncalls]))
            out[vals[0]] = out.get(vals[0], 0) + sum(calls[k] for k in READS)
        return out

    def snapshot(self, pid):
        """The process's counts, every slot of it summed (a process that
        exec()s, or a child forked with the library loaded that exec()s
        a program loading it again, has one slot per image)."""
        total = None
        for vals, ncalls in self._slots():
            if vals[0] == pid:
                calls = dict(zip(CALLS, vals[1:1 + ncalls]))
                requests, in_req = vals[1 + ncalls], vals[2 + ncalls]
                one = Snapshot(calls, requests, in_req, list(vals[3 + ncalls:]))
                total = one if total is None else total + one
        if total is None:
            raise AssertionError(f"process {pid} has no slot in {self.path}")
        return total
