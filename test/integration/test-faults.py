#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fault injection on the real kernel: read-only storage, journald stopped or killed, workers
killed in each phase, the manager restarted or killed with crashes queued in its backlog. For
each: what the record says, that nothing else is lost, and that the daemon is healthy after.
(A full disk mid-core: robustness-disk_full; journald absent: records-no_journald; a worker
crashing, hanging or lying while streaming: sandbox-faults; 1000 crashes from 50 programs:
limits-burst50.)"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import cdtest
from cdtest import (CORE_PATTERN, CRASHER, PYTHON_SEGV, USER_PYTHON, Env, Journal, _restore, as_uid, check, crash, decompress,
                    elf_core_info, read_exports, read_file, run_cases, skip, start_crash, start_python_crash,
                    slow_crash_in_flight, test_user, wait_until, write_file)


def observed(d, pattern):
    """Waits for the daemon's log line and prints it: the fault table's "observed" column."""
    print("observed:", d.wait_log(pattern))


def healthy(env, d):
    """The daemon still stores the next crash (and keeps its record)."""
    pid, rc = crash("segv")
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    wait_until(lambda: any(f".{pid}." in c for c in env.cores()), 60,
               lambda: f"a core for PID {pid} after the fault:\n{d.log_text()[-3000:]}")
    return pid


def record_of(env, pid, timeout=30):
    def recs():
        return [r for r in read_exports(env, "record") if r.get("COREDUMP_PID") == str(pid).encode()]
    wait_until(recs, timeout, f"the record of PID {pid}")
    found = recs()
    check(len(found) == 1, f"{len(found)} records of PID {pid}")
    return found[0]


def case_storage_readonly():
    """The storage directory read-only: no core and no record file can be written; the crash is
    still released at once, its journal entry (the record) written, the log says why; once the
    directory is writable again the next crash is stored."""
    env = Env()
    env.mount_tmpfs(env.store, "64M")
    j = Journal(env)
    d = env.start(journal=j)
    subprocess.run(["mount", "-o", "remount,ro", env.store], check=True)
    t0 = time.monotonic()
    pid, rc = crash("segv")
    check(rc == -signal.SIGSEGV and time.monotonic() - t0 < 10, f"task not released ({rc})")
    observed(d, rf"Crash of PID {pid} \(crasher\): cannot create the output in {env.store}, core not stored: "
               r"Read-only file system")
    e = j.entry(pid)
    check(e.get("COREDUMP_SIGNAL") == b"11" and "COREDUMP_FILENAME" not in e, f"journal entry of the crash: {e}")
    # the journal entry is the only record of this crash (no record file can be written on a
    # read-only store): it must say why there is no core
    check(b"Read-only file system" in e.get("COREDUMP_PROCESSING_ERROR", b""),
          f"the journal entry does not explain the lost core: COREDUMP_PROCESSING_ERROR="
          f"{e.get('COREDUMP_PROCESSING_ERROR')!r}")
    observed(d, rf"Crash of PID {pid} \(crasher\): failed to keep its record in {env.store}: Read-only file system")
    subprocess.run(["mount", "-o", "remount,rw", env.store], check=True)
    check(env.cores() == [], f"a core on a read-only directory: {env.cores()}")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")
    j.stop()


