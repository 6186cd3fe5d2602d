#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What starting every worker from its binary costs against forking it from the zygote
(WorkerZygote=no, the default, against WorkerZygote=yes), rounds of each interleaved in the same
run: the CPU coredumpd and its children spend per crash, and how long the kernel holds the
crashed task (fork of the crasher to its waitpid), for small crashes one after the other.

    sudo python3 bench/worker-start.py [--crashes 100] [--rounds 3] [--build build]

CPU per crash: utime, stime, cutime and cstime of coredumpd (its workers, collectors and zygote
are its reaped children) over the measured crashes, divided by their number. Restores
kernel.core_pattern on every exit path. Prints medians; never fails on a number."""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
cdtest = None  # imported once --build is known: it takes its build directory at import

WARMUP_CRASHES = 5    # before measuring: the spares started, the page cache warm
SETTLE_S = 2          # after the last core is stored, for the last workers to be reaped
SPARES_WAITED = 2     # the spares each crash finds ready (SpareWorkers= default)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def one_round(zygote, crashes):
    env = cdtest.Env({"WorkerZygote": zygote, "RateLimitBurst": "100000"})
    d = env.start()
    try:
        exe = cdtest.copy_crasher(env, "crasher")
        for _ in range(WARMUP_CRASHES):
            cdtest.crash("segv", exe=exe)
        env.wait_cores(WARMUP_CRASHES, timeout=60)
        time.sleep(SETTLE_S)
        before, held = cpu_seconds(d.proc.pid), []
        for _ in range(crashes):
            d.wait_idle_workers(SPARES_WAITED)
            t = time.monotonic()
            cdtest.crash("segv", exe=exe)
            held.append((time.monotonic() - t) * 1000)
        env.wait_cores(WARMUP_CRASHES + crashes, timeout=120)
        time.sleep(SETTLE_S)
        return 1000 * (cpu_seconds(d.proc.pid) - before) / crashes, statistics.median(held)
    finally:
        d.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crashes", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    a = ap.parse_args()
    os.environ["CDS_BUILD_DIR"] = os.path.abspath(a.build)
    global cdtest
    import cdtest  # noqa: E402  (restores core_pattern on every exit path)
    cdtest.require_kernel()
    results = {"no": [], "yes": []}
    for r in range(a.rounds):
        for zygote in ("no", "yes"):
            cpu, held = one_round(zygote, a.crashes)
            results[zygote].append((cpu, held))
            print(f"round {r + 1} WorkerZygote={zygote}: {cpu:.2f} ms CPU/crash, task held {held:.2f} ms (median)")
    print(f"{a.crashes} crashes x {a.rounds} rounds, medians:")
    for zygote, rows in results.items():
        print(f"  WorkerZygote={zygote:3}: {statistics.median(c for c, _ in rows):.2f} ms CPU/crash, "
              f"task held {statistics.median(h for _, h in rows):.2f} ms")


if __name__ == "__main__":
    main()
