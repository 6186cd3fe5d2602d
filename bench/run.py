#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The benchmark: coredump-socket with its default configuration (backtraces on) against the
drain-only reference server (the least a collector can do: handshake, read, discard), the
workloads of docs/performance.md, interleaved round by round in one run; beside it the same
server keeping the core in a fresh memfd until the release (spool-only), what holding a core in
memory costs the crashed task on this machine.

    sudo python3 bench/run.py [--rounds 5] [--storm 200] [--build build] [--json FILE] [--plot FILE.svg]

--json writes the medians below as JSON; --plot draws them (bench/plot.py, python3-matplotlib:
run it with /usr/bin/python3 then).

Also systemd-coredump (Debian's v252) when it is found, installed or unpacked into the build
directory by tools/run-tests.sh: its pipe helper, its socket-activated service (emulated with
systemd-socket-activate, no PID 1 needed) and a journald (--no-systemd leaves it out).

Prints, per workload: median crash-to-waitpid latency of each collector and the ratio to the
reference, CPU per crash, stored bytes; then a storm of tiny crashes, 4 in flight: crashes/s
and p99 (coredumpd with the rate limit off, so every crash goes the whole way, and again with
its default rate limit, the storm being one crash-looping program; both with coredumpd at its
default log level, the workloads at debug level for what they read from its log), beside the
store floor (drainsrv --store: a forked process per crash that only compresses at level 3 into a
file and syncs it, the least CPU a process per crash costs here, its CPU the children's; not a
latency floor, the fork being on each crash's path); with each storm the machine's CPU per
crash (busy time of all CPUs in /proc/stat from the storm's start until its crashes are done:
the crashing processes, the kernel's threads and anything else running, besides the collector),
which N CPUs bound at N seconds per second; and the peak
memory of coredumpd's manager and of one worker. Restores
kernel.core_pattern and kernel.core_pipe_limit on every exit path (and removes everything it
created). It is not a test: it never fails on a number."""
import argparse
import glob
import gzip
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
import cdtest  # noqa: E402  (restores core_pattern and stops what it started on every exit path)

WORKLOADS = [  # name, crasher arguments
    ("tiny", ["segv"]),
    ("64 MiB random", ["mem", "64", "random"]),
    ("256 MiB text", ["mem", "256"]),
    ("1 GiB untouched", ["sparse", "1024"]),
    ("64 idle threads", ["threads", "64"]),
]
TICKS = os.sysconf("SC_CLK_TCK")
SETTLE_TIMEOUT_S = 5
SETTLE_STABLE_S = 0.02
STORE_REAP_WAIT_S = 0.1  # drainsrv --store reaps its children every 5 ms


def scratch_dirs():
    """A directory for sockets under /run and one for storage under /var/tmp, both removed
    on every exit path: (rundir, base)."""
    rundir = tempfile.mkdtemp(prefix="coredump-socket-bench.", dir="/run")
    base = tempfile.mkdtemp(prefix="coredump-socket-bench.", dir="/var/tmp")
    cdtest._restore.append((lambda: shutil.rmtree(rundir, ignore_errors=True), rundir))
    cdtest._restore.append((lambda: shutil.rmtree(base, ignore_errors=True), base))
    return rundir, base


def crash_once(crasher, args):
    """One crash: (milliseconds from the crash to waitpid() returning, its PID, the crash's
    time.monotonic())."""
    env = dict(os.environ, CRASHER_SYNC="1")
    p = subprocess.Popen([crasher, *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    if p.stdout.readline().strip() != b"ready":
        raise RuntimeError("crasher did not get ready")
    t0 = time.monotonic()
    p.stdin.write(b"x")
    p.stdin.flush()
    _, status = os.waitpid(p.pid, 0)
    t1 = time.monotonic()
    p.returncode = status
    return (t1 - t0) * 1000, p.pid, t0


def machine_busy_ms():
    """Milliseconds all CPUs were busy since boot (/proc/stat: user, nice, system, irq, softirq;
    not idle, iowait, nor steal, the host's time on a VM's CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) * 1000 / TICKS


def cpu_seconds(pid):
    """utime + stime of pid and of its reaped children (the workers)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def vmhwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^VmHWM:\s+(\d+)", f.read(), re.M).group(1))


def store_bytes(store):
    total = 0
    for f in os.listdir(store):
        if f.startswith("core."):
            total += os.stat(os.path.join(store, f)).st_blocks * 512
    return total


def clear_store(store):
    for f in os.listdir(store):
        os.unlink(os.path.join(store, f))


class Coredumpd:
    def __init__(self, build, rundir, base, name="", debug=True):
        """debug: log at debug level, which the workloads read their peak memory, spool use and
        completion from; the storms run a second instance at the default level (info), whose
        CPU is the daemon's as installed, not its debug log's (about 0.3 ms a crash)."""
        self.store = os.path.join(base, "store")
        self.conf = os.path.join(base, f"coredump{name}.conf")
        # everything else: the defaults, but for the rate limit, so that every crash of the
        # workloads and of the first storm goes the whole way (the storm is one program)
        self.configure("RateLimitBurst=0\n")
        self.sock = os.path.join(rundir, f"kernel{name}.sock")
        self.logpath = os.path.join(base, f"coredumpd{name}.log")
        self.debug = debug
        log = open(self.logpath, "w")
        env = {k: v for k, v in os.environ.items() if k != "COREDUMP_SOCKET_LOG_LEVEL"}
        if debug:
            env["COREDUMP_SOCKET_LOG_LEVEL"] = "debug"
        self.binary = os.path.join(build, "src", "coredumpd")
        self.proc = subprocess.Popen([self.binary, f"--socket={self.sock}",
                                      f"--config={self.conf}", "--config-dir=/nonexistent", "--no-register",
                                      f"--control={os.path.join(rundir, f'control{name}.sock')}"],
                                     stdout=log, stderr=log, env=env)
        cdtest._restore.append((self.stop, "coredumpd"))
        deadline = time.monotonic() + 10
        while "Ready:" not in open(self.logpath).read():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("coredumpd did not start:\n" + open(self.logpath).read())
            time.sleep(0.05)

    def configure(self, extra):
        with open(self.conf, "w") as f:
            f.write(f"[Coredump]\nDirectory={self.store}\n{extra}")

    def reload(self, extra):
        """Applies a new configuration (SIGHUP) and waits until the daemon says so."""
        self.configure(extra)
        n = open(self.logpath).read().count("Reloading configuration")
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while open(self.logpath).read().count("Reloading configuration") == n:
            if time.monotonic() > deadline:
                raise RuntimeError("coredumpd did not reload")
            time.sleep(0.02)

    def pattern(self):
        return "@@" + self.sock

    def wait_done(self, pids, timeout=120, poll=0.02, need=None):
        """Until the last step (journal entry, or the record without one) of each crash is
        logged (of need of them, if given): the work for them is done. At the default level only
        the stored core is logged (before the journal entry, and nothing of a refused crash):
        settle() then waits for the workers that write it."""
        left, deadline = set(pids), time.monotonic() + timeout
        need = len(left) if need is None else need
        done = re.compile(r"Crash of PID (\d+)\b.*(?:journal entry written|record kept|record is kept|counted for the summary)"
                          if self.debug else r"Crash of PID (\d+)\b.* stored as ")
        while len(pids) - len(left) < need and time.monotonic() < deadline:
            left -= {int(p) for p in done.findall(open(self.logpath).read())}
            if len(pids) - len(left) < need:
                time.sleep(poll)
        if len(pids) - len(left) < need:
            print(f"warning: {need - (len(pids) - len(left))} crashes not finished after {timeout} s", file=sys.stderr)

    def workers(self):
        """The PIDs of the daemon's children (zombies too) but its zygote, its spare collector and
        its forward launcher (cdtest.NOT_WORKERS; from /proc: settle() looks every few
        milliseconds, which ps would make a load of its own)."""
        tasks = glob.glob(f"/proc/{self.proc.pid}/task/*/children")
        if not tasks:
            raise RuntimeError("no /proc/PID/task/TID/children (a kernel without CONFIG_PROC_CHILDREN)")
        out = set()
        for task in tasks:
            try:
                kids = [int(k) for k in cdtest.read_file(task).split()]
            except OSError:
                continue
            for kid in kids:
                try:
                    if cdtest.read_file(f"/proc/{kid}/comm") not in cdtest.NOT_WORKERS:
                        out.add(kid)
                except OSError:  # exited meanwhile
                    pass
        return out

    def settle(self, before, jobs=0, timeout=SETTLE_TIMEOUT_S):
        """Until the workers of the crashes just done have exited and been reaped (their CPU time
        is the manager's children's only then). Workers are single-use: jobs spares of before
        (the crashes' workers, taken from them) are no longer the daemon's children, zombies
        included; and every worker left sleeps in poll() (a spare waits for its job, a worker at
        its end does not), the same ones SETTLE_STABLE_S apart (a worker waits in poll() for a
        moment between its result and its commit). The spares started meanwhile are new PIDs:
        "none but those of before" would wait for the timeout after every crash."""
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            now = self.workers()
            if len(before - now) >= min(len(before), jobs) and all(cdtest.sleeps_in_poll(w) for w in now):
                if now == last:
                    return
                last = now
                time.sleep(SETTLE_STABLE_S)
                continue
            last = None
            time.sleep(0.005)
        print(f"warning: the workers did not settle in {timeout} s", file=sys.stderr)

    def spool_peak(self):
        """The most one crash held in its spool (bytes; the crashes of the workloads go one at a
        time, so this is the spool's peak use)."""
        v = [int(x) for x in re.findall(r"(\d+) bytes spooled", open(self.logpath).read())]
        return max(v) if v else 0

    def worker_peak_kib(self):
        v = [int(x) for x in re.findall(r"worker peak memory (\d+) KiB", open(self.logpath).read())]
        return max(v) if v else 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)


class Drain:
    def __init__(self, build, rundir, memfd=False, store=None):
        """store: a directory, for the floor of a process per crash storing as systemd-coredump
        does (drainsrv --store)."""
        self.sock = os.path.join(rundir, "store.sock" if store else "spool.sock" if memfd else "drain.sock")
        self.store = store
        mode = ["--store", store] if store else ["--memfd"] if memfd else []
        self.proc = subprocess.Popen([os.path.join(build, "bench", "drainsrv"), *mode, self.sock],
                                     stdout=subprocess.PIPE)
        cdtest._restore.append((lambda: (self.proc.kill(), self.proc.wait()), "drainsrv"))
        if self.proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("drainsrv did not start")

    def pattern(self):
        return "@@" + self.sock

    def wait_stored(self, n, timeout=60):
        """Until n cores are in the store (named once synced) and their children reaped (reaped
        every few ms)."""
        deadline = time.monotonic() + timeout
        while sum(f.startswith("core.") for f in os.listdir(self.store)) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(STORE_REAP_WAIT_S)


SD_PATTERN_ARGS = "%P %u %g %s %t 9223372036854775808 %h %d"  # Debian's 50-coredump.conf
SD_STORE = "/var/lib/systemd/coredump"
SD_SOCKET = "/run/systemd/coredump"
JOURNAL_SOCKET = "/run/systemd/journal/socket"
CPUACCT = "/sys/fs/cgroup/cpuacct"


def systemd_coredump_binary(build):
    """systemd-coredump as installed, or as tools/run-tests.sh unpacks it into the build dir
    (installing the package would rewrite core_pattern and suid_dumpable in its postinst)."""
    for path in ("/lib/systemd/systemd-coredump", os.path.join(build, "systemd-coredump", "lib", "systemd",
                                                                "systemd-coredump")):
        if os.access(path, os.X_OK):
            return path
    return None


def systemd_coredump_version(binary):
    """The Debian version of the package binary came from (its changelog beside it, installed or
    unpacked), or "" if it cannot be told."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(binary)))  # .../lib/systemd/x -> ...
    try:
        with gzip.open(os.path.join(root, "usr/share/doc/systemd-coredump/changelog.Debian.gz"), "rt") as f:
            m = re.match(r"\S+ \(([^)]+)\)", f.readline())
    except OSError:
        return ""
    return m.group(1) if m else ""


def journald_listening():
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.connect(JOURNAL_SOCKET)
        return True
    except OSError:
        return False
    finally:
        s.close()


class SystemdCoredump:
    """Debian's systemd-coredump (v252) without systemd as PID 1: its pipe helper from
    core_pattern (with core_pipe_limit=16, as the package sets), its socket-activated service
    emulated by systemd-socket-activate (Accept=yes, Nice=9 as in the unit), a journald. CPU is
    that of the service instances and journald (a cpuacct cgroup); the kernel-spawned helper
    runs outside it and is not counted."""

    def __init__(self, binary, base):
        self.bin = binary
        self.cg = os.path.join(CPUACCT, f"coredump-socket-bench-{os.getpid()}")
        os.makedirs(SD_STORE, exist_ok=True)
        self.keep = set(os.listdir(SD_STORE))
        os.mkdir(self.cg)
        cdtest._restore.append((self.remove_cgroup, self.cg))
        self.procs = []
        self.journal_dir_existed = os.path.exists(os.path.dirname(JOURNAL_SOCKET))
        if not journald_listening():
            # its sockets where systemd-coredump looks, its journal files on a private tmpfs:
            # the machine's journal does not keep the benchmark's crashes
            self.spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        "mount -t tmpfs -o mode=0755 tmpfs /run/log && "
                        "mount -t tmpfs -o mode=0755 tmpfs /var/log/journal && exec /lib/systemd/systemd-journald"],
                       os.path.join(base, "journald.log"))
            deadline = time.monotonic() + 10
            while not journald_listening() and time.monotonic() < deadline:
                time.sleep(0.05)
        if os.path.exists(SD_SOCKET):
            os.unlink(SD_SOCKET)
        self.spawn(["nice", "-n", "9", "systemd-socket-activate", "--seqpacket", "-a", "-l", SD_SOCKET, self.bin],
                   os.path.join(base, "socket-activate.log"))
        deadline = time.monotonic() + 10
        while not os.path.exists(SD_SOCKET) and time.monotonic() < deadline:
            time.sleep(0.05)
        cdtest._restore.append((self.stop, "systemd-coredump"))

    def spawn(self, argv, logpath):
        p = subprocess.Popen(argv, stdout=open(logpath, "w"), stderr=subprocess.STDOUT)
        self.procs.append(p)
        with open(os.path.join(self.cg, "cgroup.procs"), "w") as f:
            f.write(str(p.pid))

    def pattern(self):
        return f"|{self.bin} {SD_PATTERN_ARGS}"

    def cpu_ms(self):
        with open(os.path.join(self.cg, "cpuacct.usage")) as f:
            return int(f.read()) / 1e6

    def wait_done(self, timeout=120):
        """Until no helper or service instance is left."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = False
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/comm") as f:
                        busy = busy or f.read().strip() in ("systemd-coredum", "(sd-parse-elf)")
                except OSError:
                    pass
            if not busy:
                return
            time.sleep(0.02)

    def new_files(self):
        return [os.path.join(SD_STORE, f) for f in os.listdir(SD_STORE) if f not in self.keep]

    def stored_bytes(self):
        return sum(os.stat(f).st_blocks * 512 for f in self.new_files())

    def clear(self):
        for f in self.new_files():
            os.unlink(f)

    def stop(self):
        self.wait_done(30)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                p.wait(30)
        self.procs = []
        if os.path.exists(SD_SOCKET):
            os.unlink(SD_SOCKET)
        if not self.journal_dir_existed:  # the journald we started left its sockets
            shutil.rmtree(os.path.dirname(JOURNAL_SOCKET), ignore_errors=True)
        self.clear()

    def remove_cgroup(self):
        if os.path.isdir(self.cg):
            os.rmdir(self.cg)


def spool_max(cd):
    """SpoolMax= in effect (bytes), as coredumpd --check-config says."""
    out = subprocess.run([cd.binary, "--check-config", f"--config={cd.conf}", "--config-dir=/nonexistent"],
                         capture_output=True, text=True).stdout
    m = re.search(r"^SpoolMax=(\d+)$", out, re.M)
    return int(m.group(1)) if m else 0


def storm(stormer, n, in_flight):
    """n tiny crashes, in_flight at a time, driven by bench/stormer (C: the driver must not be
    the bottleneck): (crashes/s, latencies in ms, pids)."""
    out = subprocess.run([stormer, str(n), str(in_flight)], check=True, stdout=subprocess.PIPE, text=True).stdout
    lat, pids, seconds = [], [], None
    for line in out.splitlines():
        f = line.split()
        if f[0] == "storm":
            seconds = float(f[4])
        else:
            pids.append(int(f[0]))
            lat.append(int(f[1]) / 1000)
    return n / seconds, lat, pids


def p99(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(0.99 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--storm", type=int, default=200)
    ap.add_argument("--no-systemd", action="store_true", help="leave systemd-coredump out even if found")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--json", help="write the results (medians) to this file")
    ap.add_argument("--plot", help="draw the results into this picture (.svg or .png)")
    a = ap.parse_args()
    if a.plot:  # before the run, not after it: matplotlib must be there
        import plot  # noqa: F401
    cdtest.require_kernel()
    cdtest.save_sysctl(cdtest.CORE_PATTERN)
    cdtest.save_sysctl(cdtest.CORE_PIPE_LIMIT)
    crasher = os.path.join(a.build, "test", "crasher")
    rundir, base = scratch_dirs()
    cd, drain, spool = Coredumpd(a.build, rundir, base), Drain(a.build, rundir), Drain(a.build, rundir, memfd=True)
    sd_bin = None if a.no_systemd else systemd_coredump_binary(a.build)
    sd = SystemdCoredump(sd_bin, base) if sd_bin else None
    # spool-only last: the memory it frees would be warm for whichever came next (on a hypervisor
    # that takes back free guest memory, a first touch is what the spool pays for)
    collectors = [("drain-only", drain), ("coredumpd", cd)] + ([("systemd-coredump", sd)] if sd else []) + \
        [("spool-only", spool)]
    references = (drain, spool)

    def use(coll):
        cdtest.write_file(cdtest.CORE_PIPE_LIMIT, "16" if coll is sd else "0")
        cdtest.write_file(cdtest.CORE_PATTERN, coll.pattern())

    def cpu_now(coll):
        if isinstance(coll, Coredumpd) or (isinstance(coll, Drain) and coll.store):
            return cpu_seconds(coll.proc.pid) * 1000
        return sd.cpu_ms() if coll is sd else 0.0

    names = [n for n, _ in collectors]
    lat = {w: {n: [] for n in names} for w, _ in WORKLOADS}
    cpu = {w: {n: [] for n in names} for w, _ in WORKLOADS}
    complete = {w: {n: [] for n in names} for w, _ in WORKLOADS}
    stored = {w: {n: [] for n in names} for w, _ in WORKLOADS}
    for rnd in range(a.rounds + 1):  # round 0 warms up
        for w, args in WORKLOADS:
            for name, coll in collectors:
                use(coll)
                spares = cd.workers() if coll is cd else set()
                c0 = cpu_now(coll)
                ms, pid, t0 = crash_once(crasher, args)
                if coll is cd:
                    cd.wait_done([pid], poll=0.002)
                elif coll is sd:
                    sd.wait_done()
                done_ms = (time.monotonic() - t0) * 1000 if coll not in references else ms
                if coll is cd:
                    cd.settle(spares, jobs=1)
                if rnd == 0:
                    continue
                lat[w][name].append(ms)
                complete[w][name].append(done_ms)
                cpu[w][name].append(cpu_now(coll) - c0)
                stored[w][name].append(store_bytes(cd.store) if coll is cd else sd.stored_bytes() if coll is sd else 0)
            clear_store(cd.store)
            if sd:
                sd.clear()

    # the storms: coredumpd as installed, at its default log level (a second instance, the
    # first one's debug log kept for its peak memory)
    manager_kib = vmhwm_kib(cd.proc.pid)
    cd.stop()
    cd_storm = Coredumpd(a.build, rundir, base, name="-storm", debug=False)
    collectors = [(n, cd_storm if c is cd else c) for n, c in collectors]
    storms = {}
    stormer = os.path.join(a.build, "bench", "stormer")
    # the floor of the design: a process per crash that only compresses (level 3) and syncs
    floor_dir = os.path.join(base, "floor-store")
    os.makedirs(floor_dir)
    floor = Drain(a.build, rundir, store=floor_dir)
    collectors = collectors[:1] + [("store floor", floor)] + collectors[1:]
    for name, coll in collectors:
        if coll is spool:
            continue
        use(coll)
        c0, m0 = cpu_now(coll), machine_busy_ms()
        spares = cd_storm.workers() if coll is cd_storm else set()
        rate, v, pids = storm(stormer, a.storm, 4)
        if coll is cd_storm:
            cd_storm.wait_done(pids)
            cd_storm.settle(spares, jobs=len(pids))
        elif coll is sd:
            sd.wait_done()
        elif coll is floor:
            floor.wait_stored(len(pids))
        storms[name] = (rate, v, (cpu_now(coll) - c0) / a.storm if coll is not drain else None,
                        (machine_busy_ms() - m0) / a.storm)
        clear_store(cd_storm.store)
        clear_store(floor_dir)
        if sd:
            sd.clear()

    # the same storm with the default rate limit (10 cores a minute per program): after the
    # first 10 every crash of the one looping program is refused before its dump
    cd_storm.reload("")
    use(cd_storm)
    spares = cd_storm.workers()
    c0, m0 = cpu_now(cd_storm), machine_busy_ms()
    rate, v, pids = storm(stormer, a.storm, 4)
    cd_storm.wait_done(pids, need=1)  # the refused are not logged at the default level...
    cd_storm.settle(spares, jobs=1)    # ...and the few stored are done once their workers are
    storms["coredumpd rate-limited"] = (rate, v, (cpu_now(cd_storm) - c0) / a.storm,
                                        (machine_busy_ms() - m0) / a.storm)
    clear_store(cd_storm.store)

    print(f"coredump-socket benchmark: Linux {os.uname().release}, {os.cpu_count()} CPUs, {a.rounds} rounds, "
          f"interleaved; coredumpd with its defaults (zstd, backtraces on)"
          + (f"; systemd-coredump {systemd_coredump_version(sd_bin)} ({sd_bin})" if sd else "; systemd-coredump not found"))
    print("held: crash to waitpid(), how long the task is held (ms, median); ratio: to drain-only; spool: drain-only"
          " writing the core but its zero pages into a fresh memfd before the release, the least a collector holding the core in memory"
          " pays (the pages' first touch); complete: crash to"
          " the journal entry (or record) logged, polled every 2 ms for coredumpd (ms, median); CPU: ms per crash (mean"
          " of clock ticks for coredumpd, cpuacct for systemd-coredump's service and journald); stored: bytes on disk")
    shown = [n for n in names if n not in ("drain-only", "spool-only")]
    head = f"{'workload':<17} {'drain':>6} {'spool':>6}"
    for n in shown:
        head += f" | {n:>16} {'ratio':>6} {'complete':>8} {'CPU':>7} {'stored':>8}"
    print(head)
    for w, _ in WORKLOADS:
        ref = statistics.median(lat[w]["drain-only"])
        line = f"{w:<17} {ref:6.1f} {statistics.median(lat[w]['spool-only']):6.1f}"
        for n in shown:
            ours = statistics.median(lat[w][n])
            line += (f" | {ours:16.1f} {ours / ref:5.2f}x {statistics.median(complete[w][n]):8.1f} "
                     f"{statistics.mean(cpu[w][n]):7.1f} "
                     f"{statistics.median(stored[w][n]) / 1e6:7.2f}M")
        print(line)
    print(f"storm of {a.storm} tiny crashes, 4 in flight (coredumpd at its default log level):")
    for name, (rate, v, c, machine) in storms.items():
        print(f"  {name:<22} {rate:8.0f} crashes/s  p99 {p99(v):6.1f} ms  median {statistics.median(v):6.1f} ms"
              + (f"  CPU {c:.1f} ms/crash" if c is not None else f"  {'':16}") + f"  machine {machine:.1f} ms/crash")
    manager_kib = max(manager_kib, vmhwm_kib(cd_storm.proc.pid))
    print(f"peak memory: coredumpd manager {manager_kib / 1024:.1f} MiB, one worker "
          f"{cd.worker_peak_kib() / 1024:.1f} MiB (largest seen, its spool not counted); spool peak "
          f"{cd.spool_peak() / 2**20:.1f} MiB (SpoolMax= {spool_max(cd) / 2**20:.0f} MiB)")
    results = {
        "title": f"bench/run.py: Linux {os.uname().release}, {os.cpu_count()} CPUs, {a.rounds} rounds interleaved"
                 + (f"; systemd-coredump {systemd_coredump_version(sd_bin)} (pipe helper)" if sd else ""),
        "collectors": names, "storm_size": a.storm,
        "workloads": {w: {n: {"held": statistics.median(lat[w][n]), "complete": statistics.median(complete[w][n]),
                              "cpu_ms": statistics.mean(cpu[w][n]), "stored": statistics.median(stored[w][n])}
                          for n in names} for w, _ in WORKLOADS},
        "storms": {name: {"rate": rate, "p99_ms": p99(v), "median_ms": statistics.median(v)}
                   for name, (rate, v, _, _) in storms.items()},
    }
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.plot:
        import plot
        plot.draw(results, a.plot)
        print(f"picture: {a.plot}")


if __name__ == "__main__":
    main()
