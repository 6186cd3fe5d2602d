#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""coredumpctl info and debug with DEBUGINFOD_URLS: a stripped program's crash, whose stored trace
has addresses only, named again from an elfutils debuginfod on this machine that serves the
program's separate debug file. Unset: the stored trace and a note to set it; a closed port:
the stored trace and a note. A program file root did not write is not read, nor a FIFO its
.gnu_debuglink names. debuginfod has no option for its listen address: it listens on every address of its port
for the few seconds of a case; the test only ever connects to 127.0.0.1."""
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

from cdtest import (Env, _restore, check, coredumpctl, crash, ctl_command, read_exports, run_cases, skip, terminate,
                    wait_until)

DEBUGINFOD = "/usr/bin/debuginfod"
FUNCS = ["dbgi_crash_inner", "dbgi_crash_middle", "dbgi_crash_outer"]
# three calls deep, then a write through NULL; nothing inlined, nothing exported
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void dbgi_crash_inner(volatile int *p) { *p = 42; }
__attribute__((noinline)) static void dbgi_crash_middle(volatile int *p) { dbgi_crash_inner(p); puts(""); }
__attribute__((noinline)) static void dbgi_crash_outer(volatile int *p) { dbgi_crash_middle(p); puts(""); }

int main(int argc, char **argv) {
        dbgi_crash_outer(argc > 100 ? malloc(sizeof(int)) : NULL);
        return 0;
}
"""
SCAN_TIMEOUT = 60  # seconds for debuginfod to index the debug file
FRAME = re.compile(r"^\s*#(\d+)\s+0x([0-9a-f]{16}) (\S+) \((\S+) \+ 0x([0-9a-f]+)\)$", re.M)


