#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Defects an outside review found by reading the code, each shown on the live kernel by a case
that failed before its fix (issue 17, item 4)."""
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

from cdtest import (BUILD, CRASHER, Env, Journal, _restore, check, copy_crasher, crash, fd_targets, read_exports,
                    record_of, run_cases, skip, wait_until)

HELPER = os.path.join(BUILD, "src", "coredump-pipe")


def case_limit_compaction():
    """(a) A rate-limit refusal names the executable that was refused even when the window of
    another executable ended at that moment: summarising it compacts the bucket table, which
    moved the refused executable's bucket away under the pointer the reason was made from
    ("of executable (null)")."""
    interval = 2
    env = Env({"RateLimitBurst": "1", "RateLimitIntervalSec": f"{interval}s"})
    old, looper = copy_crasher(env, "old"), copy_crasher(env, "looper")
    d = env.start()
    crash("segv", exe=old)            # bucket 0: its window ends in `interval` s
    time.sleep(interval + 0.5)
    crash("segv", exe=looper)         # bucket 1, taken
    pid, _ = crash("segv", exe=looper)  # refused: the first of its window
    why = record_of(env, pid, d).get("COREDUMP_PROCESSING_ERROR", b"")
    want = (f"rate limit: more than RateLimitBurst=1 cores of executable {looper} in RateLimitIntervalSec={interval}s; "
            "core not dumped, further crashes in this window are counted in a summary").encode()
    check(why == want, f"refusal reason {why!r}, expected {want!r}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: {why.decode()}")


def fake_handover_server(path):
    """A seqpacket server that takes one connection and closes it unanswered, as coredumpd does
    at its connection limit."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.listen(1)
    return s


def kmsg_since(mark):
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    return out[out.find(mark):] if mark in out else out


def case_pipe_eof():
    """(d) coredump-pipe reports a handover coredumpd closed unanswered as a dropped core (exit
    1, "dropped" in the kernel log), not as queued: whether the server read the message first
    (EOF) or closed it unread, as coredumpd at its connection limit does (ECONNRESET)."""
    d = tempfile.mkdtemp(prefix="coredump-pipe-test.", dir="/run")
    _restore.append((lambda: shutil.rmtree(d, ignore_errors=True), d))
    sleeper = subprocess.Popen(["sleep", "60"])
    _restore.append((lambda: sleeper.poll() is None and sleeper.kill(), f"sleep {sleeper.pid}"))
    for n, read_first in enumerate((True, False)):
        path = os.path.join(d, f"pipe{n}.sock")
        server = fake_handover_server(path)
        mark = f"cds-test-mark-{os.getpid()}-{time.time()}"
        with open("/dev/kmsg", "w") as k:
            k.write(mark + "\n")
        r, w = os.pipe()
        args = [HELPER, path, str(sleeper.pid), str(sleeper.pid), "0", "0", "11", "1", "0", "host", "1"]
        p = subprocess.Popen(args, stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r)
        conn, _ = server.accept()
        if read_first:
            conn.recv(4096)
        else:
            wait_until(lambda: select.select([conn], [], [], 0)[0], 10, "the handover to arrive")
        conn.close()  # no ack
        rc = p.wait(30)
        os.close(w)
        server.close()
        log = kmsg_since(mark)
        how = "read, then closed" if read_first else "closed unread"
        check(rc == 1, f"{how}: coredump-pipe exited {rc} (0 means it said the core waits queued)")
        check("dropped: coredumpd did not take it (it closed the handover unanswered" in log and
              "waits queued" not in log, f"{how}: kernel log after the refusal:\n{log}")
        print(f"observed: {how}: " + [line for line in log.splitlines() if "dropped" in line][0].strip())


