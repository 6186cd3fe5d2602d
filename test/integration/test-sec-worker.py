#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A compromised or attacked worker reaches no further than the threat model says (issue 18,
findings 6 and 9): a worker flooding its stderr cannot stall the manager; the worker cannot
have the kernel signal anyone (fcntl F_SETOWN/F_SETSIG/O_ASYNC, ioctl FIOASYNC); with
fs.suid_dumpable=1 the crashing user cannot ptrace the worker that becomes them. Each case
failed before its fix."""
import errno
import fcntl
import os
import re
import signal
import subprocess
import time

from cdtest import (BUILD, SUID_DUMPABLE, SYS_UNSHARE, Env, _restore, check, copy_crasher, crash, record_of, run_cases,
                    save_sysctl, skip, start_crash, start_filtered, test_user, wait_until, write_file)

PROBE = os.path.join(BUILD, "test", "sandbox-probe")
LOG_LINES_MAX = 32  # WORKER_LOG_LINES_MAX
PROMPT_SEC = 10     # another crash stored within this while a worker floods its log
FLOOD_WATCH_SEC = 3  # the manager's CPU time is watched this long from the start of the flood...
FLOOD_CPU_MAX = 1.0  # ...and may not exceed this (seconds): it is not busy reading the flood
RACE_ROUNDS = 20


def core_of(env, pid, d, timeout):
    return wait_until(lambda: [c for c in env.cores() if f".{pid}." in c], timeout,
                      lambda: f"the core of PID {pid}:\n{d.log_text()[-3000:]}")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def case_log_flood():
    """A worker that writes its stderr as fast as it can (the "flood" fault) while the manager
    has another crash to handle: the manager reads the pipe a bounded chunk per event and stops
    at the per-crash budget, so the other crash is stored at once, the manager spends next to
    no CPU on the flood, and the cut is logged once. (Before: drain() read until the pipe was
    empty, handling nothing else meanwhile; the flooder, which could enlarge its pipe to 1 MiB
    with F_SETPIPE_SZ, kept the manager busy reading gigabytes for as long as it wrote -- a
    whole CPU, other crashes waiting whenever the pipe stayed full -- and the drop was only
    counted when the worker ended.)"""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("worker built without -Dworker-test-faults=true")
    env = Env()
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "flood"})
    flooder = start_crash("segv", exe=copy_crasher(env, "crasher-fault"))
    d.wait_log(rf"Worker \d+ \(crash of PID {flooder.pid}\): fff")

    t0, cpu0 = time.monotonic(), cpu_seconds(d.proc.pid)
    other = start_crash("segv")
    core_of(env, other.pid, d, PROMPT_SEC)
    print(f"observed: another crash stored {time.monotonic() - t0:.2f}s into the flood")
    time.sleep(max(0, t0 + FLOOD_WATCH_SEC - time.monotonic()))
    cpu = cpu_seconds(d.proc.pid) - cpu0
    print(f"observed: the manager used {cpu:.2f}s of CPU in the first {FLOOD_WATCH_SEC}s of the flood")
    check(cpu <= FLOOD_CPU_MAX, f"the manager spent {cpu:.2f}s of CPU in {FLOOD_WATCH_SEC}s of a worker's log flood")

    # the flooding worker is cut off (its next write dies of SIGPIPE): its crash still ends with a record
    flooder.wait(60)
    check(flooder.returncode == -signal.SIGSEGV, f"flooding crash ended with {flooder.returncode}")
    record_of(env, flooder.pid, d)
    log = d.log_text()
    cut = re.findall(rf"^.*Worker \d+ \(crash of PID {flooder.pid}\): floods its log.*$", log, re.M)
    check(len(cut) == 1, f"the cut-off is logged {len(cut)} times, not once:\n{log[-3000:]}")
    print("observed:", cut[0])
    lines = re.findall(rf"Worker \d+ \(crash of PID {flooder.pid}\): f+$", log, re.M)
    check(len(lines) == LOG_LINES_MAX, f"{len(lines)} lines of the flood logged, expected {LOG_LINES_MAX}")
    check(not re.search(rf"crash of PID {flooder.pid}\): \d+ bytes of its log not logged", log),
          "the drop is logged a second time when the worker ends")
    check(d.stop() == 0, "daemon did not stop cleanly")


def probe(user, action):
    p = subprocess.run([PROBE, str(user.pw_uid), str(user.pw_gid), action], capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout.strip()


def case_fcntl_async():
    """In the worker's real sandbox, as the crashing user: fcntl F_SETOWN, F_SETOWN_EX, F_SETSIG,
    F_SETLEASE and F_SETFL with O_ASYNC fail with EPERM, ioctl FIOASYNC and FIOSETOWN kill
    (SIGSYS); of all fcntl commands only the five the worker uses pass the filter. A worker still
    stores a user's and root's crash with their stack traces. (Before: fcntl was allowed
    whatever the command, so a compromised worker could have SIGIO of its choosing sent to the
    processes of its uid -- other workers for root crashes -- where Landlock is older than ABI 6.)"""
    if os.geteuid() != 0:
        skip("needs root")
    user = test_user()
    rc, out = probe(user, "none")
    check(rc == 0 and out == "allowed", f"the sandbox itself failed: {rc} {out}")
    expect = {a: f"errno={errno.EPERM}" for a in ("fcntl-setown", "fcntl-setown-ex", "fcntl-setsig", "fcntl-async",
                                                   "fcntl-setlease")}
    expect.update({"ioctl-fioasync": -signal.SIGSYS, "ioctl-fiosetown": -signal.SIGSYS,
                   "fcntl-getfl": "allowed", "fcntl-setfl": "allowed", "fcntl-dupfd-cloexec": "allowed"})
    for action, want in expect.items():
        rc, out = probe(user, action)
        got = rc if isinstance(want, int) else out
        check(got == want, f"{action}: got {rc} {out!r}, expected {want!r}")
    needed = (fcntl.F_GETFD, fcntl.F_GETFL, fcntl.F_SETFL, fcntl.F_DUPFD_CLOEXEC, fcntl.F_ADD_SEALS)
    rc, out = probe(user, "fcntl-scan")
    check(out == "fcntl-ok=" + "".join(f"{c}," for c in sorted(needed)),
          f"fcntl commands that pass the filter: {out!r}, expected only {sorted(needed)}")

    env = Env()
    d = env.start()
    exe = copy_crasher(env, "crasher")
    pid_user, rc = crash("deep", user=user, exe=exe)
    check(rc == -signal.SIGSEGV, f"user crash ended with {rc}")
    pid_root, rc = crash("deep", exe=exe)
    for pid in (pid_user, pid_root):
        core_of(env, pid, d, 60)
        rec = record_of(env, pid, d)
        check(b"cds_crash_middle (crasher + 0x" in rec.get("MESSAGE", b""),
              f"PID {pid}: no stack trace in the record: {rec.get('MESSAGE', b'')[:500]!r}")
    check(d.stop() == 0, "daemon did not stop cleanly")


# The daemon as it runs where user namespaces are refused (a container's seccomp profile, as
# Docker's default one): unshare() fails with EPERM, so workers run without one (sandbox_prepare's
# -EOPNOTSUPP path). The filter is inherited by coredumpd and its workers. Then nothing but the
# dumpable flag stands between the user and a worker that became them (in a user namespace of
# its own, root's, the user lacks CAP_SYS_PTRACE there and is refused anyway).
NO_USERNS = [(0x20, 0, 0, 0),                      # ld [nr]
             (0x15, 0, 1, SYS_UNSHARE),            # jeq unshare
             (0x06, 0, 0, 0x00050000 | 1),         # ret ERRNO(EPERM)
             (0x06, 0, 0, 0x7fff0000)]             # ret ALLOW


def start_without_userns(env, **start):
    """Starts coredumpd under NO_USERNS (a wrapper script standing in for the binary); start:
    env.start()'s arguments."""
    return start_filtered(env, "coredumpd-no-userns", NO_USERNS, **start)


