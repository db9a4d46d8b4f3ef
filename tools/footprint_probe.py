#!/usr/bin/python3
"""What a process maps and how much memory it takes, read from the kernel (for tools/footprint.sh).

  footprint_probe.py exit-maps CMD...          the shared objects mapped when CMD exits
  footprint_probe.py time RUNS CMD...          median wall time and peak RSS over RUNS runs
  footprint_probe.py watch SECONDS CMD...      maps read while CMD runs, its peak RSS, its RSS
                                               at SECONDS (then SIGTERM; 0 = let it end)
  footprint_probe.py check CMD...              exit 1 when CMD maps a forbidden library (or
                                               fails, or ends before its maps were read)
  footprint_probe.py forbidden                 the forbidden libraries' patterns, one a line

Each prints `key=value` lines for the shell to read. How each figure is taken:

- exit-maps: CMD runs under ptrace with PTRACE_O_TRACEEXIT, so the kernel stops it at its exit,
  after main returned and before its address space is torn down; /proc/PID/maps is read there.
  Every object the loader mapped at start and every one dlopen()ed later is in it. Nothing else
  is traced (no system call stops), so the run is the ordinary one.
- Shared objects are the distinct mapped files whose name has ".so" as a word of it (libc.so.6,
  ld-linux-x86-64.so.2, plugin .so files); the program itself, locale data and [vdso] are not.
- peak RSS is the kernel's ru_maxrss for the child (wait4), its high-water mark over its whole
  life, exact and read after it ended; RSS at a moment is VmRSS of /proc/PID/status.
- wall time is from posix_spawn to wait4's return, so it counts exec and the dynamic loader,
  as a user starting the program sees it.
"""

import ctypes
import os
import re
import signal
import statistics
import sys
import time

PTRACE_TRACEME = 0
PTRACE_CONT = 7
PTRACE_SETOPTIONS = 0x4200
PTRACE_O_TRACEEXIT = 0x40
PTRACE_EVENT_EXIT = 6

SHARED_OBJECT = re.compile(r"\.so(\.|$)")

# Libraries a headless run must never map: the windowing toolkits, GDAL, FFmpeg's codecs and
# OpenCV's modules beyond core and imgproc (docs/running.md, issue 40). The one list: the CTest
# check (tests/footprint_maps_test.sh) and this script read it from here.
FORBIDDEN = [
    ("Qt", r"/libQt[0-9]"),
    ("X11", r"/libX11(-xcb)?\.so"),
    ("libxcb", r"/libxcb"),
    ("GDAL", r"/libgdal\.so"),
    ("libavcodec", r"/libavcodec\.so"),
    ("opencv_highgui", r"/libopencv_highgui\.so"),
    ("opencv_videoio", r"/libopencv_videoio\.so"),
    ("opencv_imgcodecs", r"/libopencv_imgcodecs\.so"),
    ("opencv_dnn", r"/libopencv_dnn\.so"),
    # MQTT telemetry's client: the mqtt plugin maps it, for runs with `mqtt:` only (docs/mqtt.md).
    ("libmosquitto", r"/libmosquitto\.so"),
]


def mapped_files(pid):
    """The distinct file paths mapped into process `pid` (an empty set once it is gone)."""
    files = set()
    try:
        with open(f"/proc/{pid}/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6 and fields[5].startswith("/"):
                    files.add(fields[5].rstrip("\n").removesuffix(" (deleted)"))
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return files


def shared_objects(files):
    return sorted(f for f in files if SHARED_OBJECT.search(os.path.basename(f)))


def forbidden_in(files):
    """`name: path` for each mapped file that matches a forbidden pattern."""
    found = []
    for path in sorted(files):
        for name, pattern in FORBIDDEN:
            if re.search(pattern, path):
                found.append(f"{name}: {path}")
    return found


def vm_rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


def exit_code(status):
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else -1


def exit_maps(cmd):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    libc.ptrace.restype = ctypes.c_long
    pid = os.fork()
    if pid == 0:
        try:
            if libc.ptrace(PTRACE_TRACEME, 0, None, None) != 0:
                os._exit(125)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)  # stopped at exec (SIGTRAP)
    if not os.WIFSTOPPED(status):
        sys.exit(f"exit-maps: {cmd[0]} did not start under ptrace (status {status:#x})")
    if libc.ptrace(PTRACE_SETOPTIONS, pid, None, PTRACE_O_TRACEEXIT) != 0:
        sys.exit(f"exit-maps: ptrace refused: {os.strerror(ctypes.get_errno())}")
    libc.ptrace(PTRACE_CONT, pid, None, None)
    files = set()
    while True:
        _, status = os.waitpid(pid, 0)
        if not os.WIFSTOPPED(status):
            break
        if status >> 8 == (signal.SIGTRAP | (PTRACE_EVENT_EXIT << 8)):
            files = mapped_files(pid)
            libc.ptrace(PTRACE_CONT, pid, None, None)
            continue
        # Any other stop is a signal on its way to the program: deliver it as it was sent.
        libc.ptrace(PTRACE_CONT, pid, None, os.WSTOPSIG(status))
    objects = shared_objects(files)
    print(f"exit_code={exit_code(status)}")
    print(f"shared_objects={len(objects)}")
    for path in objects:
        print(f"object={path}")
    for hit in forbidden_in(files):
        print(f"forbidden={hit}")