def case_reload_storm():
    """(e) Reloads retire starting workers; that is no failure to start, so a burst of reloads
    must not trip the respawn back-off (which left crashes waiting 2 s for a worker)."""
    env = Env({"SpareWorkers": "4"})
    d = env.start()
    for _ in range(12):
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.005)
    d.wait_log(r"Reloading configuration", timeout=20)
    # settled: the retired workers are reaped (no child left but the 4 spares, all idle)
    wait_until(lambda: len(d.children()) == 4 and len(d.wait_idle_workers(4)) == 4, 30,
               lambda: f"4 idle workers and no other child (children {d.children()}):\n{d.log_text()}")
    check("keep failing to start" not in d.log_text(), f"reloads tripped the respawn back-off:\n{d.log_text()}")
    pid, _ = crash("segv")
    env.wait_cores(1, timeout=30)
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: 12 reloads, no back-off; PID {pid}'s core stored")


def handover_msg(pid, tid, has_pidfd=0):
    return struct.pack("<IIiiIIiIQQII65s7x", 0x43445331, 7, pid, tid, 0, 0, 11, 1, 1, 2 ** 64 - 1, has_pidfd, 0,
                       b"host")


def case_pipe_unpinned_peek():
    """(f) Pipe mode without %F: the little read before the decision (exe, size, limits) is read
    only while the named thread is dumping core, like the full collection. A live process that is
    not dumping (a recycled PID) must feed nothing: here its size would have refused the crash."""
    env = Env({"Mode": "pipe", "Storage": "none", "ProcessSizeMax": "16M"})
    d = env.start()
    impostor = subprocess.Popen(["python3", "-c", "import sys, time; b = bytearray(64 << 20); "
                                 "b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); time.sleep(60)"],
                                stdout=subprocess.PIPE)
    _restore.append((lambda: impostor.poll() is None and impostor.kill(), f"impostor {impostor.pid}"))
    check(impostor.stdout.readline().strip() == b"ready", "impostor did not start")
    path = os.path.join(os.path.dirname(env.sock), "pipe.sock")
    r, w = os.pipe()
    os.close(w)  # an empty core: EOF at once
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.sendmsg([handover_msg(impostor.pid, impostor.pid)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", r))])
    s.settimeout(10)
    check(s.recv(1) == b"\x01", "the handover was not taken")
    s.close()
    os.close(r)
    rec = record_of(env, impostor.pid, d)
    why = rec.get("COREDUMP_PROCESSING_ERROR", b"")
    check(b"anonymous memory" not in why, f"the impostor's size decided the crash: {why!r}")
    for f in ("COREDUMP_EXE", "COREDUMP_CMDLINE", "COREDUMP_RLIMIT"):
        check(f not in rec, f"{f} read from a process that is not dumping core: {rec.get(f)!r}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: record of PID {impostor.pid} without /proc facts; PROCESSING_ERROR {why.decode()!r}")


def case_container():
    """(g) Container facts: a crash in a mount namespace of its own (unshare --mount) names the
    first ancestor outside it, which started it (this test) (COREDUMP_CONTAINER_CMDLINE, found by a walk up the ancestors, each
    pinned before it is read); a host crash names none. The host's namespace is PID 1's; where
    PID 1 cannot be inspected (this kind of machine), and the manager was started by hand, that of
    its outermost ancestor that can be (test-container.py runs it in another namespace).
    That a daemon in a private namespace (as under its unit) still tells them apart needs PID 1 to
    be systemd: the VM tests check it (t01)."""
    env = Env()
    d = env.start()
    host, _ = crash("segv")
    p = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--fork", "sh", "-c",
                          f"exec {CRASHER} segv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.wait(60)
    inner = wait_until(lambda: [r for r in read_exports(env, "record") if r.get("COREDUMP_PID") != str(host).encode()
                                and r.get("COREDUMP_COMM") == b"crasher"], 60, lambda: d.log_text())[0]
    h = record_of(env, host, d)
    check("COREDUMP_CONTAINER_CMDLINE" not in h, f"a host crash recorded as a container's: "
          f"{h.get('COREDUMP_CONTAINER_CMDLINE')!r}")
    got = inner.get("COREDUMP_CONTAINER_CMDLINE", b"")
    # systemd's definition: the first ancestor in another mount namespace (unshare itself moved)
    with open("/proc/self/cmdline", "rb") as f:
        starter = f.read().rstrip(b"\0").replace(b"\0", b" ")
    check(got == starter, f"the container crash names {got!r} as its container, expected {starter!r}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: host PID {host}: no container; PID {inner['COREDUMP_PID'].decode()}: container {got.decode()!r}")


def storage_fds(pid, store):
    """The descriptors of process pid that are files of the storage directory (an O_TMPFILE
    shows as "STORE/#INODE (deleted)")."""
    return fd_targets(pid, store + "/")


def case_size_limits():
    """(b) systemd's rule for how much of a core is read: the largest of ProcessSizeMax= and the
    storage's own limit. ExternalSizeMax= below ProcessSizeMax= cuts the stored file, not the
    traces (the stacks come last in a core); Storage=journal with JournalSizeMax= above
    ProcessSizeMax= puts the whole core into the entry. Both were cut at the smaller limit."""
    env = Env({"ExternalSizeMax": "1M"})
    d = env.start()
    pid, _ = crash("mem", 16)
    r = record_of(env, pid, d)
    core = wait_until(lambda: [c for c in env.cores() if f".{pid}." in c], 30, "the core")[0]
    size = len(subprocess.run(["zstd", "-q", "-d", "-c", core], capture_output=True, timeout=60).stdout)
    check(size == 1 << 20, f"stored {size} bytes, ExternalSizeMax=1M")
    check(r.get("COREDUMP_TRUNCATED") == b"1", "the cut core is not marked truncated")
    check(f"Stack trace of thread {pid}:".encode() in r["MESSAGE"], f"no trace past the cut: {r['MESSAGE'][:400]!r}")
    d.stop()
    print(f"observed: ExternalSizeMax=1M: {size} bytes stored, truncated, stack trace of thread {pid} present")

    env = Env({"Storage": "journal", "JournalSizeMax": "64M", "ProcessSizeMax": "1M"})
    j = Journal(env)
    d = env.start(journal=j)
    pid, _ = crash("mem", 16)
    e = j.entry(pid)
    got = len(e.get("COREDUMP", b""))
    check(got > 16 << 20 and e["COREDUMP"][:4] == b"\x7fELF" and "COREDUMP_TRUNCATED" not in e,
          f"Storage=journal, JournalSizeMax=64M, ProcessSizeMax=1M: {got} bytes of core in the entry")
    d.stop()
    print(f"observed: Storage=journal, JournalSizeMax=64M, ProcessSizeMax=1M: the entry holds all {got} bytes")


def case_output_retry():
    """(h) A crash whose preparation fails after its output was opened is recorded without a
    core on a second try; the first try's output is closed, not leaked (an unlinked file holding
    disk space in the store until the daemon exits), and the record names the real reason, not
    "the kernel gave up". Needs the fault build (-Dworker-test-faults=true)."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("needs a build with -Dworker-test-faults=true (the sanitizer build of tools/run-tests.sh)")
    env = Env()
    d = env.start(environ={"COREDUMPD_TEST_FAULT": "stream-timer"})
    pid, _ = crash("segv")
    r = record_of(env, pid, d)
    why = r.get("COREDUMP_PROCESSING_ERROR", b"")
    check(why.startswith(b"the crash could not be prepared for its worker: Cannot allocate memory"),
          f"PROCESSING_ERROR {why!r}")
    check("COREDUMP_FILENAME" not in r and not env.cores(), "a core was stored")
    leaked = storage_fds(d.proc.pid, os.path.realpath(env.store))
    check(not leaked, f"the daemon still holds {leaked} after the crash")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: PID {pid}: {why.decode()}; no descriptor of the store left open")


if __name__ == "__main__":
    run_cases({"limit_compaction": case_limit_compaction, "pipe_eof": case_pipe_eof, "reload_storm": case_reload_storm,
               "pipe_unpinned_peek": case_pipe_unpinned_peek, "container": case_container,
               "output_retry": case_output_retry, "size_limits": case_size_limits})
