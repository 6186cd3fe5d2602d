#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 18, findings 1 and 2: what a hostile user can make the manager do with the files their
process maps and the memory /proc reads. The unprivileged test user attacks; root's files and
root's crashes are the victims. Each case failed before its fix."""
import ctypes
import errno
import re
import signal
import os
import shutil
import struct
import subprocess
import tempfile
import time

from corpus import message_frames
from cdtest import (BUILD, CRASHER, USER_PYTHON, Env, _restore, check, crash, decompress, elf_core_info, read_file,
                    record_of, run_cases, scaled, skip, start_filtered, start_python_crash, test_user, wait_until)

MAP_CRASH = os.path.join(BUILD, "test", "map-crash")
FUSE_STALL = os.path.join(BUILD, "test", "fuse-stall")
COLLECT_TIMEOUT = 5  # COLLECT_TIMEOUT_USEC, src/manager/collector.h
# seconds a crash may take while another is stalled: longer in sanitizer builds, but always under
# the stall's deadline, which it tells apart from "at once"
PROMPT = min(scaled(3), COLLECT_TIMEOUT - 0.5)
STUCK_AFTER_S = 0.05  # PROCESS_STUCK_AFTER_USEC (src/manager/stuck.h): between two looks at a process
STUCK_LOOKS_MAX = 20  # crashes that look at a collector before it must have been found stuck
SLOW_FAULT_S = 4  # FAULT_SLOW_MSEC, src/worker/worker.c
DAEMON_STOP_S = 10  # SIGTERM to exit, with nothing stuck
# python3 (a real program, a dozen mapped files) mapping a page past the first of argv[1] (as
# map-crash does), closing the file, then killing itself with SIGSEGV
PYTHON_MAP_SEGV = ("import ctypes, mmap, os, sys; libc = ctypes.CDLL(None, use_errno=True); "
                   "libc.mmap.restype = ctypes.c_void_p; "
                   "libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long); "
                   "fd = os.open(sys.argv[1], os.O_RDONLY); "
                   "p = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, mmap.PAGESIZE); "
                   "os.close(fd); assert p not in (None, 2 ** 64 - 1), os.strerror(ctypes.get_errno()); "
                   "os.kill(os.getpid(), 11)")
SYS_OPENAT2 = 437  # the same on every architecture (it came after their tables were unified)
NO_OPENAT2 = [(0x20, 0, 0, 0),                  # ld [nr]
              (0x15, 0, 1, SYS_OPENAT2),        # jeq openat2
              (0x06, 0, 0, 0x00050000 | 38),    # ret ERRNO(ENOSYS)
              (0x06, 0, 0, 0x7fff0000)]         # ret ALLOW

IN_ACCESS, IN_OPEN = 0x1, 0x20
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, 0o2000000
_libc = ctypes.CDLL(None, use_errno=True)


class OpenWatch:
    """inotify on files: every open (and read) of them by anyone, from now on."""

    def __init__(self, paths):
        self.fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        check(self.fd >= 0, f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        _restore.append((lambda: os.close(self.fd), "inotify"))
        self.names = {}
        for p in paths:
            wd = _libc.inotify_add_watch(self.fd, p.encode(), IN_OPEN | IN_ACCESS)
            check(wd >= 0, f"inotify_add_watch {p}: {os.strerror(ctypes.get_errno())}")
            self.names[wd] = p

    def events(self):
        out = []
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return out
        off = 0
        while off + 16 <= len(buf):
            wd, mask, _, name_len = struct.unpack_from("iIII", buf, off)
            out.append((self.names.get(wd), "open" if mask & IN_OPEN else "read"))
            off += 16 + name_len
        return out


def user_dir(user):
    """A directory of the test user's own, as an attacker has in /tmp."""
    path = tempfile.mkdtemp(prefix="cds-sec.", dir="/tmp")
    _restore.append((lambda: shutil.rmtree(path, ignore_errors=True), path))
    os.chown(path, user.pw_uid, user.pw_gid)
    return path


def as_user(user, cmd):
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]


def check_stored(rec, what):
    """rec's crash has its core stored: the file decompresses to an ELF core of that process."""
    path = rec.get("COREDUMP_FILENAME", b"").decode()
    check(path and os.path.exists(path), f"{what}: no stored core: {path!r}")
    pid = int(rec["COREDUMP_PID"])
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        info = elf_core_info(decompress(path, os.path.join(tmp, "core")))
    check(info["type"] == 4 and info["pids"] and info["pids"][0] == pid,
          f"{what}: the stored core {path} is no core of PID {pid}: {info}")


def check_traces(rec, what):
    frames = message_frames(rec.get("MESSAGE", b"").decode(errors="replace"))
    check("main" in frames, f"{what}: no stack trace through main in MESSAGE: {rec.get('MESSAGE')!r}")
    check(rec.get("COREDUMP_FILENAME"), f"{what}: no core stored: {rec.get('COREDUMP_PROCESSING_ERROR')!r}")
    check_stored(rec, what)


