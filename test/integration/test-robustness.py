#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Socket activation, hostile clients, cut-off cores, a full disk, a stuck worker, reloads:
each must end with a clear record and a healthy daemon that stores the next crash."""
import glob
import os
import re
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import cdtest
from cdtest import (COREDUMPD, CORE_PATTERN, CRASHER, PYTHON_SEGV, Env, check, crash, decompress, elf_core_info, run_cases,
                    start_crash, fill, read_exports, record_of, slow_crash_in_flight, wait_until, write_file, xattrs,
                    read_file)

ET_CORE = 4


def crash_status(mode="segv", *args):
    """Raw wait status, to tell a dumped core (WCOREDUMP) from a plain kill."""
    pid = os.posix_spawn(CRASHER, [CRASHER, mode, *map(str, args)], os.environ)
    _, status = os.waitpid(pid, 0)
    return pid, status


def healthy(env, d, n_before):
    """The daemon still stores the next crash."""
    pid, rc = crash("segv")
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    cores = env.wait_cores(n_before + 1)
    check(any(f".{pid}." in c for c in cores), f"no core for PID {pid}: {cores}")


def case_socket_activation():
    """The socket bound by someone else (systemd) arrives as fd 3 with LISTEN_FDS/LISTEN_PID;
    a crash that came before the daemon waited in the backlog and is stored once it runs."""
    cdtest.require_socket("the socket passed is the kernel's coredump socket")
    env = Env()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(env.sock)
    os.chmod(env.sock, 0o600)
    s.listen(128)
    write_file(CORE_PATTERN, "@@" + env.sock)
    early = start_crash("segv")
    cdtest.wait_backlog(env.sock, 1)
    check(early.poll() is None, "the crash did not wait for the daemon (kernel dropped it?)")
    d = env.start(extra=["--no-register"], listen_fd=s.fileno())
    s.close()
    d.wait_log(r"Using the socket passed by the service manager: " + env.sock)
    check(early.wait(30) == -signal.SIGSEGV, "early crasher did not die of SIGSEGV")
    path = env.wait_cores(1)[0]
    check(f".{early.pid}." in path, f"stored core {path} is not the early crash {early.pid}")
    info = elf_core_info(decompress(path, os.path.join(env.base, "core.elf")))
    check(info["pids"][0] == early.pid, f"core of {info['pids'][:1]}, expected {early.pid}")
    healthy(env, d, 1)
    check(d.stop() == 0, "daemon did not stop cleanly")
    check(os.path.exists(env.sock), "the daemon removed a socket it did not bind")
    check(read_file(CORE_PATTERN) == "@@" + env.sock, "--no-register daemon touched core_pattern")


def case_fake_client():
    """Root connecting by hand, speaking the protocol perfectly, is still not the kernel."""
    cdtest.require_socket("the fake clients speak to the kernel's socket (pipe mode's handover: test-pipe refusals)")
    env = Env()
    d = env.start()
    req = struct.pack("<IIQ", 16, 16, 0xF)
    elf = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HH", ET_CORE, 62) + b"\0" * 44
    for i in range(30):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(10)
        c.connect(env.sock)
        try:
            c.sendall(req + elf if i % 2 else elf)
            got = c.recv(64)
        except (ConnectionResetError, BrokenPipeError):
            got = b""
        check(got == b"", f"fake client got an answer: {got!r}")
        c.close()
    time.sleep(0.5)
    check(env.cores() == [], f"a fake client's core was stored: {env.cores()}")
    log = d.log_text()
    check("Refused a connection on the coredump socket: peer is not a task being dumped" in log, f"no refusal logged:\n{log}")
    check(log.count("Refused a connection") <= 5, "refusals are not rate-limited")
    healthy(env, d, 0)
    d.stop()


def case_reject():
    """Policy rejects before a byte of the core is sent: the task dies without a dump, logged."""
    cdtest.require_socket("only the @@ protocol lets the daemon refuse a dump before it starts")
    env = Env({"Storage": "none", "ProcessSizeMax": "0"})
    d = env.start()
    pid, status = crash_status("segv")
    check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV, f"status {status:#x}")
    check(not os.WCOREDUMP(status), "rejected dump still reported as dumped")
    d.wait_log(rf"Crash of PID {pid} \(crasher, uid 0\): no core \(Storage=none and ProcessSizeMax=0")
    check(env.cores() == [], "a rejected core was stored")
    d.stop()


def case_disconnect_midcore():
    """The task is killed while its core streams: the part received is kept, marked truncated."""
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})  # slow on purpose: the kernel is still writing when we kill
    d = env.start()
    p = slow_crash_in_flight(256, 1.5)
    p.kill()
    check(p.wait(10) == -signal.SIGKILL, f"crasher ended with {p.returncode}")
    d.wait_log(rf"Crash of PID {p.pid} .*truncated: the stream ended early")
    path = env.wait_cores(1)[0]
    check(xattrs(path).get("truncated") == "1", "truncated core not marked")
    core = decompress(path, os.path.join(env.base, "core.elf"))
    size = os.path.getsize(core)
    check(0 < size < 256 << 20, f"truncated core has {size} bytes")
    check(elf_core_info(core)["type"] == ET_CORE, "truncated core lost its ELF header")
    healthy(env, d, 1)
    d.stop()


def case_size_limit():
    """ExternalSizeMax cuts the stored core exactly there, marks it, and releases the task."""
    env = Env({"ExternalSizeMax": "1M"})
    d = env.start()
    pid, rc = crash("mem", 64)
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    d.wait_log(rf"Crash of PID {pid} .*truncated at the configured size limit")
    path = env.wait_cores(1)[0]
    check(xattrs(path).get("truncated") == "1", "cut core not marked truncated")
    core = decompress(path, os.path.join(env.base, "core.elf"))
    check(os.path.getsize(core) == 1 << 20, f"stored {os.path.getsize(core)} bytes, expected exactly 1 MiB")
    info = elf_core_info(core)
    check(info["type"] == ET_CORE and info["pids"][0] == pid, f"cut core unreadable: {info}")
    d.stop()


def case_disk_full():
    """Storage on a tiny tmpfs: a core larger than the room is stored cut within it (a complete
    file, room left for its record, which says why), a crash on a full disk gets no file and a
    log line saying why, and crashes after space returns are stored. (KeepFree=0: here the disk
    is full of something the vacuum may not delete; limits-keep_free has the vacuum's part.)"""
    env = Env({"KeepFree": "0"})
    env.mount_tmpfs(env.store, "8M")
    d = env.start()
    pid, rc = crash("mem", 64, "random")
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    rec = wait_until(lambda: {r["COREDUMP_PID"]: r for r in read_exports(env, "record")}.get(str(pid).encode()), 30,
                     lambda: f"the record of PID {pid}:\n{d.log_text()}")
    why = rec.get("COREDUMP_PROCESSING_ERROR", b"")
    check(rec.get("COREDUMP_TRUNCATED") == b"1" and b"KeepFree=" in why,
          f"the record does not say the core was cut for room: {why!r}")
    path = rec.get("COREDUMP_FILENAME", b"").decode()
    check(path in env.cores(), f"the record names no stored core: {path!r} {env.cores()}")
    check(subprocess.run(["zstd", "-q", "-t", path]).returncode == 0, "the cut core is not a complete zstd file")
    os.unlink(path)
    healthy(env, d, 0)

    filler = os.path.join(env.store, "filler")
    fill(filler)
    pid, _ = crash("segv")
    d.wait_log(rf"Crash of PID {pid} \(crasher\): no room in the store")
    check(len(env.cores()) == 1, "a core was stored on a full disk")
    # (no record of this one to check: the disk has no room for it either)
    os.unlink(filler)
    healthy(env, d, 1)
    d.stop()


def case_deadline():
    """A worker that stops reading is killed at the deadline and the crashed task released."""
    env = Env({"TimeoutSec": "2", "SpareWorkers": "2"})
    d = env.start()
    workers = d.wait_idle_workers(2)  # stopped before READY they would be replaced, not given the crash
    for w in workers:
        os.kill(w, signal.SIGSTOP)
    t0 = time.monotonic()
    pid, rc = crash("segv", timeout=30)
    elapsed = time.monotonic() - t0
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    check(elapsed < 10, f"task held {elapsed:.1f}s with a 2s deadline")
    d.wait_log(rf"Crash of PID {pid} \(crasher\): worker exceeded the per-crash deadline")
    check(env.cores() == [], "a core was stored by a stopped worker")
    for w in workers:
        try:
            os.kill(w, signal.SIGCONT)
        except ProcessLookupError:
            pass
    healthy(env, d, 0)
    d.stop()


def case_worker_dies():
    """A worker killed mid-core: the crash is recorded as lost, the task released, the next
    crash stored by a fresh worker."""
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    d = env.start()
    p = slow_crash_in_flight(256, 1.0)
    for w in d.children():
        os.kill(w, signal.SIGKILL)
    check(p.wait(10) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    d.wait_log(rf"Crash of PID {p.pid} \(crasher\): the worker (died|failed); core lost, task released")
    check(env.cores() == [], f"a core was stored by a dead worker: {env.cores()}")
    healthy(env, d, 0)
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_worker_replaced():
    """A package upgrade replaces the binaries under a running daemon (a new file renamed over
    the old, as dpkg does): the manager keeps spawning the worker it found at start-up, of its
    own version, so every crash until its restart is still stored. Here the new "worker" is a
    program that fails at once."""
    env = Env({"SpareWorkers": "1"})
    bindir = os.path.join(env.base, "bin")
    os.mkdir(bindir)
    for name in ("coredumpd", "coredump-worker", "coredump-pipe"):  # (the pipe helper: pipe mode's pattern)
        shutil.copy2(os.path.join(os.path.dirname(COREDUMPD), name), bindir)
    cdtest.COREDUMPD = os.path.join(bindir, "coredumpd")
    try:
        d = env.start()
    finally:
        cdtest.COREDUMPD = COREDUMPD
    new = os.path.join(bindir, "coredump-worker.dpkg-new")
    write_file(new, "#!/bin/sh\necho 'a worker of another version' >&2\nexit 1\n")
    os.chmod(new, 0o755)
    os.rename(new, os.path.join(bindir, "coredump-worker"))
    for i in range(3):  # more than the spare started before the replacement
        healthy(env, d, i)
    check("another version" not in d.log_text() and "Failed to start a worker" not in d.log_text(),
          f"the replaced worker binary was started:\n{d.log_text()}")
    # spawned through /proc/self/fd/N, the workers still carry their name (ps, tests, _COMM)
    comms = d.worker_names()
    check(comms == {"coredump-worker"}, f"the workers are named {comms}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def python_crash(marker):
    """python3 killed by SIGSEGV with marker in its command line and environment: its PID."""
    p = subprocess.Popen([sys.executable, "-c", PYTHON_SEGV, marker],
                         env=dict(os.environ, CDS_SPARE_MARKER=marker))
    check(p.wait(60) == -signal.SIGSEGV, f"python3 ended with {p.returncode}")
    return p.pid


def case_collector_spare():
    """What may block on a crashed process (its command line, environment, memory map, mapped
    files) is read by a collector forked ahead of the crash: one coredump-proc child of coredumpd
    that keeps no descriptor but its socket, used for one crash, and forked anew once that crash
    is done. A spare that is killed is replaced by a fork at the next crash, which is read whole
    all the same. A real program (python3, dozens of mapped files) each time."""
    env = Env()
    d = env.start()
    first = wait_until(lambda: d.collectors(), 10, lambda: f"a spare collector:\n{d.log_text()}")
    check(len(first) == 1, f"one spare collector expected: {first}")
    held = {fd: os.readlink(f"/proc/{first[0]}/fd/{fd}") for fd in os.listdir(f"/proc/{first[0]}/fd")}
    beyond = [t for fd, t in held.items() if int(fd) > 2]
    check(len(beyond) == 1 and beyond[0].startswith("socket:"), f"the spare holds more than stdio and its socket: {held}")

    def whole(pid, marker):
        rec = record_of(env, pid, d)
        check(marker.encode() in rec.get("COREDUMP_CMDLINE", b""), f"no command line: {rec.get('COREDUMP_CMDLINE')}")
        check(f"CDS_SPARE_MARKER={marker}".encode() in rec.get("COREDUMP_ENVIRON", b""), "no environment")
        check("COREDUMP_PROC_INCOMPLETE" not in rec, f"incomplete: {rec.get('COREDUMP_PROC_INCOMPLETE')}")
        msg = rec.get("MESSAGE", b"")
        # kill() named from libc's own symbols: the collector's files reached the worker
        check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", msg) and b"build-id" in msg,
              f"no module files in the traces: {msg[:800]!r}")

    pid = python_crash("first")
    whole(pid, "first")
    second = wait_until(lambda: [p for p in d.collectors() if p not in first], 10,
                        lambda: f"a new spare after the crash (had {first}):\n{d.log_text()}")
    check(first[0] not in d.collectors(), "the used collector is still there")
    os.kill(second[0], signal.SIGKILL)
    pid = python_crash("after-kill")
    whole(pid, "after-kill")
    check(d.proc.poll() is None, "the daemon went with its spare")
    last = wait_until(lambda: d.collectors(), 10, lambda: f"a spare after the second crash:\n{d.log_text()}")
    check(d.stop() == 0, "daemon did not stop cleanly")

    def gone(pid):
        try:
            return read_file(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True
    wait_until(lambda: all(gone(p) for p in last), 10, lambda: f"the spare {last} outlived the daemon")


def case_job_send_lost():
    """The worker given a crash dies as its job is sent (a fault of the test build kills it just
    before): the crash goes to the next idle worker, with its connection, output file and every
    module file, and is stored whole. A real program (python3, dozens of mapped files) as root,
    so the first worker is the one mapped ahead and the second is mapped on the spot. The job
    goes after /proc (another fault: no-early), as when no worker is idle before: with its module
    files (the early handover's own failures: faults-early_job_faults)."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        cdtest.skip("needs a build with -Dworker-test-faults=true (the sanitizer build of tools/run-tests.sh)")
    env = Env()
    d = env.start(environ={"COREDUMPD_TEST_FAULT": "job-send,no-early"})
    spares = d.wait_idle_workers(2)
    pid = python_crash("job-send")
    line = d.wait_log(r"Worker (\d+): could not be sent its job: .*")
    print("observed:", line)
    killed = int(re.search(r"Worker (\d+):", line).group(1))
    check(killed in spares, f"the worker killed ({killed}) was not an idle spare ({spares})")
    rec = record_of(env, pid, d)
    check("COREDUMP_PROCESSING_ERROR" not in rec, f"the crash was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    msg = rec.get("MESSAGE", b"")
    check(b"libc.so.6" in msg and b"build-id" in msg, f"the module files did not reach the second worker: {msg[:800]!r}")
    cores = [c for c in env.cores() if f".{pid}." in c]
    check(len(cores) == 1, f"one core of PID {pid} expected: {env.cores()}")
    out = decompress(os.path.join(env.store, cores[0]), os.path.join(env.base, "job-send.core"))
    info = elf_core_info(out)
    check(info["type"] == ET_CORE and info["pids"][0] == pid and info["signal"] == signal.SIGSEGV,
          f"the stored core is not PID {pid}'s: {info}")
    check(f"Crash of PID {pid} (python3" in d.log_text() and "core lost" not in d.log_text(),
          f"the log says the core was lost:\n{d.log_text()}")
    check(killed not in d.children(), f"the killed worker {killed} is still there")
    healthy(env, d, 1)
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: PID {pid} stored after worker {killed} died at its job")


def case_nofile():
    """Started with a soft descriptor limit of 1024 (as by hand), coredumpd raises it to the hard
    one, at most 65536: each crash in flight may hold 128 module files until its worker has begun.
    python3 (dozens of them) is stored whole under it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 1024:
        cdtest.skip(f"the hard descriptor limit is {hard}: nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        env = Env()
        d = env.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    with open(f"/proc/{d.proc.pid}/limits") as f:
        line = next(x for x in f if x.startswith("Max open files"))
    got = int(line.split()[3])
    check(got == min(hard, 65536), f"coredumpd's soft limit is {got}, expected {min(hard, 65536)}: {line!r}")
    pid = python_crash("nofile")
    rec = record_of(env, pid, d)
    check("COREDUMP_PROCESSING_ERROR" not in rec, f"not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: soft limit {got} (started with 1024, hard {hard})")


def case_map_refused():
    """A crash whose user cannot be mapped into a worker (refused: a fault of the test build makes
    every mapping of a job's ids fail with EPERM, mapping ahead excepted) kills the one worker it
    was given, not every spare in turn until its deadline: it is dropped at once, its record says
    why, and root's next crash is stored by a spare mapped ahead."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        cdtest.skip("needs a build with -Dworker-test-faults=true (the sanitizer build of tools/run-tests.sh)")
    user = cdtest.test_user()
    env = Env({"TimeoutSec": "20"})
    d = env.start(environ={"COREDUMPD_TEST_FAULT": "map-refused"})
    d.wait_idle_workers(2)
    exe = os.path.join(env.base, "crasher")
    shutil.copy(CRASHER, exe)
    os.chmod(env.base, 0o755)
    t0 = time.monotonic()
    p = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", exe, "segv"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    check(p.returncode == -signal.SIGSEGV, f"the user's crasher ended with {p.returncode}")
    pid = None
    line = d.wait_log(r"Crash of PID \d+ \(crasher\): could not be handed to a worker: Operation not permitted")
    print("observed:", line)
    took = time.monotonic() - t0
    check(took < 10, f"dropped after {took:.1f} s: it waited for its deadline")
    pid = int(re.search(r"Crash of PID (\d+)", line).group(1))
    # its record ends the crash: no worker is tried for it after that
    rec = record_of(env, pid, d)
    kills = re.findall(r"Killing worker \d+: could not be mapped its job's user", d.log_text())
    check(len(kills) == 1, f"{len(kills)} workers killed for the crash, expected 1:\n{d.log_text()}")
    check(rec.get("COREDUMP_PROCESSING_ERROR", b"").startswith(b"could not be handed to a worker: Operation not permitted"),
          f"the record does not say why: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    check(not [c for c in env.cores() if f".{pid}." in c], "a core was stored")
    healthy(env, d, 0)
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_graceful_stop():
    """SIGTERM while a core streams: the pattern is given back at once, the crash in flight is
    finished and stored, then the daemon exits."""
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    before = env.saved_pattern
    d = env.start()
    p = slow_crash_in_flight(24, 0.3)
    d.proc.send_signal(signal.SIGTERM)
    d.wait_log(r"stopping after 1 crash\(es\) in flight")
    check(read_file(CORE_PATTERN) == before, "core_pattern not given back when stopping began")
    check(p.wait(60) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    check(d.proc.wait(60) == 0, f"daemon exited with {d.proc.returncode}")
    check(f"Crash of PID {p.pid} (crasher, uid 0): core complete" in d.log_text(), f"in-flight crash not stored:\n{d.log_text()}")
    check(len(env.cores()) == 1, f"expected the in-flight core stored: {env.cores()}")
    check(d.children() == [], "workers left behind")


def case_bad_socket_path():
    """A socket path the kernel cannot use or others could tamper with is refused, clearly."""
    env = Env()
    link = os.path.join(env.rundir, "link")
    os.symlink(env.rundir, link)
    open_dir = tempfile.mkdtemp(dir=env.base)
    os.chmod(open_dir, 0o777)
    for path, why in ((os.path.join(link, "k.sock"), "has a symlink at 'link'"),
                      (os.path.join(open_dir, "k.sock"), "is group- or world-writable"),
                      ("relative.sock", "must be absolute"),
                      ("/run/" + "x" * 120, "must be absolute, without spaces, shorter than 108")):
        p = subprocess.run([COREDUMPD, f"--socket={path}", f"--config={env.conf}", "--config-dir=/nonexistent"],
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 1, f"{path}: exit {p.returncode}")
        check(why in p.stderr, f"{path}: expected '{why}' in:\n{p.stderr}")
    check(read_file(CORE_PATTERN) == env.saved_pattern, "a refused daemon touched core_pattern")


def case_plain_protocol():
    """The "@" pattern of 6.16 (no request, the core at once) goes through the same path."""
    cdtest.require_socket("the case is the socket's plain @ protocol")
    env = Env({"ProcessSizeMax": "0"})  # limits processing only: the core is still stored
    write_file(CORE_PATTERN, "@" + env.sock)
    d = env.start(extra=["--no-register"])
    pid, rc = crash("threads", 4)
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    path = env.wait_cores(1)[0]
    info = elf_core_info(decompress(path, os.path.join(env.base, "core.elf")))
    check(info["pids"][0] == pid and info["threads"] == 5, f"bad core over '@': {info}")
    check("truncated" not in xattrs(path), "ProcessSizeMax=0 cut the stored core")
    d.stop()


def case_reload():
    """SIGHUP re-reads the configuration; an invalid one is refused and the old one kept."""
    env = Env()
    d = env.start()
    env.write_config({"ExternalSizeMax": "-5"})
    d.proc.send_signal(signal.SIGHUP)
    d.wait_log(r"coredump.conf:\d+: Invalid value for ExternalSizeMax=")
    d.wait_log(r"keeping the previous one")
    healthy(env, d, 0)
    check(env.cores()[0].endswith(".zst"), "old configuration not kept")
    env.write_config({"Compress": "lz4"})
    d.proc.send_signal(signal.SIGHUP)
    # the second reload logged: it is applied before the event loop takes the next crash
    wait_until(lambda: d.log_text().count("Reloading configuration") >= 2, 20,
               lambda: f"the second reload:\n{d.log_text()}")
    pid, _ = crash("segv")
    path = [c for c in env.wait_cores(2) if f".{pid}." in c]
    check(path and path[0].endswith(".lz4"), f"new configuration not applied: {env.cores()}")
    d.stop()


def case_vacuum():
    """MaxUse= bounds the store: after each core the oldest ones go (never the one just written),
    their records stay, and the log says what was deleted."""
    env = Env({"MaxUse": "48K", "KeepFree": "0"})
    d = env.start()
    pids = []
    for i in range(4):
        pid, _ = crash("segv")
        pids.append(pid)
        wait_until(lambda: any(f".{pid}." in c for c in env.cores()), 30,
                   lambda: f"the core just written ({pid}); cores {env.cores()}")
    # the vacuum runs right after the core is linked: give the last one a moment to finish
    d.wait_log(rf"Vacuumed core\.crasher\.0\..*\.{pids[0]}\.")

    def allocated(path):  # a core may go between the listing and the stat
        try:
            return os.stat(path).st_blocks * 512
        except FileNotFoundError:
            return 0

    def used():
        return sum(allocated(c) for c in env.cores())
    wait_until(lambda: used() <= 48 << 10 or len(env.cores()) == 1, 10,
               lambda: f"the store within MaxUse=48K: {len(env.cores())} cores, {used()} bytes")
    check(not any(f".{pids[0]}." in c for c in env.cores()), "the oldest core was not vacuumed")

    def records():
        return glob.glob(os.path.join(env.store, "record.*"))
    # the last crash's record comes after its vacuum
    wait_until(lambda: len(records()) >= 4, 20, lambda: f"the 4 records, which must stay: {records()}")
    check(len(records()) == 4, f"records must stay: {records()}")
    d.stop()


def case_restore_on_failure():
    """core_pattern and the daemon are cleaned up when a test fails or is killed."""
    before = read_file(CORE_PATTERN)
    here = os.path.dirname(os.path.abspath(__file__))
    for how in ("raise", "sigterm"):
        code = ("import os, signal, sys; sys.path.insert(0, %r); from cdtest import *\n"
                "e = Env(); d = e.start(); print('daemon', d.proc.pid, flush=True)\n"
                "assert read_file(CORE_PATTERN) == e.pattern()\n"
                "os.kill(os.getpid(), signal.SIGTERM) if %r == 'sigterm' else None\n"
                "raise RuntimeError('test failure')\n") % (here, how)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        check(p.returncode != 0, f"{how}: the failing test passed")
        m = re.search(r"^daemon (\d+)$", p.stdout, re.M)
        check(m, f"{how}: the daemon did not start:\n{p.stdout}{p.stderr}")
        daemon = int(m.group(1))
        check(read_file(CORE_PATTERN) == before, f"{how}: core_pattern left as {read_file(CORE_PATTERN)!r}")
        check(not os.path.exists(f"/proc/{daemon}") or "zombie" in read_file(f"/proc/{daemon}/status"),
              f"{how}: daemon {daemon} left running")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