def case_suid_dumpable_one():
    """fs.suid_dumpable=1, workers without a user namespace (NO_USERNS): the crashing user
    tries PTRACE_SEIZE on the worker that takes their crash, in a tight loop from before it
    drops to their uid until it is gone, over RACE_ROUNDS crashes. Every try is refused, and the
    daemon warned about the setting at start. (Before: setresuid() made the worker dumpable
    again, and it stayed so for the rest of the credential steps, until a PR_SET_DUMPABLE after
    no_new_privs: the user attached in that window, before Landlock and seccomp, in the first
    round.)"""
    if os.geteuid() != 0:
        skip("needs root")
    user = test_user()
    save_sysctl(SUID_DUMPABLE)
    write_file(SUID_DUMPABLE, "1")
    env = Env({"SpareWorkers": "1", "RateLimitBurst": "1000"})
    d = start_without_userns(env, environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"})  # to see who took each crash
    exe = copy_crasher(env, "crasher")
    used = set()
    for i in range(RACE_ROUNDS):
        worker = wait_until(lambda: [w for w in d.wait_idle_workers(1) if w not in used], 10,
                            lambda: f"a fresh idle worker (children {d.children()}):\n{d.log_text()[-4000:]}")[0]
        used.add(worker)
        check(os.readlink(f"/proc/{worker}/ns/user") == os.readlink("/proc/self/ns/user"),
              f"worker {worker} has a user namespace of its own: the wrapper did not take")
        a = subprocess.Popen([PROBE, str(user.pw_uid), str(user.pw_gid), "ptrace-race", str(worker), "10"],
                             stdout=subprocess.PIPE, text=True)
        _restore.append((lambda a=a: a.poll() is None and a.kill(), f"attacker {a.pid}"))
        check(a.stdout.readline().strip() == "ready", "the attacker did not start")
        d.wait_log(rf"Worker {worker}: waiting for a job")  # the manager has seen it READY: the crash goes to it
        pid, rc = crash("segv", user=user, exe=exe, timeout=60)
        check(rc == -signal.SIGSEGV, f"round {i}: crash ended with {rc}")
        out = a.communicate(timeout=60)[0].strip()
        print(f"round {i}: worker {worker}: {out}")
        check("attached" not in out, f"round {i}: the user attached to worker {worker} (PID {pid}'s): {out}")
        core_of(env, pid, d, 60)
        # the attack was on the worker that took this crash, and lasted until it was gone
        check(re.search(rf"Worker {worker}: took the job of the crash of PID {pid}$", d.log_text(), re.M),
              f"round {i}: worker {worker} did not take the crash of PID {pid}:\n{d.log_text()[-3000:]}")
        check(out.startswith("refused") and "(timeout)" not in out,
              f"round {i}: the attack on worker {worker} ended before the worker did: {out}")
    print(f"observed: {RACE_ROUNDS} workers, every PTRACE_SEIZE refused (last: {out})")
    print("observed:", d.wait_log(r"fs\.suid_dumpable=1", timeout=1))
    check(d.stop() == 0, "daemon did not stop cleanly")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
