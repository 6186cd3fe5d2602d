#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real programs crash on the live kernel, in socket and in pipe mode (issue 17): python3 with
ssl and sqlite3, bash, perl, and the corpus of test/helpers/corpus (an uncaught C++ exception, a
crash in a dlopen()ed library, static, PIE and non-PIE, stripped, 120 and 160 mapped libraries,
a deleted executable, Go, Rust). For each: exactly one stored core that decompresses to an ELF
core with as many NT_PRSTATUS notes as the process had threads, exactly one journal entry, and a
stack trace whose crashing thread's top frames name what `eu-stack --core` names on the stored
core. Past MODULES_MAX mapped files the entry says how many were left out of the traces."""
import os
import re
import shutil
import signal
import subprocess

from cdtest import (BUILD, CRASHER, Env, Journal, check, decompress, elf_core_info, require_socket, run_cases, skip,
                    wait_until)
from corpus import (DLOPEN_LIB, PROGRAMS, eu_stack_frames, frames_agree, message_frames, normalise)

MODULES_MAX = 128     # src/shared/proto.h: module files a worker gets
TOP_FRAMES = 5        # frames of the crashing thread compared with eu-stack
FUNCTION_WITHIN = 32  # frames of our trace in which the program's own crashing function must show
PYTHON = "/usr/bin/python3"  # Debian's, whatever python3 comes first on PATH

# Each interpreter prints "ready", waits for a byte on stdin, then crashes itself.
INTERPRETERS = {
    "python3": ([PYTHON, "-c", "import ssl, sqlite3, os, signal, sys; print('ready', flush=True); sys.stdin.read(1); "
                 "os.kill(os.getpid(), signal.SIGSEGV)"], signal.SIGSEGV, "kill"),
    "bash": (["/bin/bash", "-c", "echo ready; read -n 1 x; kill -SEGV $$"], signal.SIGSEGV, "kill_builtin"),
    "perl": (["/usr/bin/perl", "-e", '$| = 1; print "ready\\n"; read(STDIN, $x, 1); kill "SEGV", $$'],
             signal.SIGSEGV, "kill"),
}


class Case:
    """One program to crash: its command, environment, expected signal and crashing function."""

    def __init__(self, name, cmd, sig, function, env=None, setup=None):
        self.name, self.cmd, self.sig, self.function, self.env, self.setup = name, cmd, sig, function, env or {}, setup


def deleted_exe(env):
    path = os.path.join(env.base, "deleted-crasher")
    shutil.copy(CRASHER, path)
    os.chmod(path, 0o755)
    return path


def cases(env):
    out = [Case(n, cmd, sig, fn) for n, (cmd, sig, fn) in INTERPRETERS.items()]
    for name, p in PROGRAMS.items():
        if not os.access(p.path, os.X_OK):
            check(p.optional, f"{p.path} was not built")
            # tools/run-tests.sh installs every compiler: there a missing program is an error
            check(os.environ.get("CDS_TESTS_COMPLETE") != "1",
                  f"{p.path} was not built, though the suite installed its compiler (tools/deps.sh)")
            print(f"skip: {name}: not built here (its compiler is missing; tools/deps.sh installs it)")
            continue
        args = [DLOPEN_LIB] if name == "dlopen-crash" else []
        out.append(Case(name, [p.path, *args], p.signal, p.function, p.env))
    many = PROGRAMS["many-maps"].path
    out.append(Case("many-maps-160", [many, "160"], signal.SIGSEGV, "corpus_crash_here"))
    # the deleted executable is not opened for the traces (maps says "(deleted)"): its frames are
    # unnamed, libc's are not
    out.append(Case("deleted-exe", None, signal.SIGSEGV, "__libc_start_main",
                    setup=lambda: [deleted_exe(env), "segv"]))
    return out


def mapped_files(maps):
    files = set()
    for line in maps.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            files.add(parts[5])
    return files


def status_threads(status):
    m = re.search(r"^Threads:\s+(\d+)$", status, re.M)
    return int(m.group(1)) if m else None


def crash_synced(case, env):
    """Starts the program, waits for "ready", (deletes its executable), makes it crash."""
    cmd = case.setup() if case.setup else case.cmd
    e = dict(os.environ, CORPUS_SYNC="1", CRASHER_SYNC="1", **case.env)
    p = subprocess.Popen(cmd, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline().strip()
    check(line == b"ready", f"{case.name}: no 'ready' ({line!r})")
    if case.setup:
        os.unlink(cmd[0])  # deleted while it runs: /proc/PID/exe reads "... (deleted)"
    p.stdin.write(b"x")
    p.stdin.flush()
    p.wait(120)
    check(p.returncode == -case.sig, f"{case.name}: ended with {p.returncode}, expected -{case.sig}")
    return p.pid


def one(case, env, j, d, mode):
    pid = crash_synced(case, env)
    cores = wait_until(lambda: [c for c in env.cores() if f".{pid}." in os.path.basename(c)], 120,
                       lambda: f"{mode} {case.name}: the core of PID {pid}:\n{d.log_text()[-3000:]}")
    check(len(cores) == 1, f"{mode} {case.name}: {len(cores)} cores for PID {pid}")
    e = j.entry(pid)  # exactly one entry, or it fails
    check(e.get("COREDUMP_FILENAME", b"").decode() == cores[0], f"{mode} {case.name}: entry names "
          f"{e.get('COREDUMP_FILENAME')!r}, stored {cores[0]}")
    core = decompress(cores[0], os.path.join(env.base, f"{case.name}.core"))
    info = elf_core_info(core)
    threads = status_threads(e.get("COREDUMP_PROC_STATUS", b"").decode(errors="replace"))
    check(info["type"] == 4 and info["signal"] == case.sig, f"{mode} {case.name}: core {info}")
    check(info["threads"] == threads, f"{mode} {case.name}: {info['threads']} NT_PRSTATUS notes, "
          f"the process had {threads} threads")
    files = mapped_files(e.get("COREDUMP_PROC_MAPS", b"").decode(errors="replace"))
    message = e["MESSAGE"].decode(errors="replace")
    tid = int(e["COREDUMP_TID"])
    ours = message_frames(message, tid)
    eu = eu_stack_frames(core)
    agree = frames_agree(ours, eu, TOP_FRAMES)
    check(agree, f"{mode} {case.name}: our frames {normalise(ours[:TOP_FRAMES])} differ from eu-stack's "
          f"{normalise(eu[:TOP_FRAMES])}\n{message[:3000]}")
    check(case.function in normalise(ours[:FUNCTION_WITHIN]),
          f"{mode} {case.name}: {case.function} not among the top frames {normalise(ours[:FUNCTION_WITHIN])}")
    omitted = e.get("COREDUMP_MODULES_OMITTED")
    if case.name == "many-maps-160":  # the case that must go past the bound
        check(len(files) > MODULES_MAX, f"{mode} {case.name}: only {len(files)} mapped files, not past "
              f"MODULES_MAX={MODULES_MAX}")
    if len(files) > MODULES_MAX:
        check(omitted and int(omitted) == len(files) - MODULES_MAX,
              f"{mode} {case.name}: {len(files)} mapped files, COREDUMP_MODULES_OMITTED={omitted!r}")
        check(f"{int(omitted)} more mapped files were left out of the stack traces" in message,
              f"{mode} {case.name}: MESSAGE does not say modules were left out")
    else:
        check(omitted is None, f"{mode} {case.name}: COREDUMP_MODULES_OMITTED={omitted!r} with {len(files)} files")
    os.unlink(core)
    top = " > ".join(normalise(ours[:3]))
    print(f"observed: {mode:6} {case.name:14} {len(files):4} files {threads:3} threads  stored  "
          f"frames: {top}  eu-stack agrees (top {min(TOP_FRAMES, len(eu))})"
          + (f"; {int(omitted)} modules left out" if omitted else ""))


def run_mode(mode):
    if mode == "socket":
        require_socket("the case is the corpus in socket mode; its pipe case runs here")
    if not os.access(PYTHON, os.X_OK):
        skip(f"{PYTHON} missing")
    env = Env({"Mode": mode, "RateLimitBurst": "0"})
    j = Journal(env)
    d = env.start(journal=j)
    for case in cases(env):
        one(case, env, j, d, mode)
    check(d.stop() == 0, "daemon did not stop cleanly")
    check("the worker failed" not in d.log_text(), f"a worker failed:\n{d.log_text()}")


if __name__ == "__main__":
    run_cases({"socket": lambda: run_mode("socket"), "pipe": lambda: run_mode("pipe")})
