# SPDX-License-Identifier: LGPL-2.1-or-later
"""Harness for tests that crash real programs against the live kernel.

Every global the tests touch (kernel.core_pattern, fs.suid_dumpable, mounts) is saved
first and restored on every exit path: normal return, exception, SIGTERM/SIGINT (meson's
timeout) and interpreter exit. Every process started here is stopped by PID.
"""
import atexit
import fcntl
import glob
import os
import pwd
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

SKIP = 77
CORE_PATTERN = "/proc/sys/kernel/core_pattern"
SUID_DUMPABLE = "/proc/sys/fs/suid_dumpable"
CORE_PIPE_LIMIT = "/proc/sys/kernel/core_pipe_limit"
TEST_USER = "cdstest"
# what the test user runs Python with: the system's, never a root-only one that comes first on PATH
USER_PYTHON = "/usr/bin/python3"
# poll() and ppoll() (what a worker waiting for its job sleeps in), where /proc/PID/wchan says nothing
POLL_SYSCALLS = {"x86_64": ("7", "271"), "aarch64": ("73",)}

BUILD = os.path.realpath(os.environ.get("CDS_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build")))
COREDUMPD = os.path.join(BUILD, "src", "coredumpd")
CRASHER = os.path.join(BUILD, "test", "crasher")
COREDUMPCTL = os.path.join(BUILD, "src", "coredumpctl")

_restore = []  # (callable, description), run in reverse order


def _run_restores():
    while _restore:
        fn, what = _restore.pop()
        try:
            fn()
        except Exception as e:  # keep restoring the rest
            print(f"cdtest: failed to restore {what}: {e}", file=sys.stderr)


def _on_signal(signo, frame):
    _run_restores()
    os._exit(128 + signo)


atexit.register(_run_restores)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)

# The programs the tests crash inherit RLIMIT_CORE from here. coredumpd honours it as
# systemd-coredump does (below one page: no core), and a shell outside systemd starts with a soft
# limit of 0; systemd raises it to infinity for every service and session, so do the same.
# Tests of the limit itself lower it for their program.
resource.setrlimit(resource.RLIMIT_CORE, (resource.getrlimit(resource.RLIMIT_CORE)[1],) * 2)


def read_file(path):
    with open(path) as f:
        return f.read().rstrip("\n")


def write_file(path, value):
    with open(path, "w") as f:
        f.write(value)


def save_sysctl(path):
    old = read_file(path)
    _restore.append((lambda: write_file(path, old), f"{path}={old!r}"))
    return old


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


# Where the tests run the daemon: socket mode where the kernel has the coredump socket, else (and
# with CDS_TEST_MODE=pipe, to try a kernel without it here) pipe mode through coredump-pipe; every
# case pipe mode can serve runs in both, the rest call require_socket() and are skipped, named.
CORE_MODES = "/proc/sys/kernel/core_modes"
TEST_MODES = ("socket", "pipe")
# the first release whose fs/coredump.c has the socket: from there on, its absence is a failure
SOCKET_SINCE = (6, 16)


def kernel_release():
    """The running kernel's (major, minor)."""
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def kernel_has_socket():
    try:
        return "socket" in read_file(CORE_MODES).split()
    except OSError:
        return False


def test_mode():
    """"socket" or "pipe": how this run's daemons take crashes (see TEST_MODES)."""
    forced = os.environ.get("CDS_TEST_MODE", "")
    if forced not in ("", *TEST_MODES):
        fail(f"CDS_TEST_MODE={forced!r}: must be one of {', '.join(TEST_MODES)}")
    if forced == "pipe" or not kernel_has_socket():
        return "pipe"
    return "socket"


def fail(reason):
    """Ends the case as failed (not skipped): for what the run needs and cannot go without."""
    print(f"FAIL: {reason}")
    sys.exit(1)


