#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The memory spool (SpoolMax=): the crashed task goes once its core is received, the core is
compressed after; the stored core is the same either way, zero pages are not held, a core that
outgrows the spool is compressed while received, and a daemon told to stop finishes a spooled
core first."""
import fcntl
import os
import re
import signal
import subprocess
import sys
import time

from cdtest import (Env, check, copy_crasher, crash, decompress, elf_core_info, gdb_threads, record_of, run_cases, skip, start_crash,
                    wait_until)

DEBUG = {"COREDUMP_SOCKET_LOG_LEVEL": "debug"}


def spooled(d, pid):
    m = re.search(rf"Crash of PID {pid}: (\d+) bytes spooled", d.log_text())
    return int(m.group(1)) if m else None


def stored_core(env, d, pid):
    rec = record_of(env, pid, d)
    path = rec.get("COREDUMP_FILENAME", b"").decode()
    check(path and os.path.exists(path), f"no stored core for PID {pid}: {rec}")
    core = decompress(path, os.path.join(env.base, f"core.{pid}.elf"))
    info = elf_core_info(core)
    check(info["type"] == 4 and info["pids"] and info["pids"][0] == pid, f"the stored core is no core of {pid}: {info}")
    return core, rec


def held_crash(mib):
    """A crash of mib MiB of text, to its end: (the crasher, its time.monotonic() at the crash,
    seconds the task was held)."""
    p = start_crash("mem", mib, sync=True)
    p.stdin.write(b"x")
    p.stdin.flush()
    t0 = time.monotonic()
    check(p.wait(120) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    return p, t0, time.monotonic() - t0


def case_released_first():
    """With a slow compression (level 19, seconds for this core), the task is gone before its
    core is complete: the spool released it. Without a spool (SpoolMax=0) the same crash holds
    the task until the core is compressed."""
    env = Env({"CompressLevel": "19"})
    d = env.start(environ=DEBUG)
    p, t0, held = held_crash(16)
    early = f"Crash of PID {p.pid} (crasher, uid 0): core complete" in d.log_text()
    line = d.wait_log(rf"Crash of PID {p.pid} \(crasher, uid 0\): core complete", timeout=120)
    complete = time.monotonic() - t0
    print(f"observed: task held {held:.2f} s, core complete after {complete:.2f} s; {line.strip()}")
    check(not early, "the core was complete when the task was released: nothing was spooled")
    d.wait_log(rf"\(crash of PID {p.pid}\): .*Task released after \d+ bytes of its core, spooled: compressing them now")
    check((spooled(d, p.pid) or 0) > 8 << 20, f"no spool for a 16 MiB core:\n{d.log_text()[-3000:]}")
    stored_core(env, d, p.pid)
    d.stop()

    env2 = Env({"CompressLevel": "19", "SpoolMax": "0"})
    d2 = env2.start(environ=DEBUG)
    p, _, inline = held_crash(16)
    print(f"observed: SpoolMax=0: task held {inline:.2f} s")
    check(spooled(d2, p.pid) is None and "spooled" not in d2.log_text(), "SpoolMax=0 spooled")
    # the worker's own word, not a race of two clocks: it released the task with the core compressed
    d2.wait_log(rf"\(crash of PID {p.pid}\): .*Task released after \d+ bytes of its core, compressed while they came")
    stored_core(env2, d2, p.pid)
    d2.stop()


def case_sparse():
    """1 GiB of untouched memory: the spool holds its data, not its zeros; the stored core has
    them all and reads as the crasher's."""
    env = Env()
    d = env.start(environ=DEBUG)
    pid, rc = crash("sparse", 1024)
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    core, _ = stored_core(env, d, pid)
    n = spooled(d, pid)
    print(f"observed: core {os.path.getsize(core) >> 20} MiB, spool {n} bytes")
    check(os.path.getsize(core) > 1 << 30, f"the core is {os.path.getsize(core)} bytes, the zeros are missing")
    check(n is not None and n < 32 << 20, f"the spool held {n} bytes of a mostly-zero core")
    d.stop()


