#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""RLIMIT_CORE, honoured as systemd-coredump does, in socket and pipe mode: below one page the
dump is refused before it starts (socket: REJECT; pipe: the pipe closed unread) and the crash is
recorded as "no core: RLIMIT_CORE=N"; above, at most RLIMIT_CORE bytes are stored, marked
truncated, while the stack traces still come from the whole core."""
import os
import resource
import signal
import subprocess

import cdtest
from cdtest import (CRASHER, Env, check, decompress, elf_core_info, read_exports, run_cases, wait_until)

PAGE = os.sysconf("SC_PAGE_SIZE")
MODES = cdtest.modes()  # both where the kernel has the socket, else pipe alone


def with_core_limit(soft):
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    return lambda: resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def records(env, n, d):
    return wait_until(lambda: len(read_exports(env, "record")) >= n and read_exports(env, "record"), 60,
                      lambda: f"{n} records:\n{d.log_text()}")


def record_of(env, pid, d):
    recs = records(env, 1, d)
    return wait_until(lambda: {r["COREDUMP_PID"]: r for r in read_exports(env, "record")}.get(str(pid).encode()), 60,
                      lambda: f"the record of PID {pid}: {recs}\n{d.log_text()}")


def run_limited(cmd, soft=None):
    p = subprocess.Popen(cmd, preexec_fn=with_core_limit(soft) if soft is not None else None,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.wait(120)
    return p.pid, p.returncode


def check_refused(env, d, mode, pid, limit):
    r = record_of(env, pid, d)
    why = r.get("COREDUMP_PROCESSING_ERROR", b"")
    check(why.startswith(f"RLIMIT_CORE={limit}, below one page".encode()), f"{mode}: PROCESSING_ERROR {why!r}")
    check(r["MESSAGE"].startswith(f"Process {pid} (crasher) of user 0 crashed, no core: RLIMIT_CORE={limit}".encode()),
          f"{mode}: MESSAGE {r['MESSAGE']!r}")
    check("COREDUMP_FILENAME" not in r, f"{mode}: a file for a refused core")
    check(not [c for c in env.cores() if f".{pid}." in c], f"{mode}: a core stored for PID {pid}")
    check(f"Crash of PID {pid} (crasher, uid 0): no core (RLIMIT_CORE={limit}" in d.log_text(),
          f"{mode}: no log line:\n{d.log_text()}")


def case_zero():
    """`ulimit -c 0`: no core, no worker reads a byte; the record says why."""
    for mode in MODES:
        env = Env({"Mode": mode})
        d = env.start()
        pid, rc = run_limited(["bash", "-c", f"ulimit -c 0; exec {CRASHER} segv"])
        check(rc == -signal.SIGSEGV, f"{mode}: crasher ended with {rc}")
        check_refused(env, d, mode, pid, 0)
        # the next crash, with a limit, is stored as usual
        pid2, _ = run_limited([CRASHER, "segv"])
        wait_until(lambda: [c for c in env.cores() if f".{pid2}." in c], 60, f"{mode}: the next core")
        check(d.stop() == 0, "daemon did not stop cleanly")
        print(f"observed: {mode}: PID {pid} under ulimit -c 0 recorded without a core; the next crash stored")


def case_small():
    """`ulimit -c 1000` (KiB): the stored core is the first 1024000 bytes, marked truncated; the
    traces come from the whole core."""
    limit = 1000 * 1024
    for mode in MODES:
        env = Env({"Mode": mode})
        d = env.start()
        pid, rc = run_limited(["bash", "-c", f"ulimit -c 1000; exec {CRASHER} mem 16"])
        check(rc == -signal.SIGSEGV, f"{mode}: crasher ended with {rc}")
        core = wait_until(lambda: [c for c in env.cores() if f".{pid}." in c], 60, f"{mode}: the core")[0]
        out = decompress(core, os.path.join(env.base, "core.elf"))
        size = os.path.getsize(out)
        check(size == limit, f"{mode}: stored {size} bytes, expected RLIMIT_CORE={limit}")
        check(elf_core_info(out)["type"] == 4, f"{mode}: not an ELF core")
        r = record_of(env, pid, d)
        check(r.get("COREDUMP_TRUNCATED") == b"1", f"{mode}: not marked truncated: {r.get('COREDUMP_TRUNCATED')}")
        check(r.get("COREDUMP_RLIMIT") == str(limit).encode(), f"{mode}: COREDUMP_RLIMIT {r.get('COREDUMP_RLIMIT')}")
        check(b"Stack trace of thread" in r["MESSAGE"], f"{mode}: no stack trace: {r['MESSAGE'][:300]!r}")
        check("truncated at the configured size limit" in d.log_text(), f"{mode}: log:\n{d.log_text()}")
        check(d.stop() == 0, "daemon did not stop cleanly")
        print(f"observed: {mode}: ulimit -c 1000 stored {size} of the core, COREDUMP_TRUNCATED=1, traces present")


def sync_crasher(soft):
    env = dict(os.environ, CRASHER_SYNC="1")
    p = subprocess.Popen([CRASHER, "segv"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, preexec_fn=with_core_limit(soft))
    check(p.stdout.readline().strip() == b"ready", "crasher did not get ready")
    return p


def case_prlimit():
    """The limit the process has when it crashes counts: `prlimit --core` on a running process,
    lowered to 0 (no core) and raised from 0 (core stored)."""
    for mode in MODES:
        env = Env({"Mode": mode})
        d = env.start()
        lowered = sync_crasher(resource.RLIM_INFINITY)
        raised = sync_crasher(0)
        subprocess.run(["prlimit", f"--pid={lowered.pid}", "--core=0:unlimited"], check=True)
        subprocess.run(["prlimit", f"--pid={raised.pid}", "--core=unlimited:unlimited"], check=True)
        for p in (lowered, raised):
            p.stdin.write(b"x")
            p.stdin.flush()
            check(p.wait(60) == -signal.SIGSEGV, f"{mode}: crasher ended with {p.returncode}")
        wait_until(lambda: [c for c in env.cores() if f".{raised.pid}." in c], 60, f"{mode}: the raised one's core")
        check_refused(env, d, mode, lowered.pid, 0)
        check(d.stop() == 0, "daemon did not stop cleanly")
        print(f"observed: {mode}: prlimit --core=0 on PID {lowered.pid}: no core; raised on PID {raised.pid}: stored")


if __name__ == "__main__":
    run_cases({"zero": case_zero, "small": case_small, "prlimit": case_prlimit})