def case_journald_stopped():
    """journald stopped (SIGSTOP): crashes are stored and released as usual (the entry is written
    after the task is let go and never waits on journald past the socket buffer); once journald
    runs again every entry is there."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    os.kill(j.proc.pid, signal.SIGSTOP)
    try:
        pids = []
        for _ in range(3):
            t0 = time.monotonic()
            pid, rc = crash("segv")
            check(rc == -signal.SIGSEGV and time.monotonic() - t0 < 10, f"task held while journald is stopped ({rc})")
            pids.append(pid)
        env.wait_cores(3)
        for pid in pids:
            record_of(env, pid)
    finally:
        os.kill(j.proc.pid, signal.SIGCONT)
    for pid in pids:
        check(j.entry(pid).get("COREDUMP_FILENAME"), f"entry of {pid} without its core")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")
    j.stop()


def case_journald_killed():
    """journald killed: the next crash is stored with its record beside the core; the log says the
    entry is missing; nothing else changes."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    first = healthy(env, d)
    j.entry(first)
    j.proc.kill()
    j.proc.wait()
    pid = healthy(env, d)
    observed(d, rf"Crash of PID {pid} \(crasher\): no journal entry \(.*\); its record is kept in {env.store}")
    rec = record_of(env, pid)
    check(rec.get("COREDUMP_FILENAME", b"").decode() in env.cores(), f"record does not name the core: {rec}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def faults_build():
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("worker built without -Dworker-test-faults=true")


def faulty_crasher(env):
    exe = os.path.join(env.base, "crasher-fault")
    shutil.copy(CRASHER, exe)
    return exe


def case_worker_killed_idle():
    """Spare workers killed before any job: they are replaced, the next crash is stored."""
    env = Env({"SpareWorkers": "2"})
    d = env.start()
    spares = d.wait_workers(2)
    for w in spares:
        os.kill(w, signal.SIGKILL)
    wait_until(lambda: len(set(d.children()) - set(spares)) >= 2, 20,
               lambda: f"the killed spares {spares} to be replaced (children {d.children()}):\n{d.log_text()}")
    for w in spares:
        observed(d, rf"[Ww]orker {w}\b.*")
    healthy(env, d)
    check(not set(spares) & set(d.children()), "a killed spare is still counted")
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_worker_dies_recording():
    """The worker crashes after the core is stored, before the journal entry: the core and the
    record stay (the record says the worker died), the daemon's own worker leaves no core of
    itself (it is not dumpable), the next crash is stored."""
    faults_build()
    env = Env({"TimeoutSec": "5"})
    j = Journal(env)
    d = env.start(journal=j, environ={"COREDUMP_WORKER_FAULT": "crash@journal",
                                      "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"})
    pid, rc = crash("segv", exe=faulty_crasher(env))
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    observed(d, rf"Crash of PID {pid} \(crasher-fault\): .* before writing the journal entry; its record is kept")
    check(any(f".{pid}." in c for c in env.cores()), "the stored core was lost with the worker")
    rec = record_of(env, pid)
    check(rec.get("COREDUMP_FILENAME"), f"record without the core's name: {rec}")
    # A dump of the worker would have reached the socket before its death was seen: the next
    # crash, accepted after it (the listen queue is in order), and a stop that finishes every
    # accepted crash leave its record there if there is one.
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")
    comms = [r.get("COREDUMP_COMM") for r in read_exports(env, "record")]
    check(b"coredump-worker" not in comms, f"the worker's own crash was dumped: {comms}")
    j.stop()


def case_worker_dies_analysing():
    """The worker crashes after the core is stored and synced, while it makes the stack traces
    (libdw reads what the crashed process made): the core is kept (it said STORED first), its
    record says what is missing, the next crash is stored."""
    faults_build()
    env = Env()
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "crash@analysis",
                           "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"})
    pid, rc = crash("segv", exe=faulty_crasher(env))
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    observed(d, rf"Crash of PID {pid} \(crasher-fault\): no stack traces, no journal entry: the worker failed \(the "
                r"core was stored\); the core and its record are kept")
    rec = record_of(env, pid)
    name = rec.get("COREDUMP_FILENAME", b"").decode()
    check(name and name in env.cores(), f"the record does not name a stored core: {name!r} {env.cores()}")
    check(b"no stack traces" in rec.get("COREDUMP_PROCESSING_ERROR", b""),
          f"the record does not say why: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    out = decompress(name, os.path.join(env.base, "analysing.core"))
    info = elf_core_info(out)
    check(info["type"] == 4 and info["pids"][0] == pid and info["signal"] == signal.SIGSEGV,
          f"the kept core is not PID {pid}'s: {info}")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")


def python_fault(env):
    """python3 under the name the worker's faults answer to (a link called crasher-fault: its
    comm), killed by SIGSEGV: its PID. A real program, dozens of mapped files."""
    p = start_python_crash(env, "crasher-fault")
    check(p.wait(60) == -signal.SIGSEGV, f"python3 ended with {p.returncode}")
    return p.pid


def case_worker_gives_back():
    """The first worker given a crash cannot start its job (a sandbox it cannot enter, memory it
    cannot have; here a fault of the test build): it gives the connection back before reading a
    byte, and the next worker stores the core whole, with the module files for its stack traces.
    python3, so dozens of them; in socket mode and in pipe mode (the kernel's pipe given back).
    The job goes after /proc (a manager fault: no-early), as when no worker is idle before, so
    the module files go back to the crash with the connection (a job given back while /proc is
    read: faults-early_job_faults)."""
    faults_build()
    for mode in cdtest.modes():
        env = Env({"Mode": mode})
        d = env.start(environ={"COREDUMP_WORKER_FAULT": "giveback", "COREDUMPD_TEST_FAULT": "no-early"})
        pid = python_fault(env)
        observed(d, r"Worker \d+ \(crash of PID %d\): could not start its job \(.*\), and gave it back" % pid)
        rec = record_of(env, pid)
        check("COREDUMP_PROCESSING_ERROR" not in rec,
              f"{mode}: the crash was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}")
        msg = rec.get("MESSAGE", b"")
        # kill() named from libc's own symbols: its file reached the second worker (the core
        # alone names the module, not the function)
        check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", msg) and b"build-id" in msg,
              f"{mode}: the module files did not reach the second worker: {msg[:800]!r}")
        name = rec.get("COREDUMP_FILENAME", b"").decode()
        check(name and name in env.cores(), f"{mode}: the record does not name a stored core: {name!r} {env.cores()}")
        info = elf_core_info(decompress(name, os.path.join(env.base, "given-back.core")))
        check(info["type"] == 4 and info["pids"][0] == pid and info["signal"] == signal.SIGSEGV,
              f"{mode}: the stored core is not PID {pid}'s: {info}")
        check(d.log_text().count("gave it back") == 1 and "core lost" not in d.log_text(),
              f"{mode}: one worker should have given the job back, and the core kept:\n{d.log_text()[-3000:]}")
        healthy(env, d)
        check(d.stop() == 0, f"{mode}: daemon did not stop cleanly")


