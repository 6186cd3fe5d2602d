#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The benchmark: coredump-socket with its default configuration (backtraces on) against the
drain-only reference server (the least a collector can do: handshake, read, discard), the
workloads of docs/performance.md, interleaved round by round in one run.

    sudo python3 bench/run.py [--rounds 5] [--storm 200] [--build build]

Prints, per workload: median crash-to-waitpid latency of each collector and the ratio to the
reference, coredumpd's CPU per crash (manager + workers), stored bytes, and the peak memory of
the manager and of one worker; then a storm of tiny crashes, 4 in flight: crashes/s and p99.
Restores kernel.core_pattern on every exit path (and everything it created). It is not a
test: it never fails on a number."""
import argparse
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


def crash_once(crasher, args):
    """One crash: (milliseconds from the crash to waitpid() returning, its PID)."""
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
    return (t1 - t0) * 1000, p.pid


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
    def __init__(self, build, rundir, base):
        self.store = os.path.join(base, "store")
        self.conf = os.path.join(base, "coredump.conf")
        with open(self.conf, "w") as f:
            f.write(f"[Coredump]\nDirectory={self.store}\n")  # everything else: the defaults
        self.sock = os.path.join(rundir, "kernel.sock")
        self.logpath = os.path.join(base, "coredumpd.log")
        log = open(self.logpath, "w")
        env = dict(os.environ, COREDUMP_SOCKET_LOG_LEVEL="debug")  # the workers' peak memory
        self.proc = subprocess.Popen([os.path.join(build, "src", "coredumpd"), f"--socket={self.sock}",
                                      f"--config={self.conf}", "--config-dir=/nonexistent", "--no-register",
                                      f"--control={os.path.join(rundir, 'control.sock')}"],
                                     stdout=log, stderr=log, env=env)
        cdtest._restore.append((self.stop, "coredumpd"))
        deadline = time.monotonic() + 10
        while "Ready:" not in open(self.logpath).read():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("coredumpd did not start:\n" + open(self.logpath).read())
            time.sleep(0.05)

    def pattern(self):
        return "@@" + self.sock

    def wait_done(self, pids, timeout=120):
        """Until the last step (journal entry, or the record without one) of each crash is
        logged: the work for them is done."""
        left, deadline = set(pids), time.monotonic() + timeout
        done = re.compile(r"Crash of PID (\d+)\b.*(?:journal entry written|record kept|record is kept)")
        while left and time.monotonic() < deadline:
            left -= {int(p) for p in done.findall(open(self.logpath).read())}
            time.sleep(0.02)
        if left:
            print(f"warning: {len(left)} crashes not finished after {timeout} s", file=sys.stderr)

    def worker_peak_kib(self):
        v = [int(x) for x in re.findall(r"worker peak memory (\d+) KiB", open(self.logpath).read())]
        return max(v) if v else 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)


class Drain:
    def __init__(self, build, rundir):
        self.sock = os.path.join(rundir, "drain.sock")
        self.proc = subprocess.Popen([os.path.join(build, "bench", "drainsrv"), self.sock], stdout=subprocess.PIPE)
        cdtest._restore.append((lambda: (self.proc.kill(), self.proc.wait()), "drainsrv"))
        if self.proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("drainsrv did not start")

    def pattern(self):
        return "@@" + self.sock


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
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    a = ap.parse_args()
    cdtest.require_kernel()
    cdtest.save_sysctl(cdtest.CORE_PATTERN)
    crasher = os.path.join(a.build, "test", "crasher")
    rundir = tempfile.mkdtemp(prefix="coredump-socket-bench.", dir="/run")
    base = tempfile.mkdtemp(prefix="coredump-socket-bench.", dir="/var/tmp")
    cdtest._restore.append((lambda: shutil.rmtree(rundir, ignore_errors=True), rundir))
    cdtest._restore.append((lambda: shutil.rmtree(base, ignore_errors=True), base))
    cd, drain = Coredumpd(a.build, rundir, base), Drain(a.build, rundir)

    lat = {w: {"drain-only": [], "coredumpd": []} for w, _ in WORKLOADS}
    cpu = {w: [] for w, _ in WORKLOADS}
    stored = {w: [] for w, _ in WORKLOADS}
    for rnd in range(a.rounds + 1):  # round 0 warms up
        for w, args in WORKLOADS:
            for name, coll in (("drain-only", drain), ("coredumpd", cd)):
                cdtest.write_file(cdtest.CORE_PATTERN, coll.pattern())
                c0 = cpu_seconds(cd.proc.pid)
                ms, pid = crash_once(crasher, args)
                if coll is cd:
                    cd.wait_done([pid])
                if rnd == 0:
                    continue
                lat[w][name].append(ms)
                if coll is cd:
                    cpu[w].append((cpu_seconds(cd.proc.pid) - c0) * 1000)
                    stored[w].append(store_bytes(cd.store))
            clear_store(cd.store)

    storms = {}
    for name, coll in (("drain-only", drain), ("coredumpd", cd)):
        cdtest.write_file(cdtest.CORE_PATTERN, coll.pattern())
        c0 = cpu_seconds(cd.proc.pid)
        rate, v, pids = storm(os.path.join(a.build, "bench", "stormer"), a.storm, 4)
        if coll is cd:
            cd.wait_done(pids)
        storms[name] = (rate, v, (cpu_seconds(cd.proc.pid) - c0) * 1000 / a.storm if coll is cd else None)
        clear_store(cd.store)

    print(f"coredump-socket benchmark: Linux {os.uname().release}, {os.cpu_count()} CPUs, {a.rounds} rounds, "
          f"interleaved; coredumpd with its defaults (zstd, backtraces on)")
    print(f"{'workload':<18} {'drain ms':>9} {'coredumpd ms':>13} {'ratio':>6} {'CPU ms':>8} {'stored':>10}")
    for w, _ in WORKLOADS:
        ref = statistics.median(lat[w]["drain-only"])
        ours = statistics.median(lat[w]["coredumpd"])
        # CPU comes in clock ticks (10 ms): the mean over the rounds, not the median of 0s and 10s
        print(f"{w:<18} {ref:9.1f} {ours:13.1f} {ours / ref:5.2f}x {statistics.mean(cpu[w]):8.1f} "
              f"{statistics.median(stored[w]) / 1e6:9.2f}M")
    print("(CPU per crash from clock ticks; for tiny crashes see the storm's figure, over all of them)")
    print(f"storm of {a.storm} tiny crashes, 4 in flight:")
    for name, (rate, v, c) in storms.items():
        print(f"  {name:<12} {rate:8.0f} crashes/s  p99 {p99(v):6.1f} ms  median {statistics.median(v):6.1f} ms"
              + (f"  CPU {c:.1f} ms/crash" if c is not None else ""))
    print(f"peak memory: coredumpd manager {vmhwm_kib(cd.proc.pid) / 1024:.1f} MiB, one worker "
          f"{cd.worker_peak_kib() / 1024:.1f} MiB (largest seen)")


if __name__ == "__main__":
    main()