def require_kernel():
    if os.geteuid() != 0:
        skip("needs root (writes kernel.core_pattern)")
    if not os.access(CORE_PATTERN, os.W_OK):
        skip("kernel.core_pattern is not writable here")
    if not kernel_has_socket() and kernel_release() >= SOCKET_SINCE:
        fail(f"kernel {os.uname().release} is {SOCKET_SINCE[0]}.{SOCKET_SINCE[1]} or later but "
             "kernel.core_modes lacks 'socket': the coredump socket is missing where it is expected")


def require_socket(why):
    """Skips the case, saying why, when this run is in pipe mode (see test_mode())."""
    require_kernel()
    if test_mode() != "socket":
        skip(f"needs the coredump socket ({why}); this run is in pipe mode")


def modes():
    """The modes a case that runs in each should run in: both where the kernel has the socket, else
    pipe alone."""
    return TEST_MODES if test_mode() == "socket" else ("pipe",)


# Bounds on how long something may take are multiplied by this in sanitizer builds, where the
# daemon runs several times slower (test/meson.build sets CDS_TIME_SCALE), and by
# CDS_TIME_SCALE_MACHINE on a slow machine (tests-vm/run --host-suite: a guest under TCG).
MACHINE_SCALE = float(os.environ.get("CDS_TIME_SCALE_MACHINE") or 1)
TIME_SCALE = float(os.environ.get("CDS_TIME_SCALE") or 1) * MACHINE_SCALE
# the daemon's per-crash deadline where a case sets none: generous, longer on a slow machine
DEFAULT_TIMEOUT_S = 60


def scaled(seconds):
    """A bound of seconds on how long something the daemon does may take, for this build."""
    return seconds * TIME_SCALE


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def terminate(proc, timeout=10):
    """SIGTERM, then SIGKILL after timeout seconds; reaped either way."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def fd_targets(pid, prefix):
    """Where pid's descriptors point (readlink), those that start with prefix; descriptors closed
    while looking are left out."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(prefix):
            out.append(target)
    return out