def faulted_crash(env, fault, log_pattern, why):
    """A daemon whose workers misbehave as fault says, and a crash of crasher-fault: log_pattern
    (with {pid}) is logged, and the crash's record says why in COREDUMP_PROCESSING_ERROR: (d, pid)."""
    d = env.start(environ={"COREDUMP_WORKER_FAULT": fault})
    pid, rc = crash("segv", exe=faulty_crasher(env))
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    observed(d, log_pattern.format(pid=pid))
    rec = record_of(env, pid)
    check(why in rec.get("COREDUMP_PROCESSING_ERROR", b""),
          f"the record does not say why: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    return d, pid


def case_worker_gives_back_twice():
    """Every worker gives the job back: the crash goes to a second worker and no further (the
    failure is the job's then, not a worker's), its record says why the core is missing, and the
    task is released; the daemon goes on."""
    faults_build()
    env = Env()
    d, pid = faulted_crash(env, "giveback2", r"Crash of PID {pid} \(crasher-fault\): its workers could not start on it "
                                             r"\(.*\); core lost, task released", b"could not start")
    check(not any(f".{pid}." in c for c in env.cores()), f"a core of PID {pid} was stored: {env.cores()}")
    check(d.log_text().count("gave it back") == 2, f"two workers should have tried:\n{d.log_text()[-3000:]}")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_worker_gives_back_other():
    """A worker gives back, in place of the crash's connection, another descriptor (its output
    file, as a compromised worker could): the manager takes nothing of it, kills the worker, and
    the crash ends with its record, the task released; no other worker reads anything for it.
    Also for a record-only job, whose connection and output are the same file (/dev/null) opened
    two ways."""
    faults_build()
    env = Env()
    d, _ = faulted_crash(env, "givebackfd", r"Killing worker \d+: gave back a job it could not", b"the worker failed")
    check("gave it back" not in d.log_text(), f"the manager took the job back:\n{d.log_text()[-3000:]}")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")
    # a record-only job (the second crash, refused by the rate limit): its connection and its
    # output are both /dev/null, one read-only, the other write-only: the output is not taken
    env = Env({"RateLimitBurst": "1", "RateLimitIntervalSec": "60s"})
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "givebackfd"})
    exe = faulty_crasher(env)
    pids = [crash("segv", exe=exe)[0] for _ in range(2)]
    record_of(env, pids[1])
    wait_until(lambda: d.log_text().count("gave back a job it could not") == 2, 30,
               lambda: f"both workers killed for what they gave back:\n{d.log_text()[-3000:]}")
    check("gave it back" not in d.log_text(), f"the manager took a record-only job back:\n{d.log_text()[-3000:]}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def early_daemon(env, worker_fault=None, journal=None, manager_faults=()):
    """A daemon whose collectors take 3 s longer (a test fault, as a slow file system would),
    logging at debug level, with a worker idle: each crash's connection goes to that worker while
    /proc is read. manager_faults: more of the manager's test faults."""
    environ = {"COREDUMPD_TEST_FAULT": ",".join(("collect-slow",) + tuple(manager_faults)),
               "COREDUMP_SOCKET_LOG_LEVEL": "debug",
               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"}
    if worker_fault:
        environ["COREDUMP_WORKER_FAULT"] = worker_fault
    d = env.start(environ=environ, journal=journal)
    d.wait_idle_workers(1)
    return d


def output_sizes(pid, store):
    """The sizes of the files in store (O_TMPFILE: linked nowhere yet) that the worker pid has
    open: its output; None if the worker is gone."""
    out = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return None
    for fd in fds:
        try:
            if re.fullmatch(re.escape(store) + r"/#\d+ \(deleted\)", os.readlink(f"/proc/{pid}/fd/{fd}")):
                out.append(os.stat(f"/proc/{pid}/fd/{fd}").st_size)
        except OSError:  # closed meanwhile
            continue
    return out


def case_early_handover():
    """Item 4 of issue 22: a worker idle, the crash's connection goes to it right after the
    kernel's part of /proc, while the collector reads the rest (made 3 s slow here): the worker
    has received the whole core while the task is still held, the task goes once /proc is read,
    and DETAILS brings the worker the whole record and the module files. python3 (a real program,
    dozens of mapped files), in socket and pipe mode: the core stored whole, its top frame named
    from libc's own symbols (its module file), the record and the journal entry with what the
    collector read."""
    faults_build()
    for mode in cdtest.modes():
        env = Env({"Mode": mode, "SpoolMax": "256M"})  # python3's core is spooled
        j = Journal(env)
        d = early_daemon(env, journal=j)
        p = start_python_crash(env, "python3-crash")
        line = d.wait_log(rf"Crash of PID {p.pid}: its worker has the connection while /proc is read")
        got = d.wait_log(rf"\(crash of PID {p.pid}\): .*Core received \((\d+) bytes\) before the crash's details")
        worker = int(re.search(r"Worker (\d+) \(crash of", got).group(1))
        for _ in range(5):  # still held a while after (the collector takes 3 s)
            check(p.poll() is None, f"{mode}: the task was released before /proc was read:\n{d.log_text()[-3000:]}")
            # the spooled core waits for DETAILS too: its compression would take the CPU from the
            # collector the task waits for
            sizes = output_sizes(worker, env.store)
            check(sizes == [0], f"{mode}: the worker's output before DETAILS: {sizes} bytes\n{d.log_text()[-3000:]}")
            time.sleep(0.1)
        check(p.wait(30) == -signal.SIGSEGV, f"{mode}: python3 ended with {p.returncode}")
        d.wait_log(rf"Crash of PID {p.pid}: \d+ bytes spooled, compressed after the release")
        rec = record_of(env, p.pid)
        check("COREDUMP_PROCESSING_ERROR" not in rec, f"{mode}: {rec.get('COREDUMP_PROCESSING_ERROR')}")
        check(rec.get("COREDUMP_CMDLINE") and rec.get("COREDUMP_ENVIRON") and rec.get("COREDUMP_PROC_MAPS"),
              f"{mode}: the record lacks what the collector read: {sorted(rec)}")
        msg = rec.get("MESSAGE", b"")
        # a frame named from libc's own symbol table: its module file came with DETAILS
        check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", msg),
              f"{mode}: no module files in the stack traces: {msg[:800]!r}")
        name = rec.get("COREDUMP_FILENAME", b"").decode()
        info = elf_core_info(decompress(name, os.path.join(env.base, "early.core")))
        check(info["type"] == 4 and info["pids"][0] == p.pid and info["signal"] == signal.SIGSEGV,
              f"{mode}: the stored core is not PID {p.pid}'s: {info}")
        check(re.search(rf"Crash of PID {p.pid} \(python3-crash, uid 0\): core complete", d.log_text()),
              f"{mode}: the stored core is not whole:\n{d.log_text()[-3000:]}")
        entry = j.entry(p.pid)
        check(entry.get("COREDUMP_CMDLINE") == rec.get("COREDUMP_CMDLINE") and b"libc.so.6" in entry.get("MESSAGE", b""),
              f"{mode}: the journal entry is not the whole record's: {sorted(entry)}")
        print(f"observed ({mode}): {line}; {got}; the task released after it")
        healthy(env, d)
        check(d.stop() == 0, f"{mode}: daemon did not stop cleanly")
        j.stop()


def case_early_details_before_grant():
    """The worker given the connection while /proc is read asks for spool room (python3's core
    is larger than the room that comes with a job), and the manager's DETAILS reaches it before
    the GRANT (a test fault holds the GRANT until DETAILS is sent, as a busy manager's loop may
    order them): the worker takes DETAILS, then its GRANT, spools the core and stores it with the
    module files' stack traces. Socket mode, python3."""
    faults_build()
    env = Env()
    d = env.start(environ={"COREDUMPD_TEST_FAULT": "grant-after-details", "COREDUMP_SOCKET_LOG_LEVEL": "debug"})
    d.wait_idle_workers(1)
    p = start_python_crash(env, "python3-crash")
    check(p.wait(60) == -signal.SIGSEGV, f"python3 ended with {p.returncode}")
    d.wait_log(rf"Crash of PID {p.pid}: its worker has the connection while /proc is read")
    line = d.wait_log(rf"\(crash of PID {p.pid}\): .*The crash's details came before the spool's GRANT")
    rec = record_of(env, p.pid)
    check("COREDUMP_PROCESSING_ERROR" not in rec, f"{rec.get('COREDUMP_PROCESSING_ERROR')}")
    check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", rec.get("MESSAGE", b"")),
          f"no module files in the stack traces: {rec.get('MESSAGE', b'')[:800]!r}")
    spooled = d.wait_log(rf"Crash of PID {p.pid}: (\d+) bytes spooled, compressed after the release")
    name = rec.get("COREDUMP_FILENAME", b"").decode()
    info = elf_core_info(decompress(name, os.path.join(env.base, "grant.core")))
    check(info["type"] == 4 and info["pids"][0] == p.pid, f"the stored core is not PID {p.pid}'s: {info}")
    print(f"observed: {line}; {spooled}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_early_job_faults():
    """The worker given the connection while /proc is read (collectors made slow) fails before
    the crash's DETAILS: it gives the job back (the manager kept its copy of the connection: one
    more worker takes the whole job once /proc is read, and stores the core); it sends RESULT
    before DETAILS, as a worker the core took over could (killed for it: the crash's record says
    so, no core); it crashes (the record says so once /proc is read). Each time the task is
    released, nothing is linked for a lost core, and the next crash is stored."""
    faults_build()
    cases = [("giveback", r"Crash of PID {pid}: its worker gave the job back, another takes it after /proc", None),
             ("result", r"Killing worker \d+: sent its result before its crash's details", b"the worker broke the protocol"),
             ("crash", r"Crash of PID {pid} \(crasher-fault\): the worker (failed|died); core lost, task released",
              b"the worker")]
    for fault, pattern, why in cases:
        env = Env()
        d = early_daemon(env, fault)
        pid, rc = crash("segv", exe=faulty_crasher(env))
        check(rc == -signal.SIGSEGV, f"{fault}: crasher ended with {rc}")
        check(f"Crash of PID {pid}: its worker has the connection while /proc is read" in d.log_text(),
              f"{fault}: the job did not go before /proc was read:\n{d.log_text()[-3000:]}")
        observed(d, pattern.format(pid=pid))
        rec = record_of(env, pid)
        cores = [c for c in env.cores() if f".{pid}." in c]
        if why is None:
            check("COREDUMP_PROCESSING_ERROR" not in rec and len(cores) == 1,
                  f"{fault}: the second worker did not store the core: {rec.get('COREDUMP_PROCESSING_ERROR')}")
            info = elf_core_info(decompress(cores[0], os.path.join(env.base, "again.core")))
            check(info["pids"][0] == pid, f"{fault}: the stored core is not PID {pid}'s: {info}")
        else:
            check(why in rec.get("COREDUMP_PROCESSING_ERROR", b"") and not cores,
                  f"{fault}: {rec.get('COREDUMP_PROCESSING_ERROR')} {cores}")
        healthy(env, d)
        check(d.stop() == 0, f"{fault}: daemon did not stop cleanly")


def case_early_returned_unread():
    """The worker given the connection while /proc is read gives the job back and exits, and the
    manager has read neither its RETURNED nor its end when /proc is read (a test fault holds both
    until DETAILS, as when all three come in one iteration of the manager's loop): DETAILS cannot
    be sent, the RETURNED queued says why, and one more worker takes the whole job with the
    manager's own copy of the connection. python3: the core stored whole, its top frame named from
    libc's own symbols (the module files went to the second worker with its job)."""
    faults_build()
    env = Env()
    d = early_daemon(env, "giveback", manager_faults=("early-unread",))
    pid = python_fault(env)
    check(f"Crash of PID {pid}: its worker has the connection while /proc is read" in d.log_text(),
          f"the job did not go before /proc was read:\n{d.log_text()[-3000:]}")
    line = d.wait_log(r"Worker \d+ \(crash of PID %d\): gave its job back before its crash's details" % pid)
    rec = record_of(env, pid)
    check("COREDUMP_PROCESSING_ERROR" not in rec, f"{rec.get('COREDUMP_PROCESSING_ERROR')}")
    check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", rec.get("MESSAGE", b"")),
          f"no module files in the stack traces: {rec.get('MESSAGE', b'')[:800]!r}")
    name = rec.get("COREDUMP_FILENAME", b"").decode()
    info = elf_core_info(decompress(name, os.path.join(env.base, "unread.core")))
    check(info["type"] == 4 and info["pids"][0] == pid and info["signal"] == signal.SIGSEGV,
          f"the stored core is not PID {pid}'s: {info}")
    check(re.search(rf"Crash of PID {pid} \(crasher-fault, uid 0\): core complete", d.log_text()),
          f"the stored core is not whole:\n{d.log_text()[-3000:]}")
    log = d.log_text()
    check(log.count("gave its job back before its crash's details") == 1 and "gave it back" not in log
          and "core lost" not in log, f"one worker should have given the job back, unread:\n{log[-3000:]}")
    print(f"observed: {line}; the core stored by the next worker")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_early_unconfirmed():
    """A user's crash goes to a worker while /proc is read, and that worker becomes the user (the
    kernel's part of /proc says the dump is theirs). The process is then killed and reaped while
    still held (collectors made slow): once /proc is read it cannot be confirmed, so the crash is
    no longer the user's to look at. The worker, which has the whole core, is killed, no core is
    kept, and the record says why, with what the kernel guaranteed; the daemon goes on. python3
    as the test user."""
    faults_build()
    user = test_user()
    env = Env()
    d = early_daemon(env)
    d.wait_idle_workers(2)  # the one not mapped ahead to WorkerUser= is the user's
    p = subprocess.Popen(as_uid(user.pw_uid, user.pw_gid, [USER_PYTHON, "-c", PYTHON_SEGV]))
    _restore.append((lambda: p.poll() is None and p.kill(), f"python3 {p.pid}"))
    d.wait_log(rf"Crash of PID {p.pid}: its worker has the connection while /proc is read")
    d.wait_log(rf"\(crash of PID {p.pid}\): .*Core received \((\d+) bytes\) before the crash's details")
    check(p.poll() is None, f"the task was released before /proc was read:\n{d.log_text()[-3000:]}")
    # the task ends (its dump was whole) and is reaped here while the collector is held (the
    # fault delays it after its reads): once it ends, meta_confirm() finds the process gone
    p.kill()
    check(p.wait(30) == -signal.SIGKILL, f"python3 ended with {p.returncode}")
    line = d.wait_log(r"Killing worker \d+: was not its crash's user once /proc was read")
    rec = record_of(env, p.pid)
    why = rec.get("COREDUMP_PROCESSING_ERROR", b"")
    check(why.startswith(b"its process could not be confirmed once /proc was read, and its worker had become its user"),
          f"the record does not say why: {why!r}")
    check(rec.get("COREDUMP_UID") == str(user.pw_uid).encode() and "COREDUMP_CMDLINE" not in rec,
          f"the record is not what the kernel guaranteed: {sorted(rec)}")
    check(not [c for c in env.cores() if f".{p.pid}." in c], f"a core of PID {p.pid} was kept: {env.cores()}")
    print(f"observed: {line}; record: {why.decode()}")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_worker_hangs_recording():
    """The worker hangs writing the journal entry: killed at the deadline; core and record stay."""
    faults_build()
    env = Env({"TimeoutSec": "3"})
    j = Journal(env)
    d = env.start(journal=j, environ={"COREDUMP_WORKER_FAULT": "hang@journal"})
    pid, rc = crash("segv", exe=faulty_crasher(env))
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    observed(d, rf"Crash of PID {pid} \(crasher-fault\): worker exceeded the per-crash deadline writing the journal entry")
    check(any(f".{pid}." in c for c in env.cores()), "the stored core was lost with the worker")
    record_of(env, pid)
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")
    j.stop()