def run_map_crash(user, path, *args, before_crash=None, env=None):
    """map-crash as the user: maps path, then (after before_crash()) crashes. Returns its PID."""
    p = subprocess.Popen(as_user(user, [MAP_CRASH, path, *args]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=dict(env or os.environ, MAP_CRASH_WAIT="1"))
    _restore.append((lambda: p.poll() is None and p.kill(), f"map-crash {p.pid}"))
    line = p.stdout.readline()
    if line.strip() != b"mapped":  # (its stderr is read only then: it stays open until it crashes)
        check(False, f"map-crash did not map {path}: {line!r} {p.stderr.read()!r}")
    if before_crash:
        before_crash()
    p.stdin.write(b"x")
    p.stdin.close()
    p.wait(120)
    check(p.returncode == -11, f"map-crash ended with {p.returncode}, not SIGSEGV")
    return p.pid


def case_modules_symlink():
    """Finding 1: maps writes a newline in a path as the text \\012 and leaves backslashes alone.
    The user maps ".../lib<newline>.so" and plants a symlink named "lib\\012.so" to a root-only
    file: the manager resolved maps' text, followed the link as root and handed the worker a
    descriptor of the secret. Now a module is opened only if it is the very inode maps names,
    with no symlink followed: the secret is never opened, the crash is stored with traces."""
    env = Env()
    planted, pid = symlink_attack(env, env.start())
    print(f"observed: maps names {planted!r}, the secret was not opened, PID {pid} stored with traces")


def symlink_attack(env, d):
    """case_modules_symlink's attack on the daemon d: (the planted path, the crash's PID)."""
    user = test_user()
    # readable by the user too: the file-system credentials alone would not keep it closed, so
    # this shows the symlink and inode checks (modules_access shows the credentials)
    secret = os.path.join(env.base, "secret")
    with open(secret, "w") as f:
        f.write("root's file\n")
    os.chmod(secret, 0o644)
    home = user_dir(user)
    mapped = os.path.join(home, "lib\n.so")
    shutil.copy(CRASHER, mapped)
    os.chown(mapped, user.pw_uid, user.pw_gid)
    planted = os.path.join(home, "lib\\012.so")
    os.symlink(secret, planted)
    os.lchown(planted, user.pw_uid, user.pw_gid)
    watch = OpenWatch([secret])
    pid = run_map_crash(user, mapped)
    rec = record_of(env, pid, d)
    maps = rec.get("COREDUMP_PROC_MAPS", b"")
    check(b"lib\\012.so" in maps, f"maps does not name the planted path: {maps!r}")
    opened = watch.events()
    check(not opened, f"the secret behind the planted symlink was opened: {opened}")
    check_traces(rec, "the attacker's crash")
    return planted, pid


def case_modules_no_openat2():
    """Where openat2() is missing or filtered (systemd's seccomp filters answer ENOSYS for the
    calls their libseccomp does not know), the collector finds a mapped file by walking its path
    one component at a time with O_NOFOLLOW (fd_walk_beneath()). The daemon runs here under a
    filter that answers openat2() with ENOSYS, which its collectors inherit: python3's crash has
    its top frame named from libc's own symbol table (libc's file was opened, through the walk);
    modules_symlink's planted symlink is refused by the walk itself (ELOOP: openat2() would
    have handed the link to the inode check, which refuses it as no regular file), and the
    secret behind it is never opened."""
    env = Env()
    d = start_filtered(env, "coredumpd-no-openat2", NO_OPENAT2, environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"})
    p = start_python_crash(env, "python3-walk")
    check(p.wait(60) == -11, f"python3 ended with {p.returncode}")
    rec = record_of(env, p.pid, d)
    check(rec.get("COREDUMP_FILENAME"), f"python3's crash was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}")
    check_stored(rec, "python3's crash")
    check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", rec.get("MESSAGE", b"")),
          f"python3's top frame is not named from libc's symbols (its file not opened):\n"
          f"{rec.get('MESSAGE', b'').decode(errors='replace')}\n{d.log_text()}")
    planted, pid = symlink_attack(env, d)
    d.wait_log(rf"Crash of PID {pid}: \d+ mapped files not opened for the traces, the first "
               rf"{re.escape(planted)}: {re.escape(os.strerror(errno.ELOOP))}")
    print(f"observed: openat2() filtered; python3 {p.pid} stored with libc's frames named; "
          f"{planted!r} refused by the walk (ELOOP), the secret not opened")


def case_modules_access():
    """Finding 1: only what the crashing task itself could read. The user maps a file of their
    own and takes its read permission away before crashing: root's DAC_READ_SEARCH opened it
    anyway. Now the collector opens modules with the task's fs uid, gid and groups: the file is
    not opened (no IN_OPEN), and the crash is still stored with traces of the rest."""
    user = test_user()
    env = Env()
    home = user_dir(user)
    lib = os.path.join(home, "own.so")
    shutil.copy(CRASHER, lib)
    os.chown(lib, user.pw_uid, user.pw_gid)
    d = env.start()
    watch = OpenWatch([lib])
    def revoke():
        watch.events()  # the crasher's own open
        os.chmod(lib, 0)

    pid = run_map_crash(user, lib, before_crash=revoke)
    rec = record_of(env, pid, d)
    opened = watch.events()
    check(not opened, f"a file the crashed task could no longer read was opened for it: {opened}")
    check_traces(rec, "the crash")
    print(f"observed: {lib} (mode 000) not opened; PID {pid} stored with traces")


def fuse_device_open():
    """/dev/fuse open to all, as udev makes it on a Debian system (a container's /dev may be
    stricter); restored afterwards."""
    mode = os.stat("/dev/fuse").st_mode & 0o777
    if mode != 0o666:
        os.chmod("/dev/fuse", 0o666)
        _restore.append((lambda: os.chmod("/dev/fuse", mode), f"/dev/fuse mode {mode:o}"))


def allow_other():
    """user_allow_other in /etc/fuse.conf, as administrators set it for sshfs and friends: then
    a user's FUSE mount may be opened by others, root included. Restored afterwards."""
    conf = "/etc/fuse.conf"
    old = open(conf).read() if os.path.exists(conf) else None

    def restore():
        if old is None:
            os.unlink(conf)
        else:
            with open(conf, "w") as f:
                f.write(old)

    _restore.append((restore, conf))
    with open(conf, "w") as f:
        f.write((old or "") + "\nuser_allow_other\n")


FUSE_SAID = {}  # mount point: the temporary file its server's reports go to


def fuse_said(mnt):
    """What the FUSE server on mnt reported so far: the requests it left unanswered, and so on."""
    return read_file(FUSE_SAID[mnt].name) if mnt in FUSE_SAID else ""


def start_fuse(user, stall="open"):
    """The user's FUSE file system, mounted allow_other through setuid fusermount3 as any user can
    where user_allow_other is set, whose server (test/helpers/fuse-stall.c) answers the first open
    of its file and stalls every later one, or with stall="flush" answers everything but FLUSH
    after the first. Stopped, and its mount gone, whatever happens; stop() returns what the server
    printed of what it did not answer, or answered after the first."""
    if not shutil.which("fusermount3") or not os.path.exists("/dev/fuse"):
        skip("no FUSE here (fusermount3, /dev/fuse)")
    fuse_device_open()
    allow_other()
    mnt = user_dir(user)
    said = tempfile.NamedTemporaryFile(prefix="cds-fuse-said.", dir="/run")  # what the server reports
    server = subprocess.Popen(as_user(user, [FUSE_STALL, mnt, "allow_other", stall]), stdout=subprocess.PIPE,
                              stderr=said)
    FUSE_SAID[mnt] = said  # (the file goes with the object)

    def stop():
        if server.poll() is None:
            server.kill()  # its /dev/fuse closes: every request still waiting fails, nothing stays stuck
            server.wait(30)
        subprocess.run(["umount", "-l", mnt], stderr=subprocess.DEVNULL)
        return fuse_said(mnt)

    _restore.append((stop, f"FUSE server {server.pid} on {mnt}"))
    line = server.stdout.readline()
    if line.strip() != b"ready":
        check(False, f"the FUSE server did not start: {line!r} {server.stderr.read()!r}")
    return mnt, stop


def case_fuse_stall():
    """Finding 2: the user maps a file of their FUSE file system (allow_other, as
    user_allow_other permits) and crashes; the server answers no later open. The manager opened
    the mapped files on its single thread, as root, and waited for the server for ever (a
    request the server has read is waited for even through SIGKILL): every later crash, root's
    included, waited too, and the crashed task stayed pinned. Now a collector child opens them:
    root's crash is stored at once, the stalled crash is stored at the collector's deadline
    with a record saying where it stalled, and the user's next crash is stored at once, without
    those reads, saying why. (A FUSE page over the command line or environment stalls nobody:
    the kernel reads /proc/PID/cmdline and environ from anonymous memory only, FOLL_ANON, and
    such a page reads as nothing; the collector reads them all the same, and the memory map.)
    Files on FUSE are no longer opened (fuse_flush): the collector's statfs of the file system,
    its first question, is what the server leaves unanswered now."""
    user = test_user()
    env = Env()
    mnt, stop_fuse = start_fuse(user)
    try:
        fuse_stall(env, user, mnt, stop_fuse)
    finally:
        stop_fuse()  # before the daemon is stopped: a stuck daemon cannot die while the server lives


def case_fuse_flush():
    """The user's FUSE server (allow_other, as user_allow_other permits) answers every open and
    read of its file, and the FLUSH of its own program's close, but no later FLUSH. The kernel
    sends FLUSH at every close of a descriptor of a FUSE file and waits for the answer
    uninterruptibly, SIGKILL or not. The collector opened the user's mapped file for the traces,
    and the manager and the worker each closed their descriptor of it: the manager froze on that
    close for ever, and every later crash with it, root's included, and it could not even be
    stopped. Now no file on FUSE is opened for the traces (its file system is told apart before
    any open): the server sees no open but its own program's, the user's crash and root's after
    it are stored at once, and the daemon stops while the server still runs."""
    user = test_user()
    env = Env()
    mnt, stop_fuse = start_fuse(user, "flush")
    try:
        hostile = os.path.join(mnt, "f")
        flush_attack(env, stop_fuse, as_user(user, [MAP_CRASH, hostile, "1"]), hostile)
    finally:
        stop_fuse()  # before the daemon is stopped: a stuck daemon cannot die while the server lives


def case_fuse_flush_python3():
    """fuse_flush with a real program: python3 maps the FUSE file (through ctypes, as map-crash
    does) among its own dozen mapped files and kills itself. Its libraries are opened for the
    traces (its top frame is named from libc's own symbols), the FUSE file is not, and the
    daemon goes on as in fuse_flush."""
    user = test_user()
    env = Env()
    mnt, stop_fuse = start_fuse(user, "flush")
    try:
        hostile = os.path.join(mnt, "f")
        flush_attack(env, stop_fuse, as_user(user, [USER_PYTHON, "-c", PYTHON_MAP_SEGV, hostile]), hostile,
                     traced=lambda rec: check(re.search(rb"#0 +0x[0-9a-f]+ kill \(libc\.so\.6 \+ 0x", rec.get("MESSAGE", b"")),
                                              f"python3's top frame is not named from libc's symbols: {rec.get('MESSAGE')!r}"))
    finally:
        stop_fuse()


def case_fuse_flush_opened():
    """fuse_flush where the user's FUSE file is opened for the traces all the same, as a file on a
    file system stacked over FUSE would be (overlayfs and ecryptfs pass FLUSH down to the FUSE
    file beneath; here a fault of the test build, modules-fuse, lets the collector open the FUSE
    file itself): the collector keeps it, and queues it for the worker when the job is given; the
    manager only passes the queue on, never holds the file nor its last reference, so that no
    close or release of its waits for the server. The user's crash and root's after it are stored
    at once; the collector and the worker wait in their closes for ever, killed or not, and the
    daemon stops all the same; the server saw the collector's open and FLUSHes, none from the
    manager."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("built without -Dworker-test-faults=true")
    user = test_user()
    env = Env()
    mnt, stop_fuse = start_fuse(user, "flush")
    try:
        hostile = os.path.join(mnt, "f")
        d = env.start(environ={"COREDUMPD_TEST_FAULT": "modules-fuse"})
        user_pid, took = timed_crash_of(as_user(user, [MAP_CRASH, hostile, "1"]))
        rec = record_of(env, user_pid, d, timeout=PROMPT)
        check(rec.get("COREDUMP_FILENAME") and "COREDUMP_PROCESSING_ERROR" not in rec,
              f"the user's crash was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}\n{d.log_text()}")
        check_stored(rec, "the user's crash")
        check_traces(rec, "the user's crash")
        manager = d.proc.pid
        took2, said = root_crash_then_stop(env, d, stop_fuse)
        check("open from pid" in said and "flush from pid" in said,
              f"the collector did not open the FUSE file (the test fault), or nobody closed it: {said.strip()!r}")
        check(f"from pid {manager}:" not in said, f"the manager opened or closed the user's FUSE file: {said.strip()!r}")
        check("did not end when killed" in d.log_text(),
              f"no worker was left waiting for the server's answer:\n{d.log_text()}")
        print(f"observed: the user's crash (its FUSE file opened by the collector, its FLUSHes unanswered) took "
              f"{took:.2f} s, root's after it {took2:.2f} s; the daemon stopped with the server running; the server "
              f"saw: {' | '.join(said.strip().splitlines())}")
    finally:
        stop_fuse()


def one_slot_fuse(**config):
    """For the fuse_flush_pool cases: (the user, an Env whose pool has one slot, MaxParallel=1 and
    SpareWorkers=0, with config besides, the user's FUSE file whose FLUSH is not answered, and
    stop_fuse)."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("built without -Dworker-test-faults=true")
    user = test_user()
    env = Env({"MaxParallel": "1", "SpareWorkers": "0", **config})
    mnt, stop_fuse = start_fuse(user, "flush")
    return user, env, os.path.join(mnt, "f"), stop_fuse


def crash_done(d, pid, timeout=PROMPT):
    """Until the crash's worker said RECORDED (a debug line): with MaxParallel=1 the next crash
    would otherwise be refused its core while this one is still in flight."""
    d.wait_log(rf"Crash of PID {pid}: (journal entry written|record kept without)", timeout=timeout)


def stuck_worker(d, pid):
    """Until the daemon found the worker of the crash of pid stuck in its exit, past the release of
    its memory (its module files closed by the exit, not before it)."""
    d.wait_log(rf"Worker \d+ \(crash of PID {pid}\) waits in its exit", timeout=PROMPT)


def stop_while_stuck(env, d, stop_fuse):
    """root_crash_then_stop(), the server having seen a FLUSH it never answered."""
    _, said = root_crash_then_stop(env, d, stop_fuse)
    check("flush from pid" in said, f"nobody waited for the server's FLUSH: {said.strip()!r}")


def case_fuse_flush_pool():
    """fuse_flush_opened, where the worker and the collector that had the user's FUSE file wait in
    their exits for ever (the server answers no FLUSH): with MaxParallel=1 and SpareWorkers=0 the
    stuck worker held the only slot of the pool, since a worker counted until it was reaped, and
    every later crash, root's too, waited for a worker until its deadline. Now a worker found
    asleep in its exit past the release of its address space no longer counts against the pool
    (up to a bound): root's crashes after it are stored at once, traced through their own files;
    the stuck worker holds no memory (its module files are closed by its exit, after its memory);
    and the user's next crash, a plain program's, is read without opening its mapped files, its
    record saying why (both stuck processes counted), so the user makes no more processes that
    wait for ever."""
    user, env, hostile, stop_fuse = one_slot_fuse()
    try:
        d = env.start(environ={"COREDUMPD_TEST_FAULT": "modules-fuse", "COREDUMP_SOCKET_LOG_LEVEL": "debug"})
        user_pid, _ = timed_crash_of(as_user(user, [MAP_CRASH, hostile, "1"]))
        check_traces(record_of(env, user_pid, d, timeout=PROMPT), "the user's crash")
        crash_done(d, user_pid)
        stuck_worker(d, user_pid)
        # root's crashes, each stored at once: the start of each looks at the user's collector,
        # found stuck at two looks PROCESS_STUCK_AFTER_USEC apart (then it says so)
        for i in range(STUCK_LOOKS_MAX):
            root_pid, took = timed_crash()
            check(took < PROMPT, f"root's crash after the user's stuck one took {took:.1f} s:\n{d.log_text()}")
            check_traces(record_of(env, root_pid, d, timeout=PROMPT), "root's crash")
            crash_done(d, root_pid)
            if i > 0 and re.search(rf"Collector \d+ of uid {user.pw_uid} waits in its exit", d.log_text()):
                break
            time.sleep(STUCK_AFTER_S)
        else:
            check(False, f"the user's collector was not found stuck:\n{d.log_text()}")
        next_pid, took = timed_crash(user)
        check(took < PROMPT, f"the user's next crash took {took:.1f} s:\n{d.log_text()}")
        nxt = record_of(env, next_pid, d, timeout=PROMPT)
        check(nxt.get("COREDUMP_FILENAME"), f"the user's next crash was not stored: {nxt}")
        check_stored(nxt, "the user's next crash")
        why = nxt.get("COREDUMP_PROC_INCOMPLETE", b"").decode(errors="replace")
        check(re.search(rf"mapped files not opened for the traces: 2 processes done with earlier crashes of uid "
                        rf"{user.pw_uid} wait in their exit", why),
              f"the user's next crash does not say its files were not opened: {why!r}\n{d.log_text()}")
        check(nxt.get("COREDUMP_CMDLINE") and nxt.get("COREDUMP_PROC_MAPS"),
              "the user's next crash lost more than its mapped files")
        frames = message_frames(nxt.get("MESSAGE", b"").decode(errors="replace"))
        check(frames and "main" not in frames,  # no file of its: no name for its frames
              f"the user's next crash was traced through its files all the same: {nxt.get('MESSAGE')!r}")
        stop_while_stuck(env, d, stop_fuse)
        print(f"observed: with the user's worker and collector stuck in their exits, root's crashes stored at once; "
              f"the user's next crash: {why}")
    finally:
        stop_fuse()


def case_fuse_flush_pool_waiting():
    """fuse_flush_pool, with root's crash already waiting for the only slot when the user's worker
    finishes and sticks (an independent review's scenario): the user's worker sleeps before its
    journal entry (the test fault slow@journal), root's crash comes meanwhile and waits. The pool
    was filled again only when a worker ended, which a stuck one never does: root's crash waited
    for a worker until its deadline. Now the finished worker is looked at PROCESS_STUCK_AFTER_USEC
    after, found stuck, and the pool filled again: root's record follows at once."""
    user, env, hostile, stop_fuse = one_slot_fuse()
    try:
        slow = os.path.join(env.base, "crasher-fault")  # the worker's test faults apply to that name
        shutil.copy(MAP_CRASH, slow)
        os.chmod(slow, 0o755)
        d = env.start(environ={"COREDUMPD_TEST_FAULT": "modules-fuse", "COREDUMP_WORKER_FAULT": "slow@journal",
                               "COREDUMP_SOCKET_LOG_LEVEL": "debug"})
        user_pid, _ = timed_crash_of(as_user(user, [slow, hostile, "1"]))
        d.wait_log(r"Test fault: sleeping", timeout=PROMPT)  # its worker is in the fault's sleep now
        root_pid, _ = timed_crash()  # refused its core (MaxParallel=1): it waits for a worker for its record
        check_traces(record_of(env, user_pid, d, timeout=PROMPT), "the user's crash")
        crash_done(d, user_pid, timeout=SLOW_FAULT_S + PROMPT)  # after the sleep: it finishes, and sticks
        t = time.monotonic()
        root = record_of(env, root_pid, d, timeout=PROMPT)
        error = root.get("COREDUMP_PROCESSING_ERROR", b"")
        check(b"handed to a worker" not in error and b"no worker became available" not in error,
              f"root's crash got no worker: {error!r}\n{d.log_text()}")
        after = time.monotonic() - t
        stuck_worker(d, user_pid)
        stop_while_stuck(env, d, stop_fuse)
        print(f"observed: root's crash, waiting while the user's worker slept, recorded {after:.2f} s after that "
              f"worker finished (it stays stuck in its exit)")
    finally:
        stop_fuse()


def case_fuse_flush_pool_root():
    """Third review, finding 9: the pool at its worst. A user's worker stuck for good before its
    exit, holding its memory: it closes its module files before its journal entry (the test fault
    closemods@journal), the close waits for the FLUSH of the user's FUSE file that the server never
    answers, the per-crash deadline's SIGKILL cannot end it. Such workers are left out of the pool's
    count only up to a bound (128, which a user with as many uids can pass); the test fault
    stuck-holding-counted puts the bound at none, so this one worker fills the one slot
    (MaxParallel=1, SpareWorkers=0). Root's crash still gets a worker at once, stored and traced;
    the user's next crash gets none (the bound holds for users: it is dropped at its deadline, and
    says so). Before: root's crash waited for a worker until its deadline, and was lost."""
    user, env, hostile, stop_fuse = one_slot_fuse(TimeoutSec="4")
    try:
        closing = os.path.join(env.base, "crasher-fault")  # the worker's test faults apply to that name
        shutil.copy(MAP_CRASH, closing)
        os.chmod(closing, 0o755)
        d = env.start(environ={"COREDUMPD_TEST_FAULT": "modules-fuse,stuck-holding-counted",
                               "COREDUMP_WORKER_FAULT": "closemods@journal", "COREDUMP_SOCKET_LOG_LEVEL": "debug"})
        user_pid, _ = timed_crash_of(as_user(user, [closing, hostile, "1"]))
        d.wait_log(rf"Worker \d+ \(crash of PID {user_pid}\) did not end when killed", timeout=4 + 2 + PROMPT)
        root_pid, took = timed_crash()
        check(took < PROMPT, f"root's crash with the pool full of a user's stuck worker took {took:.1f} s:\n{d.log_text()}")
        root = record_of(env, root_pid, d, timeout=PROMPT)
        check_traces(root, "root's crash")
        stored = [c for c in env.cores() if f".{root_pid}." in c]
        check(len(stored) == 1 and elf_core_info(decompress(stored[0], stored[0] + ".core"))["pids"][0] == root_pid,
              f"root's stored core is not its crash's: {stored}")
        next_pid, _ = timed_crash(user)
        d.wait_log(rf"Crash of PID {next_pid}\b.*no worker became available before the deadline", timeout=4 + PROMPT)
        stop_while_stuck(env, d, stop_fuse)
        print("observed: with a user's worker stuck holding its memory past the bound, root's crash got a worker "
              f"at once ({took:.2f} s); the user's next crash got none")
    finally:
        stop_fuse()


def case_fuse_flush_overlay():
    """fuse_flush on a default system, with no help from /etc/fuse.conf (an independent review's
    scenario): in a user namespace of their own, with a mount namespace of its own, the user
    mounts their FUSE file system (its server as in fuse_flush) and an overlayfs on top of it,
    and their program maps the overlay's file. The overlay is no FUSE file system, and opens the
    FUSE file underneath with the user's credentials: were the collector to open it, every close
    would pass the FLUSH down to the server, and the manager would freeze as in fuse_flush. On
    the kernels tested (6.18) the collector's lookup of the file through the overlay fails
    (ENOENT; EACCES with the user's credentials alone), so it is refused, for that reason or
    another: the crash is stored, root's crash after it at once, and the daemon stops while the
    server runs."""
    user = test_user()
    env = Env()
    if not shutil.which("fusermount3") or not os.path.exists("/dev/fuse"):
        skip("no FUSE here (fusermount3, /dev/fuse)")
    fuse_device_open()
    home = user_dir(user)
    mnt, empty, empty2, over = (os.path.join(home, n) for n in ("fuse", "empty", "empty2", "over"))
    for p in (mnt, empty, empty2, over):
        os.mkdir(p)
        os.chown(p, user.pw_uid, user.pw_gid)
    probe = subprocess.run(as_user(user, ["unshare", "-Urm", "sh", "-c",
                                          f"mount -t overlay overlay -o lowerdir={empty}:{empty2} {over} && umount {over}"]),
                           capture_output=True, text=True)
    if probe.returncode != 0:
        skip(f"no overlayfs in a user namespace here: {probe.stderr.strip()}")
    hostile, said = os.path.join(over, "f"), os.path.join(home, "server.err")
    script = (f"{FUSE_STALL} {mnt} allow_other flush >/dev/null 2>{said} </dev/null & "
              f"i=0; while ! grep -q ' {mnt} ' /proc/self/mountinfo; do i=$((i+1)); [ $i -gt 100 ] && exit 3; sleep 0.05; done; "
              f"mount -t overlay overlay -o lowerdir={mnt}:{empty} {over} && exec {MAP_CRASH} {hostile} 1")

    def stop_server():
        subprocess.run(["pkill", "-KILL", "-f", f"{FUSE_STALL} {mnt} "], stderr=subprocess.DEVNULL)
        return read_file(said) if os.path.exists(said) else ""

    _restore.append((stop_server, f"FUSE server on {mnt}"))
    try:
        flush_attack(env, stop_server, as_user(user, ["unshare", "-Urm", "sh", "-c", script]), hostile,
                     reason=r"[^\n]+")
    finally:
        stop_server()


def flush_attack(env, stop_fuse, argv, hostile, reason=re.escape(os.strerror(errno.EREMOTE)), traced=None):
    """argv, the user's program, maps hostile (whose FUSE server answers no FLUSH after the
    first) and crashes: stored with traces (checked by traced(record), by default through main),
    the file refused (why: the pattern reason, by default as remote), root's crash after it
    stored at once, the daemon stopped while the server runs, the server asked nothing more."""
    d = env.start(environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"})  # the refusal is a debug line
    user_pid, took = timed_crash_of(argv)
    rec = record_of(env, user_pid, d, timeout=PROMPT)
    check(rec.get("COREDUMP_FILENAME") and "COREDUMP_PROCESSING_ERROR" not in rec,
          f"the user's crash was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}\n{d.log_text()}")
    check_stored(rec, "the user's crash")
    check(rec.get("COREDUMP_ENVIRON") and not rec.get("COREDUMP_PROC_INCOMPLETE"),
          f"the user's crash was not read whole: {rec.get('COREDUMP_PROC_INCOMPLETE')!r}")
    check(hostile.encode() in rec.get("COREDUMP_PROC_MAPS", b""), "the hostile file is not in the crash's maps")
    (traced or (lambda r: check_traces(r, "the user's crash")))(rec)
    d.wait_log(rf"Crash of PID {user_pid}: \d+ mapped files not opened for the traces, the first "
               rf"{re.escape(hostile)}: {reason}", timeout=PROMPT)
    took2, said = root_crash_then_stop(env, d, stop_fuse)
    check("open from pid" not in said and "flush from pid" not in said,
          f"the daemon opened the user's FUSE file: {said.strip()!r}")
    print(f"observed: the user's crash (its mapped file {hostile} on FUSE) took {took:.2f} s, root's after it "
          f"{took2:.2f} s; the file never opened; the daemon stopped with the server running")


def root_crash_then_stop(env, d, stop_fuse):
    """While the user's FUSE server still runs: root's crash stored at once, then the daemon
    stopped within DAEMON_STOP_S; the server stopped then whatever happened: (root's crash's
    seconds, what the server said)."""
    root_pid, took = timed_crash()
    check(took < PROMPT, f"root's crash after the user's took {took:.1f} s:\n{d.log_text()}")
    root = record_of(env, root_pid, d, timeout=PROMPT)
    check(root.get("COREDUMP_FILENAME"), f"root's crash not stored: {root}\n{d.log_text()}")
    check_stored(root, "root's crash")
    d.proc.send_signal(signal.SIGTERM)
    try:
        rc = d.proc.wait(DAEMON_STOP_S)
    except subprocess.TimeoutExpired:
        rc = None
    said = stop_fuse()  # the daemon can end now whatever happened
    check(rc is not None, f"the daemon did not stop in {DAEMON_STOP_S} s while the FUSE server ran "
          f"(it answers no FLUSH: {said.strip()!r}):\n{d.log_text()}")
    check(d.stop() == 0, "the daemon did not stop cleanly")
    return took, said


def timed_crash_of(argv):
    """(pid, seconds) of argv, which crashes at once: as timed_crash(), for another program."""
    t = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _restore.append((lambda: p.poll() is None and p.kill(), f"{argv[0]} {p.pid}"))
    try:
        rc = p.wait(COLLECT_TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"a crash did not complete in {COLLECT_TIMEOUT + 30} s: the manager is stalled")
    if rc != -11:  # (its stderr read only then: what it started may hold it open)
        check(False, f"{argv} ended with {rc}: {p.stderr.read()!r}")
    return p.pid, time.monotonic() - t


def timed_crash(user=None):
    """(pid, seconds) of a crash that must complete well within the stall's deadline."""
    t = time.monotonic()
    try:
        pid, rc = crash("segv", user=user, timeout=COLLECT_TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"a crash did not complete in {COLLECT_TIMEOUT + 30} s: the manager is stalled")
    check(rc == -11, f"the crasher ended with {rc}")
    return pid, time.monotonic() - t


def stalled_crash(user, hostile):
    """map-crash as user, mapping the FUSE file hostile, once it has mapped it (it crashes then)."""
    stalled = subprocess.Popen(as_user(user, [MAP_CRASH, hostile, "1"]), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    _restore.append((lambda: stalled.poll() is None and stalled.kill(), f"map-crash {stalled.pid}"))
    line = stalled.stdout.readline()
    if line.strip() != b"mapped":
        check(False, f"map-crash did not map the FUSE file: {line!r} {stalled.stderr.read()!r}")
    return stalled


def fuse_stall(env, user, mnt, stop_fuse):
    hostile = os.path.join(mnt, "f")
    d = env.start()
    t0 = time.monotonic()
    stalled = stalled_crash(user, hostile)
    # its crash reaches the manager first: its collector's question is left unanswered
    wait_until(lambda: "not answering" in fuse_said(os.path.dirname(hostile)), PROMPT,
               lambda: f"the collector's question to the FUSE server:\n{d.log_text()}")
    # root's crash while the user's is stalled
    root_pid, took = timed_crash()
    check(took < PROMPT, f"root's crash took {took:.1f} s while the user's crash was stalled:\n{d.log_text()}")
    root = record_of(env, root_pid, d, timeout=PROMPT)
    check(root.get("COREDUMP_FILENAME"), f"root's crash not stored: {root}")
    check_stored(root, "root's crash")
    # the stalled crash ends at the collector's deadline, stored, saying where it stalled
    rec = record_of(env, stalled.pid, d, timeout=COLLECT_TIMEOUT + 30)
    ended = time.monotonic() - t0
    why = rec.get("COREDUMP_PROC_INCOMPLETE", b"").decode()
    check("opening its mapped files" in why and hostile in why,
          f"the stalled crash's record does not say where it stalled: {why!r}\n{d.log_text()}")
    check(rec.get("COREDUMP_CMDLINE") and rec.get("COREDUMP_ENVIRON"), "what was read before the stall was not kept")
    check(rec.get("COREDUMP_FILENAME"), f"the stalled crash's core was not stored: {rec}")
    check_stored(rec, "the stalled crash")
    check(stalled.wait(30) == -11, "the stalled crasher did not die of its signal")
    # the same user's next crash: no second stall, stored at once, saying why it lacks those reads
    user_pid, took2 = timed_crash(user)
    check(took2 < PROMPT, f"the user's next crash took {took2:.1f} s during the stall:\n{d.log_text()}")
    nxt = record_of(env, user_pid, d, timeout=PROMPT)
    check("did not finish" in nxt.get("COREDUMP_PROC_INCOMPLETE", b"").decode(),
          f"the next crash does not say why its command line is missing: {nxt.get('COREDUMP_PROC_INCOMPLETE')!r}")
    check(nxt.get("COREDUMP_FILENAME"), "the user's next crash was not stored")
    check_stored(nxt, "the user's next crash")
    # the file system goes away: the stuck collector ends, and the user's crashes are whole again
    stop_fuse()
    d.wait_log(r"Collector \d+ of uid \d+ ended after its deadline", timeout=30)
    again, rc = crash("segv", user=user)
    whole = record_of(env, again, d)
    check(whole.get("COREDUMP_ENVIRON") and not whole.get("COREDUMP_PROC_INCOMPLETE"),
          "the user's crash after the stall ended was not read whole")
    print(f"observed: root's crash took {took:.2f} s during the stall; the stalled one ended after {ended:.1f} s "
          f"({why}); the user's next one took {took2:.2f} s")


def case_fuse_stall_short_timeout():
    """A stalled collection takes at most half of TimeoutSec= (here 4 s, under twice the
    collector's 5 s): the stalled crash's core is still stored, in time, with a record saying
    where it stalled (before, the collection took min(5 s, TimeoutSec=) and the worker that then
    got the core had its deadline passed already: it was killed and the core lost)."""
    user = test_user()
    env = Env({"TimeoutSec": "4"})
    mnt, stop_fuse = start_fuse(user)
    try:
        hostile = os.path.join(mnt, "f")
        d = env.start()
        t0 = time.monotonic()
        stalled = stalled_crash(user, hostile)
        check(stalled.wait(30) == -11, "the stalled crasher did not die of its signal")
        released = time.monotonic() - t0
        rec = record_of(env, stalled.pid, d, timeout=30)
        why = rec.get("COREDUMP_PROC_INCOMPLETE", b"").decode()
        check("opening its mapped files" in why, f"the record does not say where it stalled: {why!r}\n{d.log_text()}")
        check(rec.get("COREDUMP_FILENAME") and "COREDUMP_PROCESSING_ERROR" not in rec,
              f"the stalled crash's core was not stored: {rec.get('COREDUMP_PROCESSING_ERROR')}\n{d.log_text()}")
        check_stored(rec, "the stalled crash")
        check(released < 4, f"the task was held {released:.1f} s, past TimeoutSec=4")
        print(f"observed: the stalled crash released after {released:.1f} s and stored ({why})")
    finally:
        stop_fuse()  # before the daemon is stopped: a stuck daemon cannot die while the server lives
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_log_escapes():
    """Finding 8, the daemon's side: a process named with terminal control sequences (ESC[2J,
    a C1 CSI) crashes; the daemon's own log lines (its comm, its path) carry none of them raw."""
    env = Env()
    name = "cr\x1b[2J\u009bx"
    exe = os.path.join(env.base, name)
    shutil.copy(CRASHER, exe)
    d = env.start()
    pid, rc = crash("segv", exe=exe)
    record_of(env, pid, d)
    d.wait_log(rf"Crash of PID {pid} ")
    with open(d.log, "rb") as f:
        log = f.read()
    line = [l for l in log.splitlines() if f"Crash of PID {pid} ".encode() in l]
    check(b"\x1b" not in log and b"\xc2\x9b" not in log, f"raw control sequences in the daemon's log: {line!r}")
    check(any(b"cr?[2J??x" in l for l in line), f"the log does not name the process, sanitised: {line!r}")
    print(f"observed: {line[0].decode()!r}")


if __name__ == "__main__":
    run_cases({"modules_symlink": case_modules_symlink, "modules_access": case_modules_access,
               "fuse_stall": case_fuse_stall,
               "fuse_stall_short_timeout": case_fuse_stall_short_timeout, "fuse_flush": case_fuse_flush, "fuse_flush_python3": case_fuse_flush_python3,
               "fuse_flush_opened": case_fuse_flush_opened, "fuse_flush_pool": case_fuse_flush_pool,
               "fuse_flush_pool_waiting": case_fuse_flush_pool_waiting, "fuse_flush_pool_root": case_fuse_flush_pool_root,
               "fuse_flush_overlay": case_fuse_flush_overlay,
               "modules_no_openat2": case_modules_no_openat2, "log_escapes": case_log_escapes})