def wait_until(predicate, timeout, what):
    """Polls predicate() every 50 ms until it returns something true, and returns that. After
    timeout seconds fails with "timed out after {timeout}s waiting for {what}"; what may be a
    function, called then, so the message can show the state at that moment (a log, a listing).
    predicate may itself fail (check()) to give up early, e.g. when a daemon died."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        time.sleep(0.05)


def backlog(path):
    """How many connections wait in the listen backlog of the unix socket bound at path (ss shows
    it as Recv-Q of a listening socket); 0 if it is not listening."""
    out = subprocess.run(["ss", "-xlnH"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 5 and f[4] == path:
            return int(f[2])
    return 0


def wait_backlog(path, n, timeout=30):
    """Once n connections (crashes, the kernel's) wait in path's listen backlog."""
    wait_until(lambda: backlog(path) >= n, timeout, lambda: f"{n} connections in the backlog of {path} "
               f"(have {backlog(path)})")


def test_user():
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        skip(f"test user {TEST_USER} missing (run test/setup.sh)")


def sleeps_in_poll(pid):
    """Whether the process sleeps in poll() now (a worker waiting for its job does; one that ended
    does not). wchan is "0" without kallsyms: then the syscall it sleeps in."""
    def proc(name):
        try:
            return read_file(f"/proc/{pid}/{name}")
        except OSError:  # gone, or not ours to read
            return ""
    return bool(re.match(r"(do_sys_poll|poll_schedule_timeout)", proc("wchan")) or
                proc("syscall").split(" ", 1)[0] in POLL_SYSCALLS.get(os.uname().machine, ()))


# the daemon's children that are no workers: the zygote, the spare collector, the forward launcher
# (which names itself so once started from coredump-forward; until then its name is a number)
LAUNCHER_COMM = "cd-fwd-launcher"
NOT_WORKERS = ("coredump-zygote", "coredump-proc", LAUNCHER_COMM)


class Daemon:
    def __init__(self, env, proc, log):
        self.env, self.proc, self.log = env, proc, log

    def log_text(self):
        with open(self.log) as f:
            return f.read()

    def _children_named(self):
        """The daemon's children: [(pid, comm)]."""
        out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [(int(line.split()[0]), " ".join(line.split()[1:])) for line in out.splitlines()]

    def children(self):
        """The daemon's workers: its children but the zygote that forks them, the spare
        collector (coredump-proc) and the forward launcher."""
        return [pid for pid, comm in self._children_named() if comm not in NOT_WORKERS]

    def worker_names(self):
        """The names of the daemon's workers, as ps saw them at one moment (a worker that exits
        and is reaped right after cannot fail the read). A collector forked that moment is named
        coredumpd until it names itself coredump-proc: neither is a worker's name."""
        return {comm for _, comm in self._children_named() if comm not in (*NOT_WORKERS, "coredumpd")}

    def zygote(self):
        """The zygote's PID, or None."""
        z = [pid for pid, comm in self._children_named() if comm == "coredump-zygote"]
        return z[0] if z else None

    def collectors(self):
        """The daemon's collectors (coredump-proc): the spare forked ahead of the next crash, and
        those of crashes in flight."""
        return [pid for pid, comm in self._children_named() if comm == "coredump-proc"]

    def wait_log(self, pattern, timeout=20):
        """The whole line of the daemon's log that pattern is found in, once it is there."""
        def found():
            text = self.log_text()
            m = re.search(pattern, text)
            if m:  # a tuple: true even if the line is empty
                return (text[text.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0],)
            check(self.proc.poll() is None, f"daemon exited ({self.proc.returncode}) waiting for /{pattern}/:\n{self.log_text()}")
            return None
        return wait_until(found, timeout, lambda: f"/{pattern}/ in the daemon log:\n{self.log_text()}")[0]

    def wait_workers(self, n, timeout=10):
        """The daemon's children, once there are at least n."""
        wait_until(lambda: len(self.children()) >= n, timeout,
                   lambda: f"{n} workers (have {self.children()}):\n{self.log_text()}")
        return self.children()

    def wait_idle_workers(self, n, timeout=10):
        """n workers that announced themselves ready and sleep in poll() until the manager gives
        them a job (a worker polls before its job only to wait for the manager; one mapped ahead
        waits twice, before and after its sandbox): stopped from then on, a worker still counts
        as idle for the manager."""
        def workers():
            ws = [w for w in self.children() if sleeps_in_poll(w)]
            return ws if len(ws) >= n else None
        return wait_until(workers, timeout, lambda: f"{n} workers waiting for a job (children {self.children()}):\n"
                          f"{self.log_text()}")

    def end(self):
        """SIGTERM (SIGKILL after 10 s), reaped; fails on a sanitizer report in the log. The exit
        status, unchecked: for the cleanup at the test's end, and daemons a test killed itself."""
        terminate(self.proc)
        log = self.log_text()
        for report in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"):
            check(report not in log, f"sanitizer report in the daemon log:\n{log}")
        return self.proc.returncode

    def stop(self, expect=0):
        """end(), and the exit status must be expect: a daemon that stops on SIGTERM exits 0."""
        rc = self.end()
        check(rc == expect, f"daemon {self.proc.pid} exited with {rc}, not {expect}:\n{self.log_text()[-3000:]}")
        return rc


class Env:
    """One test's world: a socket dir in /run, a storage dir, a config, saved globals."""

    def __init__(self, config=None):
        require_kernel()
        self.saved_pattern = save_sysctl(CORE_PATTERN)
        self.saved_pipe_limit = save_sysctl(CORE_PIPE_LIMIT)
        # short: the pipe mode's core_pattern names this directory and the helper's path in the
        # build tree, and the kernel takes at most 127 bytes of it
        self.rundir = tempfile.mkdtemp(prefix="cds-test.", dir="/run")
        _restore.append((lambda: shutil.rmtree(self.rundir, ignore_errors=True), self.rundir))
        self.base = tempfile.mkdtemp(prefix="coredump-socket-test.", dir="/var/tmp")
        os.chmod(self.base, 0o755)  # users must reach their own cores
        _restore.append((lambda: shutil.rmtree(self.base, ignore_errors=True), self.base))
        self.sock = os.path.join(self.rundir, "kernel.sock")
        # the control socket lives apart: users must reach it, the kernel socket's dir is 0700
        self.ctldir = tempfile.mkdtemp(prefix="coredumpctl-test.", dir="/run")
        os.chmod(self.ctldir, 0o755)
        _restore.append((lambda: shutil.rmtree(self.ctldir, ignore_errors=True), self.ctldir))
        self.control = os.path.join(self.ctldir, "control.sock")
        self.store = os.path.join(self.base, "store")
        self.conf = os.path.join(self.base, "coredump.conf")
        self.confdir = os.path.join(self.base, "coredump.conf.d")
        self.daemons = []
        if test_mode() == "pipe":  # said once per case, in its log
            print(f"cdtest: pipe mode ({'CDS_TEST_MODE=pipe' if kernel_has_socket() else 'the kernel has no coredump socket'})")
        self.write_config(config or {})

    def write_config(self, keys):
        keys = {"Directory": self.store, "TimeoutSec": str(int(DEFAULT_TIMEOUT_S * MACHINE_SCALE)), **keys}
        if test_mode() == "pipe" and kernel_has_socket():  # CDS_TEST_MODE=pipe, unless the case chose
            keys.setdefault("Mode", "pipe")
        with open(self.conf, "w") as f:
            f.write("[Coredump]\n" + "".join(f"{k}={v}\n" for k, v in keys.items()))

    def start(self, extra=(), listen_fd=None, wait_ready=True, journal=None, environ=None, extra_fds=(),
              no_journald=False):
        """The daemon; with journal, writing to that journald; with no_journald, where the machine's
        journald cannot be reached (its socket directory hidden, on a machine that runs one)."""
        log = os.path.join(self.base, f"daemon{len(self.daemons)}.log")
        args = [COREDUMPD, f"--socket={self.sock}", f"--control={self.control}", f"--config={self.conf}", f"--config-dir={self.confdir}", *extra]
        if no_journald and os.path.isdir(JOURNAL_RUN_DIR):
            self.register_pattern()
            args = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    f'mount -t tmpfs -o mode=0755 tmpfs {JOURNAL_RUN_DIR} && exec "$@"', "sh", *args, "--no-register"]
        if journal:
            self.register_pattern()
            args = ["nsenter", f"--mount={journal.ns}", *args, "--no-register"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
        env.update(environ or {})
        kw = {}
        if listen_fd is not None:
            # Exactly what systemd does: the sockets as fds 3 (and 4), LISTEN_PID naming the
            # daemon. Moved there in the child from numbers out of the way: this process may
            # have been started with 3 or 4 open already (flock(1) keeps its lock as fd 3).
            passed = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in (listen_fd, *extra_fds[:1])]

            def place():
                for i, fd in enumerate(passed):
                    os.dup2(fd, 3 + i)

            env["CDS_NFDS"] = str(len(passed))
            args = ["sh", "-c", 'export LISTEN_FDS=$CDS_NFDS LISTEN_PID=$$; exec "$@"', "sh"] + args
            kw["preexec_fn"], kw["pass_fds"] = place, tuple(range(3, 3 + len(passed)))
        with open(log, "w") as lf:
            proc = subprocess.Popen(args, stdout=lf, stderr=subprocess.STDOUT, env=env, **kw)
        for fd in passed if listen_fd is not None else ():
            os.close(fd)
        d = Daemon(self, proc, log)
        self.daemons.append(d)
        _restore.append((d.end, f"daemon {proc.pid}"))
        if wait_ready:
            d.wait_log(r"Ready:")
        return d

    def register_pattern(self):
        """core_pattern can only be written from the initial mount namespace: for a daemon in
        another one the test writes it, the pattern the daemon would choose (socket or pipe, by
        Mode=)."""
        pattern = self.pattern()
        write_file(CORE_PATTERN, pattern)
        if pattern.startswith("|"):
            save_sysctl(CORE_PIPE_LIMIT)
            write_file(CORE_PIPE_LIMIT, "64")

    def pattern(self):
        out = subprocess.run([COREDUMPD, "--check-config", f"--config={self.conf}", f"--config-dir={self.confdir}",
                              f"--socket={self.sock}"], capture_output=True, text=True).stdout
        m = re.search(r"^Pattern=(.+)$", out, re.M)
        check(m, f"coredumpd --check-config gave no pattern:\n{out}")
        return m.group(1)

    def cores(self):
        return sorted(glob.glob(os.path.join(self.store, "core.*")))

    def wait_cores(self, n, timeout=60):
        """The stored cores, once there are at least n."""
        wait_until(lambda: len(self.cores()) >= n, timeout,
                   lambda: f"{n} stored cores, have {self.cores()}:\n" + "\n".join(d.log_text() for d in self.daemons))
        return self.cores()

    def mount_tmpfs(self, path, size):
        os.makedirs(path, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", path], check=True)
        _restore.append((lambda: subprocess.run(["umount", "-l", path]), f"tmpfs {path}"))


JOURNALD = "/lib/systemd/systemd-journald"
JOURNAL_RUN_DIR = "/run/systemd/journal"  # where the machine's journald listens, if it runs
COREDUMP_MESSAGE_ID = "fc2e22bc6ee647b6b90729ab34a250b1"
MACHINE_ID = "/etc/machine-id"


class Journal:
    """A real systemd-journald in a private mount namespace, with test directories mounted over
    /run/systemd and /var/log/journal (persistent, so per-user files get their ACLs) and a
    tmpfs over /run/log."""

    def __init__(self, env):
        if not os.access(JOURNALD, os.X_OK):
            skip(f"{JOURNALD} missing (package systemd)")
        dirs = {d: os.path.join(env.base, d) for d in ("jrun", "jlog")}
        for d in dirs.values():
            os.makedirs(d, mode=0o755)
        self.log = os.path.join(env.base, "journald.log")
        # /run/log must be a tmpfs: journald only deletes a runtime journal from one after the flush
        cmd = (f"mount --bind {dirs['jrun']} /run/systemd && mount -t tmpfs -o mode=0755 tmpfs /run/log && "
               f"mount --bind {dirs['jlog']} /var/log/journal && exec {JOURNALD}")
        with open(self.log, "w") as lf:
            self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", cmd],
                                         stdout=lf, stderr=subprocess.STDOUT)
        _restore.append((self.stop, f"journald {self.proc.pid}"))
        self.ns = f"/proc/{self.proc.pid}/ns/mnt"
        self.root = dirs["jlog"]  # what journald sees as /var/log/journal
        self.dir = os.path.join(self.root, read_file(MACHINE_ID))
        self._wait(os.path.join(dirs["jrun"], "journal", "socket"))
        # journald binds its sockets before it takes SIGUSR1 (signalfd): sent earlier, the signal kills it
        wait_until(lambda: self._catches(signal.SIGUSR1), 10, lambda: f"journald to handle SIGUSR1:\n{read_file(self.log)}")
        os.kill(self.proc.pid, signal.SIGUSR1)  # write to the persistent directory from now on
        self._wait(os.path.join(self.dir, "system.journal"))

    def __repr__(self):
        return f"the journal in {self.root}"

    def _catches(self, sig):
        """Whether journald takes sig (blocked for its signalfd, or caught), failing if it died."""
        check(self.proc.poll() is None, f"journald exited ({self.proc.returncode}):\n{read_file(self.log)}")
        status = read_file(f"/proc/{self.proc.pid}/status")
        masks = [int(m, 16) for m in re.findall(r"^Sig(?:Blk|Cgt):\s+([0-9a-f]+)$", status, re.M)]
        return any(m & (1 << (sig - 1)) for m in masks)

    def _wait(self, path, timeout=10):
        def created():
            check(os.path.exists(path) or self.proc.poll() is None,
                  f"journald exited ({self.proc.returncode}) before creating {path}:\n{read_file(self.log)}")
            return os.path.exists(path)
        wait_until(created, timeout, lambda: f"journald to create {path}:\n{read_file(self.log)}")

    def sync(self):
        subprocess.run(["nsenter", f"--mount={self.ns}", "journalctl", "--sync"], check=True, timeout=30)

    def entries(self, *matches):
        """Entries as dicts of bytes values (binary-safe), via journalctl -o export."""
        self.sync()
        out = subprocess.run(["journalctl", "-D", self.dir, "-o", "export", "--no-pager", *matches],
                             capture_output=True, timeout=60).stdout
        return parse_export(out)

    def entry(self, pid, timeout=30):
        """The one coredump entry of PID pid, waiting for journald to have it."""
        def found():
            es = [e for e in self.entries("MESSAGE_ID=" + COREDUMP_MESSAGE_ID) if e.get("COREDUMP_PID") == str(pid).encode()]
            check(len(es) <= 1, f"{len(es)} journal entries for PID {pid}")
            return es and es[0]
        return wait_until(found, timeout, f"the journal entry of PID {pid}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def parse_export(data):
    """Journal export format → list of {name: bytes}."""
    entries, cur, i = [], {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if line == b"":
            if cur:
                entries.append(cur)
            cur, i = {}, nl + 1
            continue
        if b"=" in line:
            k, v = line.split(b"=", 1)
            cur[k.decode()] = v
            i = nl + 1
        else:
            size = struct.unpack_from("<Q", data, nl + 1)[0]
            cur[line.decode()] = data[nl + 9:nl + 9 + size]
            i = nl + 9 + size + 1
    if cur:
        entries.append(cur)
    return entries


def systemd_coredumpctl():
    """systemd's own coredumpctl, unpacked from Debian's systemd-coredump (see tools/)."""
    path = os.environ.get("SYSTEMD_COREDUMPCTL") or os.path.join(BUILD, "systemd-coredump", "usr", "bin", "coredumpctl")
    if not os.access(path, os.X_OK):
        skip(f"systemd's coredumpctl not found at {path} (tools/run-tests.sh unpacks it)")
    return path


# A program standing in for coredumpd: installs a seccomp filter (classic BPF over struct
# seccomp_data, as (code, jt, jf, k) tuples in INSNS), then execs the real binary: the filter holds
# for the daemon and everything it starts.
_FILTER_WRAPPER = r"""
import ctypes, os, platform, struct, sys
buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in INSNS))
prog = struct.pack("HxxxxxxQ", len(INSNS), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.syscall(317 if platform.machine() == "x86_64" else 277, 1, 0, ctypes.c_char_p(prog)) == 0, ctypes.get_errno()
os.execv(REAL, [REAL] + sys.argv[1:])
"""
# unshare(2)'s number, for such filters
SYS_UNSHARE = {"x86_64": 272, "aarch64": 97}[os.uname().machine]


def start_filtered(env, name, insns, **start):
    """Starts env's coredumpd under the seccomp filter insns (a wrapper script named name); start:
    env.start()'s arguments."""
    global COREDUMPD
    real = COREDUMPD
    wrapper = os.path.join(env.base, name)
    with open(wrapper, "w") as f:
        f.write(f"#!/usr/bin/python3\nREAL = {real!r}\nINSNS = {insns!r}" + _FILTER_WRAPPER)
    os.chmod(wrapper, 0o755)
    COREDUMPD = wrapper
    try:
        return env.start(**start)
    finally:
        COREDUMPD = real


def crash(mode="segv", *args, user=None, exe=CRASHER, env=None, timeout=120):
    """Runs the crasher to its death; returns (pid, returncode)."""
    cmd = [exe, mode, *map(str, args)]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.wait(timeout)
    return p.pid, p.returncode


def start_crash(mode="segv", *args, sync=False, exe=CRASHER):
    env = dict(os.environ, CRASHER_SYNC="1") if sync else None
    p = subprocess.Popen([exe, mode, *map(str, args)], env=env, stdin=subprocess.PIPE if sync else subprocess.DEVNULL,
                         stdout=subprocess.PIPE if sync else subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _restore.append((lambda: p.poll() is None and p.kill(), f"crasher {p.pid}"))
    if sync:
        check(p.stdout.readline().strip() == b"ready", "crasher did not get ready")
    return p


# what a python3 crash runs: it kills itself with SIGSEGV at once (a real program, dozens of
# mapped files: the interpreter, libc, libm, libz, libexpat, its modules...)
PYTHON_SEGV = "import os; os.kill(os.getpid(), 11)"


def start_python_crash(env, name, *args):
    """python3 run through a link called name in env.base (so that name is its comm: the name the
    worker's test faults answer to, or a test's log lines look for), crashing with SIGSEGV at
    once, args after its script: its Popen."""
    exe = os.path.join(env.base, name)
    if not os.path.lexists(exe):
        os.symlink(os.path.realpath(sys.executable), exe)
    p = subprocess.Popen([exe, "-c", PYTHON_SEGV, *args])
    _restore.append((lambda: p.poll() is None and p.kill(), f"python3 {p.pid}"))
    return p


def slow_crash_in_flight(mib, wait):
    """A crash whose dump is still streaming after `wait` seconds (the config makes it slow:
    CompressLevel=19 with SpoolMax=0, so that the stream waits for the compressor)."""
    p = start_crash("mem", mib, "random", sync=True)
    p.stdin.write(b"x")
    p.stdin.flush()
    time.sleep(wait)
    check(p.poll() is None, "the dump finished too early")
    return p


def fill(path):
    """Writes path until its file system is full."""
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\xff" * (1 << 16))
                f.flush()
        except OSError:
            pass


def read_exports(env, prefix):
    """Every entry of the store's PREFIX.*.export files (record, suppressed), as dicts of bytes."""
    out = []
    for path in sorted(glob.glob(os.path.join(env.store, prefix + ".*.export"))):
        with open(path, "rb") as f:
            out += parse_export(f.read())
    return out


def record_of(env, pid, d, timeout=60):
    """The record of PID pid in the store, once it is written (fails after timeout seconds, showing
    the end of daemon d's log)."""
    return wait_until(lambda: {r["COREDUMP_PID"]: r for r in read_exports(env, "record")}.get(str(pid).encode()),
                      timeout, lambda: f"the record of PID {pid}:\n{d.log_text()[-6000:]}")


def crasher_copies(env, names):
    """{name: path}: copies of the crasher under other names in the test's directory, each its own
    executable (and comm)."""
    out = {}
    for n in names:
        out[n] = os.path.join(env.base, n)
        shutil.copy(CRASHER, out[n])
        os.chmod(out[n], 0o755)
    return out


def copy_crasher(env, name):
    """The crasher copied as env.base/name."""
    return crasher_copies(env, [name])[name]


def as_uid(uid, gid, cmd):
    """cmd run with real and effective uid and gid set, no supplementary groups."""
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *cmd]


def decompress(path, out):
    if path.endswith(".zst"):
        subprocess.run(["zstd", "-q", "-d", "-f", "-o", out, path], check=True)
    elif path.endswith(".lz4"):
        subprocess.run(["lz4", "-q", "-d", "-f", path, out], check=True)
    else:
        shutil.copyfile(path, out)
    return out


def elf_core_info(path):
    """Reads the ELF header and the notes with eu-readelf: {'type', 'pids', 'signal', 'threads'}."""
    with open(path, "rb") as f:
        ident = f.read(64)
    check(ident[:4] == b"\x7fELF", f"{path}: not ELF")
    e_type = struct.unpack_from("<H", ident, 16)[0]
    notes = subprocess.run(["eu-readelf", "-n", path], capture_output=True, text=True).stdout
    prstatus = [re.search(r"\bpid: (\d+)", chunk).group(1) for chunk in notes.split("PRSTATUS")[1:]]
    sig = re.search(r"SIGINFO\n\s+si_signo: (\d+)", notes)
    return {"type": e_type, "pids": [int(p) for p in prstatus], "signal": int(sig.group(1)) if sig else None,
            "threads": len(prstatus)}


def gdb_threads(exe, core):
    """gdb in batch mode must load the core and see its threads."""
    out = subprocess.run(["gdb", "-batch", "-nx", "-ex", "info threads", exe, core], capture_output=True, text=True,
                         timeout=300)
    text = out.stdout + out.stderr
    check("is not a core dump" not in text and "not in executable format" not in text, f"gdb rejected the core:\n{text}")
    return len(re.findall(r"^\*?\s+\d+\s+(?:Thread|LWP|process)", out.stdout, re.M))


def xattrs(path):
    out = subprocess.run(["getfattr", "-d", "--absolute-names", path], capture_output=True, text=True).stdout
    return dict(re.findall(r'^user\.coredump\.(\w+)="(.*)"$', out, re.M))


def acl_users(path):
    out = subprocess.run(["getfacl", "-cpn", path], capture_output=True, text=True).stdout
    return [int(u) for u in re.findall(r"^user:(\d+):", out, re.M)]


def run_cases(cases):
    """python3 test-x.py CASE: runs one case (meson registers each as its own test)."""
    name = sys.argv[1] if len(sys.argv) > 1 else None
    if name not in cases:
        print(f"usage: {sys.argv[0]} {{{'|'.join(cases)}}}", file=sys.stderr)
        sys.exit(2)
    cases[name]()
    print(f"PASS: {name}")


def ctl_command(args, user=None, tool=None):
    """The command line of our coredumpctl (or tool) with args, as user if given. A Journal among
    args stands for that journald's journal read as the local journald's: the command runs in a
    mount namespace of its own with the journal's directory on /var/log/journal (and nothing on
    /run/log/journal), where coredumpctl finds it as /var/log/journal/MACHINE_ID, the local
    journald's own, without -D (with -D the files would be another writer's, whose entries name no
    file here). That journald may have stopped."""
    journals = [a for a in args if isinstance(a, Journal)]
    cmd = [tool or COREDUMPCTL, "--no-pager", *(a for a in args if not isinstance(a, Journal))]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]
    if journals:
        mounts = ('mount --bind "$1" /var/log/journal && { [ ! -d /run/log ] || mount -t tmpfs tmpfs /run/log; } && '
                  'shift && exec "$@"')
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", mounts, "sh", journals[0].root, *cmd]
    return cmd


def coredumpctl(*args, user=None, tool=None, stdin=None, stdout=subprocess.PIPE, env=None, timeout=300):
    """Runs our coredumpctl (or tool), as user if given; text output, never a pager. See
    ctl_command() for a Journal among args."""
    cmd = ctl_command(args, user, tool)
    # no debuginfod lookups (network) unless a test asks for them
    e = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    e.update({"TZ": "UTC", "LC_ALL": "C.UTF-8", "SYSTEMD_COLORS": "0"})
    e.update(env or {})
    return subprocess.run(cmd, stdin=stdin or subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, env=e,
                           timeout=timeout)