def case_deadline_after_release():
    """TimeoutSec= bounds how long the task is held. A worker still busy with a spooled core at the
    deadline, its task long released, gets TimeoutSec= once more (slow@analysis: it sleeps 4 s
    after the release, TimeoutSec=3): the core is stored, its record says nothing went wrong. One
    that is still busy then (hang@analysis, TimeoutSec=2) is killed at twice TimeoutSec=; the core
    it stored before is kept, and the log and the record say what is missing."""
    faults_build()
    env = Env({"TimeoutSec": "3"})
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "slow@analysis"})
    t0 = time.monotonic()
    pid, rc = crash("segv", exe=faulty_crasher(env))
    held = time.monotonic() - t0
    check(rc == -signal.SIGSEGV and held < 3, f"crasher ended with {rc} after {held:.1f} s")
    rec = record_of(env, pid)
    check(rec.get("COREDUMP_FILENAME") and "COREDUMP_PROCESSING_ERROR" not in rec,
          f"the slow worker's core was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}\n{d.log_text()}")
    took = time.monotonic() - t0
    check(took > 3, f"the record came after {took:.1f} s, before the deadline: the fault did not slow the worker")
    check(any(f".{pid}." in c for c in env.cores()), f"no core of PID {pid}: {env.cores()}")
    check("exceeded the per-crash deadline" not in d.log_text(), f"a worker was killed:\n{d.log_text()}")
    print(f"observed: PID {pid} released after {held:.2f} s, stored and recorded after {took:.1f} s (TimeoutSec=3)")
    check(d.stop() == 0, "daemon did not stop cleanly")

    env = Env({"TimeoutSec": "2"})
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "hang@analysis"})
    t0 = time.monotonic()
    pid, rc = crash("segv", exe=faulty_crasher(env))
    check(rc == -signal.SIGSEGV and time.monotonic() - t0 < 2, f"crasher ended with {rc}")
    observed(d, rf"Crash of PID {pid} \(crasher-fault\): no stack traces, no journal entry: its worker passed the "
                r"per-crash deadline and was killed \(the core was stored\)")
    took = time.monotonic() - t0
    check(3.8 < took < 12, f"the hung worker was killed after {took:.1f} s, expected twice TimeoutSec=2")
    rec = record_of(env, pid)
    check(b"deadline" in rec.get("COREDUMP_PROCESSING_ERROR", b""),
          f"the record does not say why: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    name = rec.get("COREDUMP_FILENAME", b"").decode()
    check(name and name in env.cores(), f"the core stored before the hang is not kept: {name!r} {env.cores()}")
    healthy(env, d)
    check(d.stop() == 0, "daemon did not stop cleanly")


def listening_socket(env):
    """The listening socket as systemd's socket unit holds it: it outlives the daemon."""
    cdtest.require_socket("the kernel's connections wait in the coredump socket's backlog")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(env.sock)
    os.chmod(env.sock, 0o600)
    s.listen(128)
    write_file(CORE_PATTERN, "@@" + env.sock)
    return s


def case_restart_backlog():
    """The manager stopped (SIGTERM) with a core in flight, crashes arriving while it is down wait
    in the socket's backlog; the next manager takes them: all stored."""
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    s = listening_socket(env)
    d = env.start(extra=["--no-register"], listen_fd=s.fileno())
    p = slow_crash_in_flight(24, 0.3)
    d.proc.send_signal(signal.SIGTERM)
    observed(d, r"stopping after 1 crash\(es\) in flight")
    check(d.proc.wait(60) == 0, f"daemon exited with {d.proc.returncode}")
    queued = [start_crash("segv") for _ in range(5)]
    cdtest.wait_backlog(env.sock, len(queued))
    check(all(q.poll() is None for q in queued), "a queued crash did not wait for the daemon")
    d2 = env.start(extra=["--no-register"], listen_fd=s.fileno())
    s.close()
    for q in queued:
        check(q.wait(60) == -signal.SIGSEGV, f"queued crasher ended with {q.returncode}")
    check(p.wait(60) == -signal.SIGSEGV, "in-flight crasher")
    cores = " ".join(env.wait_cores(6))
    for pid in [p.pid] + [q.pid for q in queued]:
        check(f".{pid}." in cores, f"crash {pid} lost across the restart")
    healthy(env, d2)
    check(d2.stop() == 0, "daemon did not stop cleanly")


def alive(pid):
    """Whether pid runs (a zombie waiting for its new parent does not)."""
    try:
        return "zombie" not in read_file(f"/proc/{pid}/status")
    except OSError:
        return False


def case_manager_killed():
    """The manager killed (SIGKILL) with a core in flight and crashes queued: its worker follows
    it (PDEATHSIG), the task in flight is released (its core lost: nobody is left to say so but
    the next manager's view of the store, which has no partial file); the queued ones are stored
    by the next manager."""
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    s = listening_socket(env)
    d = env.start(extra=["--no-register"], listen_fd=s.fileno())
    p = slow_crash_in_flight(64, 0.5)
    workers = d.children()
    d.proc.kill()
    d.proc.wait()
    # the busy one too: its id change had cleared the parent-death signal, and it went on
    # compressing (CompressLevel=19 takes longer than this) with the task held
    wait_until(lambda: not any(alive(w) for w in workers), 10,
               f"the workers {workers} to die with their manager (they outlived it)")
    check(p.wait(30) == -signal.SIGSEGV, f"in-flight crasher ended with {p.returncode}")
    queued = [start_crash("segv") for _ in range(3)]
    cdtest.wait_backlog(env.sock, len(queued))
    d2 = env.start(extra=["--no-register"], listen_fd=s.fileno())
    s.close()
    for q in queued:
        check(q.wait(60) == -signal.SIGSEGV, f"queued crasher ended with {q.returncode}")
    cores = " ".join(env.wait_cores(3))
    for q in queued:
        check(f".{q.pid}." in cores, f"queued crash {q.pid} lost")
    check(f".{p.pid}." not in cores, "a partial core of the killed manager's crash was linked")
    check(not glob.glob(os.path.join(env.store, ".#*")), "temporary files left")
    healthy(env, d2)
    check(d2.stop() == 0, "daemon did not stop cleanly")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
