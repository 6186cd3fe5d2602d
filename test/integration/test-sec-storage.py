#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile local users against the store (issue 18, findings 4, 5 and 7), each case failing
before its fix: incompressible cores filling the file system past KeepFree=, a worker growing
its core after RESULT, the vacuum made to delete root's core and record (by a core larger than
MaxUse=, or by one lighter than root's that pushes the store past it), cores started together
each counting on the whole of MaxUse=, and ACLs for DynamicUser= uids."""
import concurrent.futures
import glob
import os
import re
import subprocess
import threading
import types

from cdtest import (CRASHER, USER_PYTHON, Env, acl_users, check, crash, record_of, run_cases, skip, test_user,
                    wait_until, xattrs)

MIB = 1 << 20
# big incompressible cores on a busy machine: their records may take a while
RECORD_WAIT = 120


def record_path(env, pid):
    return next((os.path.join(env.store, n) for n in os.listdir(env.store)
                 if n.startswith("record.") and f".{pid}." in n), None)


def user_python(user, code, *args, env=None):
    """Runs code with the system's python3 as user; returns (pid, returncode)."""
    cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", USER_PYTHON, "-c", code,
           *args]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.wait(300)
    return p.pid, p.returncode


# A high-entropy file mapped many times, file mappings dumped: a core many times larger than the
# memory the process uses, and incompressible.
MAP_MANY = """
import mmap, os, signal, sys
with open("/proc/self/coredump_filter", "w") as f:
    f.write("0x3f")
fd = os.open(sys.argv[1], os.O_RDONLY)
maps = [mmap.mmap(fd, 0, prot=mmap.PROT_READ) for _ in range(int(sys.argv[2]))]
os.kill(os.getpid(), signal.SIGSEGV)
"""


class FreeWatch:
    """The least free space a file system had while it watched (polled every few ms)."""

    def __init__(self, path):
        self.path, self.least, self.done = path, None, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            st = os.statvfs(self.path)
            free = st.f_bavail * st.f_frsize
            self.least = free if self.least is None else min(self.least, free)
            self.done.wait(0.003)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.least


