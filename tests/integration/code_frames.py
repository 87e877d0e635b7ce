"""Whether the frames of run.json's stacks are code of the target: every
frame of a stack must be in an executable mapping of the process (or the
stack is cut there), so a frame is checked against the process's
/proc/PID/maps, read while it runs. A frame named `0xADDRESS` (in no
mapped file) must be in an executable mapping; `FILE+0xOFFSET` (no symbol:
OFFSET is the file's own address, as its program headers give it) in an
executable segment of that file; a function's name is code by being one."""
import os
import re
import subprocess

HEX = re.compile(r"^0x([0-9a-f]+)$")
IN_FILE = re.compile(r"^(.+)\+0x([0-9a-f]+)$")


def read_maps(pid):
    """(executable ranges [(start, end)], {file name: path}) of pid now."""
    ranges, files = [], {}
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            if "x" in parts[1] and path != "[uprobes]":
                ranges.append((start, end))
            if path.startswith("/"):
                files[os.path.basename(path)] = path
    return ranges, files


def exec_segments(path):
    """The executable PT_LOAD segments of an ELF file, [(vaddr, end)]."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        # LOAD Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align
        if f and f[0] == "LOAD" and "E" in "".join(f[6:-1]):
            segs.append((int(f[2], 16), int(f[2], 16) + int(f[5], 16)))
    return segs


def frames_outside_code(run, maps):
    """The frames of run's stacks that are not the target's code, each
    with its stack."""
    ranges, files = maps
    segments = {}
    bad = []
    for st in run["stacks"]:
        for frame in st["frames"]:
            m = HEX.match(frame)
            if m and not any(s <= int(m.group(1), 16) < e for s, e in ranges):
                bad.append((frame, st["frames"]))
                continue
            m = IN_FILE.match(frame)
            if m and m.group(1) in files:
                if m.group(1) not in segments:
                    segments[m.group(1)] = exec_segments(files[m.group(1)])
                off = int(m.group(2), 16)
                if not any(s <= off < e for s, e in segments[m.group(1)]):
                    bad.append((frame, st["frames"]))
    return bad