def spawn(cmd, quiet):
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1)] if quiet else []
    try:
        return os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions)
    finally:
        os.close(devnull)


def time_runs(runs, cmd):
    walls, peaks = [], []
    code = 0
    for _ in range(runs):
        start = time.perf_counter_ns()
        pid = spawn(cmd, True)
        _, status, usage = os.wait4(pid, 0)
        walls.append((time.perf_counter_ns() - start) / 1e6)
        peaks.append(usage.ru_maxrss / 1024.0)
        code = code or exit_code(status)
    print(f"exit_code={code}")
    print(f"runs={runs}")
    print(f"wall_ms_median={statistics.median(walls):.2f}")
    print(f"wall_ms_min={min(walls):.2f}")
    print(f"wall_ms_max={max(walls):.2f}")
    print(f"peak_rss_mb_median={statistics.median(peaks):.1f}")
    print(f"peak_rss_mb_max={max(peaks):.1f}")


class Watched:
    """A run of CMD whose maps were read every 100 ms while it ran (the union of what was seen)."""

    def __init__(self, seconds, cmd):
        pid = spawn(cmd, True)
        start = time.monotonic()
        self.files, self.rss_at, self.reads = set(), None, 0
        while True:
            done, self.status, self.usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            seen = mapped_files(pid)
            self.reads += 1 if seen else 0
            self.files |= seen
            if seconds > 0 and self.rss_at is None and time.monotonic() - start >= seconds:
                self.rss_at = vm_rss_mb(pid)
                os.kill(pid, signal.SIGTERM)
            time.sleep(0.1)
        self.seconds = time.monotonic() - start
        self.code = exit_code(self.status)


def watch(seconds, cmd):
    w = Watched(seconds, cmd)
    status, usage, rss_at, files = w.status, w.usage, w.rss_at, w.files
    objects = shared_objects(files)
    print(f"exit_code={exit_code(status)}")
    print(f"seconds={w.seconds:.1f}")
    print(f"maps_reads={w.reads}")
    print(f"peak_rss_mb={usage.ru_maxrss / 1024.0:.1f}")
    if rss_at is not None:
        print(f"rss_mb_at_end={rss_at:.1f}")
    print(f"shared_objects={len(objects)}")
    for hit in forbidden_in(files):
        print(f"forbidden={hit}")


def check(cmd):
    w = Watched(0, cmd)
    hits = forbidden_in(w.files)
    for hit in hits:
        print(f"forbidden library mapped: {hit}")
    if w.code != 0:
        print(f"{cmd[0]} failed (exit status {w.code})")
    if w.reads == 0:
        print(f"{cmd[0]} ended before its maps could be read: run it for longer")
    if hits or w.code != 0 or w.reads == 0:
        sys.exit(1)
    print(f"no forbidden library in {w.reads} readings of the maps "
          f"({len(shared_objects(w.files))} shared objects mapped)")


def main(argv):
    if len(argv) >= 2 and argv[0] == "exit-maps":
        exit_maps(argv[1:])
    elif len(argv) >= 3 and argv[0] == "time":
        time_runs(int(argv[1]), argv[2:])
    elif len(argv) >= 3 and argv[0] == "watch":
        watch(float(argv[1]), argv[2:])
    elif len(argv) >= 2 and argv[0] == "check":
        check(argv[1:])
    elif argv == ["forbidden"]:
        for name, pattern in FORBIDDEN:
            print(f"{name}\t{pattern}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