def case_disk_cap():
    """A user's incompressible cores (a 16 MiB random file mapped 8 times: 128 MiB each), 4 at
    once, against a 256 MiB store with KeepFree=64M: free space never goes below KeepFree= by
    more than 4 MiB per core in flight (the worker asks the file system every MiB), and each core
    is stored truncated with the reason, or not stored with the reason; a stored one is a
    complete zstd file. Before: the cores filled the file system to the last block."""
    user = test_user()
    keep_free, lanes, slack = 64 * MIB, 4, 4 * MIB
    # (no per-user cap: finding 3's, which counts a crash over it in a summary, has tests of its own)
    env = Env({"KeepFree": "64M", "MaxUse": "1G", "RateLimitBurst": "100", "MaxParallelPerUser": "infinity"})
    env.mount_tmpfs(env.store, "256M")
    blob = os.path.join(env.base, "entropy")
    with open(blob, "wb") as f:
        f.write(os.urandom(16 * MIB))
    os.chmod(blob, 0o644)
    d = env.start()
    watch = FreeWatch(env.store)
    with concurrent.futures.ThreadPoolExecutor(lanes) as pool:
        done = list(pool.map(lambda _: user_python(user, MAP_MANY, blob, "8"), range(lanes)))
    recs = {pid: record_of(env, pid, d, RECORD_WAIT) for pid, _ in done}
    least = watch.stop()
    print(f"observed: least free {least / MIB:.1f} MiB (KeepFree= 64 MiB, slack {lanes * slack // MIB} MiB)")
    check(least >= keep_free - lanes * slack,
          f"free space went down to {least / MIB:.1f} MiB, KeepFree= is 64 MiB:\n{d.log_text()[-6000:]}")
    stored = verified = 0
    for pid, r in recs.items():
        why = r.get("COREDUMP_PROCESSING_ERROR", b"").decode()
        if "COREDUMP_FILENAME" in r:
            check(r.get("COREDUMP_TRUNCATED") == b"1", f"PID {pid}: a 128 MiB core stored whole? {why!r}")
            check("KeepFree=" in why or "MaxUse=" in why, f"PID {pid}: truncated without the reason: {why!r}")
            path = r["COREDUMP_FILENAME"].decode()
            if os.path.exists(path):  # the vacuum may have taken it since
                check(subprocess.run(["zstd", "-q", "-t", path]).returncode == 0, f"{path} is not a complete zstd file")
                verified += 1
            stored += 1
        else:
            check("no room in the store" in why, f"PID {pid}: no core and no reason: {why!r}")
        print(f"observed: PID {pid}: {'stored' if 'COREDUMP_FILENAME' in r else 'no core'}: {why}")
    check(stored >= 1, "no core was stored at all")
    if not verified:
        # Each core stored pushed the earlier ones out to keep KeepFree= (as it should): all four
        # can be gone by now. One more crash, alone, is the newest core: nothing vacuums it.
        pid, _ = user_python(user, MAP_MANY, blob, "8")
        r = record_of(env, pid, d, RECORD_WAIT)
        path = r.get("COREDUMP_FILENAME", b"").decode()
        check(path and os.path.exists(path), f"PID {pid}, alone: not stored: {r.get('COREDUMP_PROCESSING_ERROR')}")
        check(subprocess.run(["zstd", "-q", "-t", path]).returncode == 0, f"{path} is not a complete zstd file")
        print(f"observed: PID {pid}, alone after the others were vacuumed: stored, a complete zstd file")
        verified += 1
    check(verified >= 1, f"none of the {stored} stored cores was left to verify as a complete zstd file")
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_grow_after_result():
    """A worker the core took over appends to its stored core after RESULT (the fault build's
    "grow@journal": up to 256 MiB): RLIMIT_FSIZE, set before the core's first byte, stops it at
    the job's cap (MaxUse=24M here). Before: the file grew by the whole 256 MiB."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("needs a build with -Dworker-test-faults=true (the sanitizer build of tools/run-tests.sh)")
    env = Env({"MaxUse": "24M", "KeepFree": "0"})
    exe = os.path.join(env.base, "crasher-fault")
    subprocess.run(["cp", CRASHER, exe], check=True)
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "grow@journal"})
    pid, _ = crash("segv", exe=exe)
    line = d.wait_log(r"Test fault: grew the stored core by", timeout=60)
    r = record_of(env, pid, d, RECORD_WAIT)
    path = r.get("COREDUMP_FILENAME", b"").decode()
    check(path and os.path.exists(path), f"no stored core: {r}")
    size = os.stat(path).st_size
    print(f"observed: {line.strip()}; the core is {size} bytes")
    check(size <= 24 * MIB, f"the worker grew its core to {size} bytes after RESULT, past the 24 MiB cap")
    check(d.stop() == 0, "daemon did not stop cleanly")


# Many mappings of a file with a 3.8 KiB path, a 120 KiB environment and a 60 KiB command line:
# a record over a MiB (maps is kept up to 1 MiB), a small core.
MAP_LONG = """
import mmap, os, signal, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
maps = [mmap.mmap(fd, 4096, prot=mmap.PROT_READ) for _ in range(300)]
os.kill(os.getpid(), signal.SIGSEGV)
"""


def long_path_file(base):
    path = base
    for i in range(15):
        path = os.path.join(path, f"{i:02d}" + "d" * 248)
    os.makedirs(path)
    path = os.path.join(path, "f")
    with open(path, "wb") as f:
        f.write(b"\0" * 4096)
    os.chmod(path, 0o644)
    return path


def case_vacuum_wipe():
    """Root's core and record exist. A user's core larger than MaxUse= (32 MiB of random memory,
    MaxUse=8M), then a flood of the user's records (64 crashes, each record over 1 MiB, past the
    records' 64 MiB budget): root's core and root's record stay; the user's own go. Before: the
    big core's vacuum deleted every other core (root's), and records went oldest first whoever
    owned them (root's)."""
    user = test_user()
    env = Env({"MaxUse": "8M", "KeepFree": "0", "RateLimitBurst": "1000", "MaxParallelPerUser": "infinity"})
    d = env.start()
    root_pid, _ = crash("segv")
    record_of(env, root_pid, d, RECORD_WAIT)
    root_core = env.wait_cores(1)[0]
    root_record = record_path(env, root_pid)

    big, _ = crash("mem", 32, "random", user=user)
    big_rec = record_of(env, big, d, RECORD_WAIT)
    print(f"observed: the big core: {big_rec.get('COREDUMP_PROCESSING_ERROR', b'').decode()}")
    # both attacks are run whatever the first did, so that each shows
    problems = [] if os.path.exists(root_core) else ["the user's core larger than MaxUse= deleted root's core"]

    target = long_path_file(env.base)
    penv = dict(os.environ, PAD="p" * (120 << 10))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda _: user_python(user, MAP_LONG, target, "a" * (60 << 10), env=penv), range(64)))
    pids = {str(pid) for pid, _ in done}

    def python_records(names):  # record.python3\x2e11.UID.BOOT.PID.USEC.export, the flood's
        return {n.split(".")[4] for n in names if n.startswith("record.python3") and n.split(".")[4] in pids}

    def flushed():
        return python_records(re.findall(r"Vacuumed (record\.\S+)", d.log_text()))
    # every flood crash has its record, or had it until the vacuum took it
    wait_until(lambda: python_records(os.listdir(env.store)) | flushed() == pids, 180,
               lambda: f"the flood's 64 records:\n{d.log_text()[-4000:]}")
    gone = flushed()
    print(f"observed: {len(gone)} of the user's records vacuumed; root's core and record: "
          f"{os.path.exists(root_core)}, {os.path.exists(root_record)}")
    check(gone, f"the flood never reached the records' budget:\n{d.log_text()[-4000:]}")
    if not os.path.exists(root_record):
        problems.append("the user's flood of records deleted root's record")
    if not os.path.exists(root_core) and not problems:
        problems.append("root's core was deleted")
    check(not problems, "; ".join(problems) + f":\n{d.log_text()[-3000:]}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def store_cores_bytes(env):
    return sum(os.stat(c).st_blocks * 512 for c in glob.glob(os.path.join(env.store, "core.*")))


def case_vacuum_lighter():
    """Root has two 4 MiB cores (incompressible); MaxUse=10M; the test user stores a 5 MiB core,
    lighter than root's 8 MiB but past MaxUse= with them: root's cores and records stay, and the
    user's core is cut within what root's leave it (or not stored), its record saying why.
    Before: the vacuum after the user's core took from the owner using the most, root, and
    deleted root's oldest core."""
    user = test_user()
    env = Env({"MaxUse": "10M", "KeepFree": "0"})
    d = env.start()
    root = []
    for _ in range(2):
        pid, _ = crash("mem", 4, "random")
        record_of(env, pid, d, RECORD_WAIT)
        root.append((next(c for c in env.cores() if f".{pid}." in c), record_path(env, pid)))
    upid, _ = crash("mem", 5, "random", user=user)
    r = record_of(env, upid, d, RECORD_WAIT)  # written after the vacuum that follows the user's core
    why = r.get("COREDUMP_PROCESSING_ERROR", b"").decode()
    stored = "COREDUMP_FILENAME" in r
    kept = [os.path.exists(c) for c, _ in root], [os.path.exists(rec) for _, rec in root]
    print(f"observed: root's cores {kept[0]}, records {kept[1]}; the user's core "
          f"{'stored' if stored else 'not stored'}, truncated={r.get('COREDUMP_TRUNCATED')}: {why}; "
          f"cores {store_cores_bytes(env) / MIB:.1f} MiB")
    check(all(kept[0]), f"the user's lighter core got root's core deleted:\n{d.log_text()[-3000:]}")
    check(all(kept[1]), "root's record was deleted")
    if stored:
        check(r.get("COREDUMP_TRUNCATED") == b"1" and "MaxUse=" in why,
              f"the user's core stored whole past what root's leave it? {why!r}")
    else:
        check("no room in the store" in why, f"the user's core not stored, and no reason: {why!r}")
    check(store_cores_bytes(env) <= 10 * MIB, f"the store holds {store_cores_bytes(env)} bytes of cores, past MaxUse=")
    check(d.stop() == 0, "daemon did not stop cleanly")


def user_crash_sync(user, *args):
    """A crasher run as user that says "ready" and crashes when a byte arrives on its stdin."""
    cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", CRASHER, *map(str, args)]
    p = subprocess.Popen(cmd, env=dict(os.environ, CRASHER_SYNC="1"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    check(p.stdout.readline().strip() == b"ready", "crasher did not get ready")
    return p


def case_maxuse_parallel():
    """Four of a user's incompressible 48 MiB cores start at the same moment against MaxUse=64M
    (a 512 MiB tmpfs store, KeepFree=0): the store, cores being written included, never holds
    more than MaxUse= and 8 MiB (the records, and the watch's polling); each core is stored whole
    or cut with the reason, or not stored with the reason. Before: each core's cap was MaxUse=
    less what the others held when it started (nothing, together), so the four took up to
    4 x 48 MiB at once."""
    user = test_user()
    lanes, slack = 4, 8 * MIB
    env = Env({"MaxUse": "64M", "KeepFree": "0", "RateLimitBurst": "100", "MaxParallelPerUser": "infinity"})
    env.mount_tmpfs(env.store, "512M")
    d = env.start()
    st = os.statvfs(env.store)
    size, base = st.f_blocks * st.f_frsize, (st.f_blocks - st.f_bavail) * st.f_frsize
    procs = [user_crash_sync(user, "mem", 48, "random") for _ in range(lanes)]
    watch = FreeWatch(env.store)
    for p in procs:
        p.stdin.write(b"x")
        p.stdin.flush()
    for p in procs:
        p.wait(120)
    recs = {p.pid: record_of(env, p.pid, d, RECORD_WAIT) for p in procs}
    peak = size - watch.stop() - base
    print(f"observed: the store held at most {peak / MIB:.1f} MiB (MaxUse= 64 MiB, slack {slack // MIB} MiB)")
    stored = 0
    for pid, r in recs.items():
        why = r.get("COREDUMP_PROCESSING_ERROR", b"").decode()
        if "COREDUMP_FILENAME" in r:
            stored += 1
            check(r.get("COREDUMP_TRUNCATED") != b"1" or "MaxUse=" in why, f"PID {pid}: cut without the reason: {why!r}")
        else:
            check("no room in the store" in why, f"PID {pid}: no core and no reason: {why!r}")
        print(f"observed: PID {pid}: {'stored' if 'COREDUMP_FILENAME' in r else 'no core'}: {why}")
    check(peak <= 64 * MIB + slack, f"the store held {peak / MIB:.1f} MiB at once, MaxUse= is 64 MiB:\n"
          f"{d.log_text()[-4000:]}")
    check(stored >= 1, "no core was stored at all")
    check(d.stop() == 0, "daemon did not stop cleanly")


FILL_TO = """
import os, sys
path, want = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as f:
    while True:
        st = os.statvfs(path)
        over = st.f_bavail * st.f_frsize - want
        if over <= 0:
            break
        f.write(b"\\xff" * min(over, 1 << 20))
        f.flush()
        os.fsync(f.fileno())
"""


def case_keep_free_user():
    """Root has a 6 MiB core on a 64 MiB store with KeepFree=16M; the test user fills the same
    file system (a world-writable directory on it) to 4 MiB short of KeepFree= (less than root's
    core) and crashes: root's core stays, the user's crash gets a record saying there is no
    room. Before: the vacuum before the user's core deleted root's core to restore KeepFree=."""
    user = test_user()
    env = Env({"KeepFree": "16M", "MaxUse": "1G"})
    env.mount_tmpfs(env.store, "64M")
    d = env.start()
    root_pid, _ = crash("mem", 6, "random")
    record_of(env, root_pid, d, RECORD_WAIT)
    root_core = env.wait_cores(1)[0]
    fill_dir = os.path.join(env.store, "fill")
    os.mkdir(fill_dir)
    os.chmod(fill_dir, 0o1777)
    _, rc = user_python(user, FILL_TO, os.path.join(fill_dir, "x"), str(12 * MIB))
    check(rc == 0, f"the user could not fill the file system: {rc}")
    upid, _ = crash("segv", user=user)
    r = record_of(env, upid, d, RECORD_WAIT)
    why = r.get("COREDUMP_PROCESSING_ERROR", b"").decode()
    print(f"observed: root's core {os.path.exists(root_core)}; the user's crash: "
          f"{'stored' if 'COREDUMP_FILENAME' in r else 'no core'}: {why}")
    check(os.path.exists(root_core), f"the user's full disk got root's core deleted:\n{d.log_text()[-3000:]}")
    check("COREDUMP_FILENAME" not in r and not [c for c in env.cores() if f".{upid}." in c],
          f"the user's crash was stored below KeepFree=: {r.get('COREDUMP_FILENAME')}")
    check("no room in the store" in why, f"no core and no reason: {why!r}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_dynamic_uid_acl():
    """A crash of a process running as a DynamicUser= uid (61184-65519, recycled between
    unrelated services): its core and record get no ACL entry for that uid; a regular user's
    crash still gets one. Before: user:61234:r-- on both."""
    user = test_user()
    dyn = types.SimpleNamespace(pw_uid=61234, pw_gid=61234)
    env = Env()
    d = env.start()
    pid, _ = crash("segv", user=dyn)
    record_of(env, pid, d, RECORD_WAIT)
    core = next(c for c in env.wait_cores(1) if f".{pid}." in c)
    check(xattrs(core).get("uid") == "61234", f"not the dynamic uid's core: {xattrs(core)}")
    acl, racl = acl_users(core), acl_users(record_path(env, pid))
    print(f"observed: ACL users of the dynamic uid's core {acl}, of its record {racl}")
    check(61234 not in acl and 61234 not in racl, f"the DynamicUser= uid got an ACL: core {acl}, record {racl}")
    upid, _ = crash("segv", user=user)
    record_of(env, upid, d, RECORD_WAIT)
    ucore = next(c for c in env.wait_cores(2) if f".{upid}." in c)
    check(user.pw_uid in acl_users(ucore), f"a regular user's core has no ACL for them: {acl_users(ucore)}")
    check(d.stop() == 0, "daemon did not stop cleanly")


if __name__ == "__main__":
    run_cases({"disk_cap": case_disk_cap, "grow_after_result": case_grow_after_result,
               "vacuum_wipe": case_vacuum_wipe, "vacuum_lighter": case_vacuum_lighter,
               "maxuse_parallel": case_maxuse_parallel, "keep_free_user": case_keep_free_user,
               "dynamic_uid_acl": case_dynamic_uid_acl})
