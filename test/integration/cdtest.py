# SPDX-License-Identifier: LGPL-2.1-or-later
"""Harness for tests that crash real programs against the live kernel.

Every global the tests touch (kernel.core_pattern, fs.suid_dumpable, mounts) is saved
first and restored on every exit path: normal return, exception, SIGTERM/SIGINT (meson's
timeout) and interpreter exit. Every process started here is stopped by PID.
"""
import atexit
import glob
import os
import pwd
import re
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


def require_kernel():
    if os.geteuid() != 0:
        skip("needs root (writes kernel.core_pattern)")
    try:
        modes = read_file("/proc/sys/kernel/core_modes")
    except OSError:
        modes = ""
    if "socket" not in modes:
        skip("kernel has no coredump socket (kernel.core_modes lacks 'socket')")
    if not os.access(CORE_PATTERN, os.W_OK):
        skip("kernel.core_pattern is not writable here")


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def test_user():
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        skip(f"test user {TEST_USER} missing (run test/setup.sh)")


class Daemon:
    def __init__(self, env, proc, log):
        self.env, self.proc, self.log = env, proc, log

    def log_text(self):
        with open(self.log) as f:
            return f.read()

    def children(self):
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def wait_log(self, pattern, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_text()
            m = re.search(pattern, text)
            if m:  # the whole line it is in
                return text[text.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0]
            check(self.proc.poll() is None, f"daemon exited ({self.proc.returncode}) waiting for /{pattern}/:\n{self.log_text()}")
            time.sleep(0.05)
        raise AssertionError(f"no /{pattern}/ in the daemon log within {timeout}s:\n{self.log_text()}")

    def wait_workers(self, n, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.children()) >= n:
                return self.children()
            time.sleep(0.05)
        raise AssertionError(f"fewer than {n} workers started")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        log = self.log_text()
        for report in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"):
            check(report not in log, f"sanitizer report in the daemon log:\n{log}")
        return self.proc.returncode


class Env:
    """One test's world: a socket dir in /run, a storage dir, a config, saved globals."""

    def __init__(self, config=None):
        require_kernel()
        self.saved_pattern = save_sysctl(CORE_PATTERN)
        self.saved_pipe_limit = save_sysctl(CORE_PIPE_LIMIT)
        self.rundir = tempfile.mkdtemp(prefix="coredump-socket-test.", dir="/run")
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
        self.write_config(config or {})

    def write_config(self, keys):
        keys = {"Directory": self.store, "TimeoutSec": "60", **keys}
        with open(self.conf, "w") as f:
            f.write("[Coredump]\n" + "".join(f"{k}={v}\n" for k, v in keys.items()))

    def start(self, extra=(), listen_fd=None, wait_ready=True, journal=None, environ=None, extra_fds=()):
        log = os.path.join(self.base, f"daemon{len(self.daemons)}.log")
        args = [COREDUMPD, f"--socket={self.sock}", f"--control={self.control}", f"--config={self.conf}", f"--config-dir={self.confdir}", *extra]
        if journal:
            # core_pattern can only be written from the initial mount namespace: the test does
            # it, with the pattern the daemon would choose (socket or pipe, by Mode=)
            write_file(CORE_PATTERN, self.pattern())
            if self.pattern().startswith("|"):
                save_sysctl(CORE_PIPE_LIMIT)
                write_file(CORE_PIPE_LIMIT, "64")
            args = ["nsenter", f"--mount={journal.ns}", *args, "--no-register"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
        env.update(environ or {})
        kw = {}
        if listen_fd is not None and extra_fds:
            # two sockets, as the socket unit passes them: fds 3 and 4
            env["CDS_FD"], env["CDS_FD2"] = str(listen_fd), str(extra_fds[0])
            args = ["sh", "-c", 'exec 5<&$CDS_FD 6<&$CDS_FD2; exec 3<&5 4<&6 5<&- 6<&-; '
                    'export LISTEN_FDS=2 LISTEN_PID=$$; exec "$@"', "sh"] + args
            kw["pass_fds"] = (listen_fd, extra_fds[0])
        elif listen_fd is not None:
            # Exactly what systemd does: the socket as fd 3, LISTEN_PID naming the daemon.
            env["CDS_FD"] = str(listen_fd)
            args = ["sh", "-c", '[ "$CDS_FD" = 3 ] || eval "exec 3<&$CDS_FD $CDS_FD<&-"; export LISTEN_FDS=1 LISTEN_PID=$$; exec "$@"', "sh"] + args
            kw["pass_fds"] = (listen_fd,)
        with open(log, "w") as lf:
            proc = subprocess.Popen(args, stdout=lf, stderr=subprocess.STDOUT, env=env, **kw)
        d = Daemon(self, proc, log)
        self.daemons.append(d)
        _restore.append((d.stop, f"daemon {proc.pid}"))
        if wait_ready:
            d.wait_log(r"Ready:")
        return d

    def pattern(self):
        out = subprocess.run([COREDUMPD, "--check-config", f"--config={self.conf}", f"--config-dir={self.confdir}",
                              f"--socket={self.sock}"], capture_output=True, text=True).stdout
        m = re.search(r"^Pattern=(.+)$", out, re.M)
        check(m, f"coredumpd --check-config gave no pattern:\n{out}")
        return m.group(1)

    def cores(self):
        return sorted(glob.glob(os.path.join(self.store, "core.*")))

    def wait_cores(self, n, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.cores()) >= n:
                return self.cores()
            time.sleep(0.05)
        raise AssertionError(f"expected {n} stored cores, have {self.cores()}:\n" +
                             "\n".join(d.log_text() for d in self.daemons))

    def mount_tmpfs(self, path, size):
        os.makedirs(path, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", path], check=True)
        _restore.append((lambda: subprocess.run(["umount", "-l", path]), f"tmpfs {path}"))


JOURNALD = "/lib/systemd/systemd-journald"
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
        self.dir = os.path.join(dirs["jlog"], read_file(MACHINE_ID))
        self._wait(os.path.join(dirs["jrun"], "journal", "socket"))
        os.kill(self.proc.pid, signal.SIGUSR1)  # write to the persistent directory from now on
        self._wait(os.path.join(self.dir, "system.journal"))

    def _wait(self, path, timeout=10):
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            check(time.monotonic() < deadline and self.proc.poll() is None, f"journald did not create {path}")
            time.sleep(0.05)

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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            es = [e for e in self.entries("MESSAGE_ID=" + COREDUMP_MESSAGE_ID) if e.get("COREDUMP_PID") == str(pid).encode()]
            if es:
                check(len(es) == 1, f"{len(es)} journal entries for PID {pid}")
                return es[0]
            time.sleep(0.2)
        raise AssertionError(f"no journal entry for PID {pid}")

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


def slow_crash_in_flight(mib, wait):
    """A crash whose dump is still streaming after `wait` seconds (the config makes it slow)."""
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


def coredumpctl(*args, user=None, tool=None, stdin=None, stdout=subprocess.PIPE, env=None, timeout=300):
    """Runs our coredumpctl (or tool), as user if given; text output, never a pager."""
    cmd = [tool or COREDUMPCTL, "--no-pager", *args]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]
    e = dict(os.environ, TZ="UTC", LC_ALL="C.UTF-8", SYSTEMD_COLORS="0")
    e.update(env or {})
    return subprocess.run(cmd, stdin=stdin or subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, env=e,
                           timeout=timeout)