def build_program(env):
    """The stripped program (symbol tables gone, .dynsym only) and its build-id; its debug info in
    a directory of its own, for debuginfod."""
    for tool in ("gcc", "objcopy", "strip", "eu-readelf", DEBUGINFOD):
        if not shutil.which(tool):
            skip(f"{tool} missing (packages gcc, binutils, elfutils, debuginfod)")
    src, exe = os.path.join(env.base, "dbgi.c"), os.path.join(env.base, "dbgi-crash")
    debug_dir = os.path.join(env.base, "debug")
    os.makedirs(debug_dir)
    with open(src, "w") as f:
        f.write(PROGRAM)
    subprocess.run(["gcc", "-g", "-O0", "-fno-omit-frame-pointer", "-o", exe, src], check=True)
    subprocess.run(["objcopy", "--only-keep-debug", exe, os.path.join(debug_dir, "dbgi-crash.debug")], check=True)
    subprocess.run(["strip", "--strip-all", exe], check=True)
    os.chmod(exe, 0o755)
    out = subprocess.run(["eu-readelf", "-n", "-S", exe], capture_output=True, text=True, check=True).stdout
    check(".symtab" not in out and ".debug_info" not in out, f"{exe} is not stripped:\n{out}")
    build_id = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(build_id, f"{exe} has no build-id:\n{out}")
    return exe, debug_dir, build_id.group(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Debuginfod:
    """An elfutils debuginfod over one directory, its database in the test's directory; stopped
    by PID at the end (and on any exit, by the harness)."""

    def __init__(self, env, name, directory, build_id, has_it=True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = os.path.join(env.base, f"{name}.log")
        with open(self.log, "w") as lf:
            self.proc = subprocess.Popen([DEBUGINFOD, "-F", "-p", str(self.port), "-d", os.path.join(env.base, f"{name}.sqlite"),
                                          "-t", "0", "-g", "0", directory],
                                         stdin=subprocess.DEVNULL, stdout=lf, stderr=subprocess.STDOUT)
        _restore.append((self.stop, f"debuginfod {self.proc.pid}"))
        wait_until(lambda: self.answers(build_id, 200 if has_it else 404), SCAN_TIMEOUT,
                   lambda: f"debuginfod to answer for {build_id}:\n{self.log_text()}")

    def answers(self, build_id, status):
        """Whether the server answers the debug file's URL with status (404: it is up, the scan of
        an empty directory has nothing to be done)."""
        check(self.proc.poll() is None, f"debuginfod exited {self.proc.returncode}:\n{self.log_text()}")
        try:
            with urllib.request.urlopen(f"{self.url}/buildid/{build_id}/debuginfo", timeout=5) as r:
                return r.status == status
        except urllib.error.HTTPError as e:
            return e.code == status
        except (urllib.error.URLError, OSError):
            return False

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()[-4000:]

    def stop(self):
        terminate(self.proc)


def crash_program(env, d, exe):
    """Crashes the program; its PID once the record is beside its core."""
    pid, _ = crash("segv", exe=exe)
    env.wait_cores(1)
    wait_until(lambda: any(r.get("COREDUMP_PID") == str(pid).encode() for r in read_exports(env, "record")), 30,
               lambda: f"the record of PID {pid}:\n{d.log_text()[-4000:]}")
    return pid


def ctl_args(env):
    """Our coredumpctl over the records of this test only (an empty journal directory)."""
    empty = os.path.join(env.base, "no-journal")
    os.makedirs(empty, exist_ok=True)
    return ("--config", env.conf, "-D", empty, "--storage", env.store)


def ctl(env, *args, urls=None, cache=None, timeout=120):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    if urls is not None:
        environ.update(DEBUGINFOD_URLS=urls, DEBUGINFOD_CACHE_PATH=cache)
    p = coredumpctl(*ctl_args(env), *args, env=environ, timeout=timeout)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check(p.returncode == 0, f"coredumpctl {' '.join(args)}: exit {p.returncode}\n{out}\n{err}")
    return out


def program_frames(info, base):
    """(name, offset) of the frames in the program, in the order printed."""
    return [(m.group(3), m.group(5)) for m in FRAME.finditer(info) if m.group(4) == base]


def debug_line(info):
    m = re.search(r"^\s*Debug Info: (.*)$", info, re.M)
    return m.group(1) if m else None


def setup(env):
    d = env.start()
    exe, debug_dir, build_id = build_program(env)
    pid = crash_program(env, d, exe)
    return d, exe, debug_dir, build_id, pid


def case_info():
    """info: without DEBUGINFOD_URLS the stored trace (addresses, no names of the program's
    functions, a note to set it); with it the three functions in order at the same offsets, and a note; a
    server without the debug file: the program's frames as stored, a note naming it; a closed
    port: the stored trace, a note that it could not be reached, exit 0. Then the program's file
    as root did not write it (check_untrusted)."""
    env = Env()
    d, exe, debug_dir, build_id, pid = setup(env)
    base = os.path.basename(exe)
    stored = ctl(env, "info", str(pid))
    print("--- info without DEBUGINFOD_URLS:\n" + stored)
    frames = program_frames(stored, base)
    check(len(frames) >= 4, f"few frames in the program:\n{stored}")
    check(not any(f in stored for f in FUNCS), f"the stored trace names the stripped program's functions:\n{stored}")
    note = debug_line(stored) or ""
    check("set DEBUGINFOD_URLS" in note, f"no note on the unnamed frames without DEBUGINFOD_URLS:\n{stored}")

    server = Debuginfod(env, "debuginfod", debug_dir, build_id)
    cache = os.path.join(env.base, "cache")
    named = ctl(env, "info", str(pid), urls=server.url, cache=cache)
    print("--- info with DEBUGINFOD_URLS:\n" + named)
    again = program_frames(named, base)
    check([f[1] for f in again] == [f[1] for f in frames], f"offsets changed:\n{stored}\n{named}")
    check([f[0] for f in again[:3]] == FUNCS and again[3][0] == "main", f"program frames {again}:\n{named}")
    note = debug_line(named)
    check(note and "DEBUGINFOD_URLS" in note and base not in note, f"note: {note!r}")
    check(os.path.exists(os.path.join(cache, build_id, "debuginfo")), f"nothing in the client's cache {cache}")
    check(other_lines(named) == other_lines(stored), "info changed beyond the frames' names and the note")
    server.stop()

    empty_dir = os.path.join(env.base, "empty")
    os.makedirs(empty_dir)
    empty = Debuginfod(env, "debuginfod-empty", empty_dir, build_id, has_it=False)
    none = ctl(env, "info", str(pid), urls=empty.url, cache=os.path.join(env.base, "cache-empty"))
    print("--- info with DEBUGINFOD_URLS of a server without the debug file:\n" + none)
    check(program_frames(none, base) == frames, f"not the stored trace:\n{none}")
    note = debug_line(none)
    check(note and re.search(rf"none found for .*\b{re.escape(base)}\b", note), f"note: {note!r}")
    empty.stop()

    closed = ctl(env, "info", str(pid), urls=f"http://127.0.0.1:{free_port()}", cache=os.path.join(env.base, "cache2"))
    print("--- info with DEBUGINFOD_URLS on a closed port:\n" + closed)
    check(program_frames(closed, base) == frames, f"not the stored trace:\n{closed}")
    note = debug_line(closed)
    check(note and "could not be reached" in note, f"note: {note!r}")
    check_untrusted(env, exe, debug_dir, build_id, pid, frames)
    d.stop()


def other_lines(info):
    """The lines of info but the frames, the note and the relative time."""
    return [l for l in info.splitlines()
            if not FRAME.match(l) and not l.lstrip().startswith(("Debug Info:", "Timestamp:"))]


def check_untrusted(env, exe, debug_dir, build_id, pid, stored):
    """info as root over an entry whose program file root did not write: a file of another user
    (nobody's), or one that others can write, is not read, only its build-id is looked up; the
    server has the debug info but not the program, so the frames stay as stored and the note names
    the program (root's 0755 file again: named). A .gnu_debuglink of root's file naming a FIFO
    beside it is not followed: info does not block, and names the frames from the server."""
    base = os.path.basename(exe)
    server = Debuginfod(env, "debuginfod-untrusted", debug_dir, build_id)
    cache = os.path.join(env.base, "cache-untrusted")

    def info():
        out = ctl(env, "info", str(pid), urls=server.url, cache=cache, timeout=60)
        return out, program_frames(out, base), debug_line(out) or ""

    for what, owner, mode in (("nobody's", 65534, 0o755), ("others can write it", 0, 0o757),
                              ("the group can write it", 0, 0o775)):
        os.chown(exe, owner, owner)
        os.chmod(exe, mode)
        out, frames, note = info()
        print(f"--- info, the program's file {what}:\n" + out)
        check(frames == stored, f"the program's file was read ({what}):\n{out}")
        check(re.search(rf"none found for .*\b{re.escape(base)}\b", note), f"note ({what}): {note!r}")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o755)
    out, frames, _ = info()
    check([f[0] for f in frames[:3]] == FUNCS, f"root's 0755 file not read:\n{out}")

    shutil.rmtree(cache)
    subprocess.run(["objcopy", f"--add-gnu-debuglink={os.path.join(debug_dir, base + '.debug')}", exe], check=True)
    out = subprocess.run(["eu-readelf", "-n", exe], capture_output=True, text=True, check=True).stdout
    check(f"Build ID: {build_id}" in out, f"objcopy changed the build-id:\n{out}")
    os.chmod(exe, 0o755)
    os.mkfifo(os.path.join(env.base, base + ".debug"))
    try:
        out, frames, _ = info()
    except subprocess.TimeoutExpired:
        check(False, "info blocked on the FIFO the program's .gnu_debuglink names")
    print("--- info, the program's .gnu_debuglink naming a FIFO:\n" + out)
    check([f[0] for f in frames[:3]] == FUNCS, f"not named from the server:\n{out}")
    server.stop()


def case_gdb():
    """debug: gdb in batch mode with DEBUGINFOD_URLS set names the program's functions from the
    server's debug file; without it, it cannot."""
    if not shutil.which("gdb"):
        skip("gdb missing")
    env = Env()
    d, exe, debug_dir, build_id, pid = setup(env)
    gdb_args = ("debug", str(pid), "-A", "-batch -nx -ex bt")
    plain = ctl(env, *gdb_args)
    check(not any(f in plain for f in FUNCS), f"gdb named the functions without debug info:\n{plain}")
    server = Debuginfod(env, "debuginfod", debug_dir, build_id)
    out = ctl(env, *gdb_args, urls=server.url, cache=os.path.join(env.base, "cache"))
    print("--- debug with DEBUGINFOD_URLS:\n" + out[out.rfind("\n#0 "):])
    bt = out[out.rindex("\n#0 "):]  # gdb prints frame #0 once when loading the core, then the bt
    frames = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+)", bt, re.M)
    check(frames[:4] == FUNCS + ["main"], f"bt frames {frames}:\n{out}")
    server.stop()
    d.stop()


