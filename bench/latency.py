#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Crash-to-waitpid latency: how long the kernel holds a crashed task, for coredumpd and for
the drain-only reference server, interleaved round by round in the same run.

    sudo python3 bench/latency.py [--mib 200] [--runs 5] [--build build]

Restores kernel.core_pattern on every exit path. Prints medians and the ratio; never fails
on a number."""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
import cdtest  # noqa: E402  (restores core_pattern on every exit path)
from run import crash_once, scratch_dirs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compress", default="yes", help="Compress= for coredumpd (yes, zstd, lz4, no)")
    ap.add_argument("--level", default=None, help="CompressLevel= for coredumpd")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    a = ap.parse_args()
    cdtest.require_kernel()
    cdtest.save_sysctl(cdtest.CORE_PATTERN)
    crasher = os.path.join(a.build, "test", "crasher")

    rundir, base = scratch_dirs()
    conf = os.path.join(base, "coredump.conf")
    with open(conf, "w") as f:
        f.write(f"[Coredump]\nDirectory={base}/store\nCompress={a.compress}\n")
        if a.level:
            f.write(f"CompressLevel={a.level}\n")

    drain_sock = os.path.join(rundir, "drain.sock")
    drain = subprocess.Popen([os.path.join(a.build, "bench", "drainsrv"), drain_sock], stdout=subprocess.PIPE)
    cdtest._restore.append((lambda: (drain.kill(), drain.wait()), "drainsrv"))
    assert drain.stdout.readline().strip() == b"ready"

    cd_sock = os.path.join(rundir, "kernel.sock")
    log = open(os.path.join(base, "coredumpd.log"), "w")
    cd = subprocess.Popen([os.path.join(a.build, "src", "coredumpd"), f"--socket={cd_sock}", f"--config={conf}",
                           "--config-dir=/nonexistent", "--no-register"], stdout=log, stderr=log)
    cdtest._restore.append((lambda: (cd.send_signal(signal.SIGTERM), cd.wait()), "coredumpd"))
    time.sleep(0.5)

    results = {"drain-only": [], "coredumpd": []}
    socks = {"drain-only": drain_sock, "coredumpd": cd_sock}
    for rnd in range(a.runs + 1):  # round 0 warms up
        for name in results:
            cdtest.write_file(cdtest.CORE_PATTERN, "@@" + socks[name])
            ms, *_ = crash_once(crasher, ["mem", str(a.mib)])
            if rnd > 0:
                results[name].append(ms)
        for f in os.listdir(os.path.join(base, "store")):
            os.unlink(os.path.join(base, "store", f))

    ref = statistics.median(results["drain-only"])
    print(f"crash-to-waitpid latency, {a.mib} MiB core, {a.runs} runs each, interleaved (ms); "
          f"coredumpd Compress={a.compress}" + (f" CompressLevel={a.level}" if a.level else ""))
    print(f"{'collector':<12} {'median':>8} {'min':>8} {'max':>8} {'ratio':>6}")
    for name, v in results.items():
        med = statistics.median(v)
        print(f"{name:<12} {med:8.1f} {min(v):8.1f} {max(v):8.1f} {med / ref:6.2f}x")


if __name__ == "__main__":
    main()
