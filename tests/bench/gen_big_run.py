#!/usr/bin/env python3
"""Writes a huge but valid clockprof.run/1 file, for measuring compare and
report on it (memory and time must stay linear in its size; issue 12):

    python3 tests/bench/gen_big_run.py OUT.json [MEASURES] [SEED]

Default 1,100,000 measures (~93 MB), alternating exact and sampled, with
names long enough to look like call-site measures. Deterministic per seed."""
import json
import random
import sys


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_100_000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    head = {
        "schema": "clockprof.run/1",
        "tool": {"name": "clockprof", "version": "0.1.0"},
        "complete": True, "end_reason": "duration", "duration_s": 2.0,
        "started_at": "2026-11-29T21:00:00Z",
        "target": {"pid": 42, "comm": "srv", "exe": "/usr/bin/srv",
                   "build_id": "b1", "cmdline": ["srv"]},
        "host": {"kernel": "6.1.0", "cpu": "test cpu", "clocksource": "tsc",
                 "pmu": False, "tool_version": "0.1.0"},
        "request": None, "ops": 100,
        "clock_reads": {"total": 300},
    }
    with open(out, "w") as f:
        f.write(json.dumps(head)[:-1])
        f.write(', "measures": {')
        for i in range(n):
            exact = i % 2 == 0
            value = rng.randint(0, 9) if exact else round(rng.uniform(10, 20), 3)
            f.write('%s"fn_%07d/op": {"value": %s, "unit": "%s", "kind": "%s", '
                    '"better": "lower"}' % ("," if i else "", i, value,
                                            "reads/op" if exact else "ns/op",
                                            "exact" if exact else "sampled"))
        f.write("}}\n")


if __name__ == "__main__":
    main()