def case_overflow():
    """SpoolMax=1M and 64 MiB of random memory: the core outgrows the spool, what it held is
    compressed at once and the rest while received; the stored core is complete."""
    env = Env({"SpoolMax": "1M"})
    d = env.start(environ=DEBUG)
    pid, rc = crash("mem", 64, "random")
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    # the grant: SpoolMax= less the room that came with the job, which stays the worker's
    # (1 MiB over SPOOL_GIVEN_SHARE 4 and MaxParallel=16 jobs: 16 KiB)
    d.wait_log(r"outgrew its spool \(1032192 bytes\)")
    core, rec = stored_core(env, d, pid)
    check(os.path.getsize(core) > 64 << 20, f"the core is {os.path.getsize(core)} bytes")
    check(rec.get("COREDUMP_TRUNCATED") is None, f"the core was cut: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    check(spooled(d, pid) is None, "the spool that overflowed was reported as used")
    d.stop()


def memfds(pid):
    """{fd: name} of the memfds process pid holds."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("/memfd:"):
            out[int(fd)] = target[len("/memfd:"):].split(" ")[0]
    return out


def case_bounded():
    """Third review, finding 4: what a worker holds in memory files is bounded, whatever a core
    it reads makes of it. Caught while it compresses a spooled core of 32 MiB of random bytes
    (level 19, slow), the worker's spool is the memfd the manager made with its GRANT, no larger
    than granted (within SpoolMax=48M) and sealed against growing, shrinking or new seals: a write
    past its end fails (EPERM) from any process, the worker too. Its other memfds were each sealed
    against growing before the core's first byte; a new one it cannot make (sandbox's forbidden
    case: memfd_create is killed by its filter). Before: the worker made its memfds as it liked,
    each as large as its RLIMIT_FSIZE, as many as its descriptors."""
    env = Env({"SpoolMax": "48M", "CompressLevel": "19"})
    d = env.start(environ=DEBUG)
    p = start_crash("mem", 32, "random")

    def spooling():
        for w in d.children():
            try:
                named = memfds(w)
            except (FileNotFoundError, ProcessLookupError):
                continue
            spool = [fd for fd, name in named.items() if name == "coredump-spool"]
            for fd in spool:  # the room that came with the job, and the grant
                try:
                    size = os.stat(f"/proc/{w}/fd/{fd}").st_size
                except FileNotFoundError:
                    continue
                if size > 4 << 20:
                    return w, named, fd
        return None
    w, named, spool_fd = wait_until(spooling, 30, lambda: f"a worker holding its spool:\n{d.log_text()}")
    granted = [int(g) for g, _ in re.findall(GRANTED, d.log_text())]
    for fd, name in named.items():
        f = os.open(f"/proc/{w}/fd/{fd}", os.O_RDWR)
        try:
            seals, size = fcntl.fcntl(f, fcntl.F_GET_SEALS), os.fstat(f).st_size
            check(seals & fcntl.F_SEAL_GROW, f"the worker's memfd {name} can grow (seals {seals:#x})")
            if fd != spool_fd:
                continue
            check(granted and size == granted[-1] and size <= 48 << 20, f"spool of {size} bytes, granted {granted}")
            check(seals & fcntl.F_SEAL_SHRINK and seals & fcntl.F_SEAL_SEAL, f"the spool's seals: {seals:#x}")
            try:
                os.pwrite(f, b"more", size)
                check(False, "a write past the spool's end went through")
            except PermissionError:
                pass
        finally:
            os.close(f)
    check(p.wait(60) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    core, _ = stored_core(env, d, p.pid)
    check(os.path.getsize(core) > 32 << 20, f"the core is {os.path.getsize(core)} bytes")
    print(f"observed: worker {w}'s memfds {sorted(named.values())}, its spool {granted[-1]} bytes, sealed")
    d.stop()


PYTHON_BIG = "import os, signal\nb = os.urandom(24 << 20)\nos.kill(os.getpid(), signal.SIGSEGV)\n"


def case_real_program():
    """python3 with 24 MiB of random bytes on its heap: its core goes through the spool and is
    stored whole, readable by gdb's reader and with the interpreter's stack trace."""
    env = Env()
    d = env.start(environ=DEBUG)
    p = subprocess.run([sys.executable, "-c", PYTHON_BIG])
    check(p.returncode == -signal.SIGSEGV, f"python3 ended with {p.returncode}")
    pid = int(re.findall(r"Crash of PID (\d+) \(python3", d.wait_log(r"Crash of PID \d+ \(python3[^)]*\): core complete", 60))[0])
    core, rec = stored_core(env, d, pid)
    n = spooled(d, pid)
    print(f"observed: python3 core {os.path.getsize(core) >> 20} MiB, {n} bytes spooled")
    check(n is not None and n > 20 << 20, f"python3's core was not spooled ({n})")
    msg = rec.get("MESSAGE", b"")
    # frames in the interpreter itself (the MESSAGE's first line names python3 anyway)
    modules = set(re.findall(rb"^ *#\d+ +0x[0-9a-f]+ .*\(([^ ()]+) \+ 0x[0-9a-f]+\)$", msg, re.M))
    print(f"observed: modules in the stack trace: {sorted(m.decode() for m in modules)}")
    check(any(m.startswith((b"python3", b"libpython3")) for m in modules), f"no frame of python3 in: {msg[:1500]!r}")
    threads = gdb_threads(sys.executable, core)
    check(threads >= 1, "gdb found no thread in python3's core")
    print(f"observed: gdb reads python3's core: {threads} thread(s)")
    d.stop()


GRANTED = r"Worker \d+: (\d+) bytes of spool granted \((\d+) asked\)"
HELD = r"bytes of spool room back, (\d+) held by all"
GIVEN = 4 << 20  # JOB_SPOOL_GIVEN


def case_given():
    """The room that comes with the job (4 MiB, within SpoolMax=): a small core is spooled without
    asking the manager while its task is held (the crasher's, and bash's when it fits), a 16 MiB
    one asks and gets all of it, every room comes back; with a small SpoolMax= a job comes with
    a quarter of it over MaxParallel= jobs, and the tiny core asks."""
    env = Env()
    d = env.start(environ=DEBUG)
    pid, _ = crash("segv")
    d.wait_log(rf"Crash of PID {pid} \(crasher[^)]*\): core complete")
    stored_core(env, d, pid)
    check((spooled(d, pid) or 0) > 0, f"the tiny core was not spooled:\n{d.log_text()[-3000:]}")
    check(not re.findall(GRANTED, d.log_text()), f"the tiny core asked for its spool:\n{d.log_text()[-3000:]}")
    p = subprocess.run(["bash", "-c", "kill -SEGV $$"])
    check(p.returncode == -signal.SIGSEGV, f"bash ended with {p.returncode}")
    bash = int(re.findall(r"Crash of PID (\d+) \(bash", d.wait_log(r"Crash of PID \d+ \(bash[^)]*\): core complete", 60))[0])
    core, _ = stored_core(env, d, bash)
    asked = re.findall(GRANTED, d.log_text())
    print(f"observed: bash core {os.path.getsize(core)} bytes, {spooled(d, bash)} bytes spooled, asked: {asked}")
    check((spooled(d, bash) or 0) > 0, f"bash's core was not spooled:\n{d.log_text()[-3000:]}")
    # the worker decides on what is left after the chunk with the headers (a read, 256 KiB at
    # most: 1 MiB is room to spare)
    size = os.path.getsize(core)
    check(size > GIVEN + (1 << 20) or not asked, f"bash's core of {size} bytes asked {asked}")
    check(size <= GIVEN or asked, f"bash's core of {size} bytes did not ask")
    before = len(asked)
    p, _, _ = held_crash(16)
    d.wait_log(rf"Crash of PID {p.pid} \(crasher[^)]*\): core complete", 60)
    asked = re.findall(GRANTED, d.log_text())[before:]
    check(len(asked) == 1 and int(asked[0][0]) == int(asked[0][1]) > 16 << 20,
          f"the 16 MiB core's spool: {asked}\n{d.log_text()[-3000:]}")
    check((spooled(d, p.pid) or 0) > 16 << 20, f"the 16 MiB core was not spooled whole:\n{d.log_text()[-3000:]}")
    # every room given or granted came back
    wait_until(lambda: re.findall(HELD, d.log_text())[-1:] == ["0"], 10,
               lambda: f"spool room still held: {re.findall(HELD, d.log_text())}\n{d.log_text()[-3000:]}")
    d.stop()
    # SpoolMax=64K over MaxParallel=16 jobs: what comes with a job is 1 KiB, the tiny core asks,
    # and gets the rest (the 1 KiB stays the worker's until its end)
    env = Env({"SpoolMax": "64K"})
    d = env.start(environ=DEBUG)
    pid, _ = crash("segv")
    d.wait_log(r"outgrew its spool \(64512 bytes\)")
    d.wait_log(rf"Crash of PID {pid} \(crasher[^)]*\): core complete")
    check(re.findall(GRANTED, d.log_text()) == [("64512", "65536")], f"SpoolMax=64K: {re.findall(GRANTED, d.log_text())}")
    stored_core(env, d, pid)
    d.stop()


def case_hoard():
    """Third review, finding 4: a worker that keeps its spool room after it said STORED (the test
    fault hoard@analysis: it fills the memfd that came with its job and sleeps there, as a worker a
    core took over could, until its deadline) keeps it counted: a core crashing meanwhile is granted
    only what SpoolMax= has left beside both of the first worker's rooms. Before: the manager took
    the room back at STORED (the grant) and SPOOL (what came with the job), and could hand out
    SpoolMax= again while the first worker still held its pages."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("built without -Dworker-test-faults=true")
    env = Env({"SpoolMax": "48M"})
    d = env.start(environ={**DEBUG, "COREDUMP_WORKER_FAULT": "hoard@analysis"})
    hoarder = copy_crasher(env, "crasher-fault")  # the worker's test faults apply to that name
    a = start_crash("mem", 16, "random", exe=hoarder)
    d.wait_log(r"Test fault: holding \d+ bytes of spool room")
    b = start_crash("mem", 40, "random")
    d.wait_log(rf"Crash of PID {b.pid} \(crasher[^)]*\): core complete", 60)
    (ga, _), (gb, _) = [(int(g), int(w)) for g, w in re.findall(GRANTED, d.log_text())][:2]
    given = 48 * 1024 * 1024 // (4 * 16)  # SpoolMax= over SPOOL_GIVEN_SHARE and MaxParallel=16 jobs
    check(gb <= (48 << 20) - ga - 2 * given,
          f"the second core was granted {gb} bytes while the first worker held {ga} + {given}:\n{d.log_text()[-3000:]}")
    for p in (a, b):
        check(p.wait(60) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
        stored_core(env, d, p.pid)
    print(f"observed: granted {ga} bytes, then {gb} while they were held")
    d.stop()


def case_graceful_stop():
    """SIGTERM once the task is released and its core is still being compressed from the spool:
    the daemon finishes it before it exits (a spooled crash is not lost to a restart)."""
    env = Env({"CompressLevel": "19"})
    d = env.start(environ=DEBUG)
    p, _, _ = held_crash(16)
    check("core complete" not in d.log_text(), "the core was complete before the stop")
    d.proc.send_signal(signal.SIGTERM)
    d.wait_log(r"stopping after 1 crash\(es\) in flight")
    check(d.proc.wait(120) == 0, f"daemon exited with {d.proc.returncode}")
    check(f"Crash of PID {p.pid} (crasher, uid 0): core complete" in d.log_text(), f"the spooled core was lost:\n{d.log_text()[-3000:]}")
    check(len(env.cores()) == 1, f"expected the spooled core stored: {env.cores()}")
    stored_core(env, d, p.pid)


if __name__ == "__main__":
    run_cases({"released_first": case_released_first, "sparse": case_sparse, "overflow": case_overflow,
               "real_program": case_real_program, "given": case_given, "graceful_stop": case_graceful_stop,
               "bounded": case_bounded, "hoard": case_hoard})