DWZ_FUNCS = ["dwz_crash_inner", "dwz_crash_outer"]
DWZ_PROGRAM = r"""
#include <stdio.h>
struct shared_thing { int a; long b; char name[16]; };
__attribute__((noinline)) static void dwz_crash_inner(volatile struct shared_thing *p) { p->a = 42; }
__attribute__((noinline)) static void dwz_crash_outer(volatile struct shared_thing *p) { dwz_crash_inner(p); puts(""); }
int main(int argc, char **argv) { dwz_crash_outer(argc > 100 ? (void *) argv : NULL); return 0; }
"""


def opened_for_reading(fifo):
    """Whether a process has the FIFO open for reading now (an open for writing finds a reader)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: no reader
        return False
    os.close(fd)
    return True


def case_altlink_fifo():
    """Third review, finding 2: root's info parses files a user's entry names, with libdw, which
    opens the path a module's .gnu_debugaltlink names by itself. A root-owned program whose DWARF
    dwz moved partly into a shared file names a FIFO as that file: info with DEBUGINFOD_URLS set
    names the frames all the same, nobody ever opens the FIFO, and the ELF and DWARF are parsed by
    a confined child (nobody's, no file it may open). Before: root's coredumpctl opened the FIFO
    for reading, and waited there for a writer."""
    for tool in ("gcc", "dwz", "eu-readelf", DEBUGINFOD):
        if not shutil.which(tool):
            skip(f"{tool} missing (packages gcc, dwz, elfutils, debuginfod)")
    env = Env()
    d = env.start()
    srcs = []
    for name in ("dwz-a", "dwz-b"):  # dwz's multifile mode takes two programs at least
        src = os.path.join(env.base, name + ".c")
        with open(src, "w") as f:
            f.write(DWZ_PROGRAM)
        subprocess.run(["gcc", "-g", "-O0", "-fno-omit-frame-pointer", "-o", os.path.join(env.base, name), src], check=True)
        srcs.append(os.path.join(env.base, name))
    fifo = os.path.join(env.base, "common.dwz")
    subprocess.run(["dwz", "-m", os.path.join(env.base, "made.dwz"), "-M", fifo, *srcs], check=True)
    out = subprocess.run(["eu-readelf", "-S", srcs[0]], capture_output=True, text=True, check=True).stdout
    check(".gnu_debugaltlink" in out, f"dwz left no .gnu_debugaltlink:\n{out}")
    os.mkfifo(fifo, 0o644)
    os.chmod(srcs[0], 0o755)
    pid = crash_program(env, d, srcs[0])
    empty_dir = os.path.join(env.base, "empty")
    os.makedirs(empty_dir)
    server = Debuginfod(env, "debuginfod-empty", empty_dir, "00" * 20, has_it=False)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    environ.update(DEBUGINFOD_URLS=server.url, DEBUGINFOD_CACHE_PATH=os.path.join(env.base, "cache"))
    p = subprocess.Popen(ctl_command([*ctl_args(env), "info", str(pid)]), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=environ)
    _restore.append((lambda: p.poll() is None and p.kill(), f"coredumpctl {p.pid}"))
    opened = False
    while p.poll() is None:
        opened = opened or opened_for_reading(fifo)
        time.sleep(0.01)
        check(not opened, "coredumpctl info opened the FIFO the program's .gnu_debugaltlink names")
    info = p.stdout.read().decode(errors="replace")
    check(p.returncode == 0, f"info: exit {p.returncode}: {p.stderr.read().decode(errors='replace')}")
    frames = [f[0] for f in program_frames(info, os.path.basename(srcs[0]))]
    check(frames[:3] == DWZ_FUNCS + ["main"], f"frames {frames}:\n{info}")
    server.stop()
    d.stop()


if __name__ == "__main__":
    run_cases({"info": case_info, "gdb": case_gdb, "altlink_fifo": case_altlink_fifo})
