#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where a tiny crash's CPU goes: coredumpd as bench/run.py runs it (its defaults, the rate limit
off), a storm of tiny crashes from bench/stormer under `perf record -a` with DWARF call graphs,
then the CPU each kind of process took per crash (perf's cpu-clock periods) and the functions
that took the most of the manager's and of the workers' (perf report, children included).

    sudo python3 bench/profile.py [--crashes 200] [--build build]

Needs perf (Debian: linux-perf) and `meson compile -C build bench`. Restores
kernel.core_pattern and kernel.core_pipe_limit on every exit path and removes what it made. It
is not a test: it never fails on a number."""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bench/run.py: the daemon as the benchmark runs it)
from run import cdtest  # noqa: E402

COMMS = ("coredumpd", "coredump-proc", "coredump-worker", "coredump-zygote", "stormer")
TOP_FUNCTIONS = 25   # lines of each process's report
PERCENT_MIN = 2.0    # functions below this share of the process's samples are left out
# entry frames every sample passes through: they say nothing
GENERIC = {"_start", "main", "__libc_start_call_main", "__libc_start_main_impl", "__libc_start_main@@GLIBC_2.34",
           "sd_event_loop", "sd_event_run", "sd_event_dispatch"}
PERF_HZ = "1000"
PERF_STACK = "dwarf,16384"
# after the storm's last crash is stored, until its worker has exited: a plain wait (run.py's
# settle() reads /proc every few milliseconds meanwhile, which perf would record beside the
# crashes)
LAST_EXIT_WAIT_S = 1.0


def perf(args, **kw):
    return subprocess.run(["perf", *args], capture_output=True, text=True, **kw)


def cpu_by_comm(data):
    """Milliseconds of CPU per process name (cpu-clock periods are nanoseconds)."""
    out = perf(["report", "-i", data, "--no-children", "--sort", "comm", "-g", "none", "--show-total-period",
                "--stdio"]).stdout
    got = {}
    for line in out.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\S.*?)\s*$", line)
        if m:
            got[m.group(2)] = int(m.group(1)) / 1e6
    return got


def top_functions(data, comm):
    """The user-space functions taking the most of comm's samples (children included)."""
    out = perf(["report", "-i", data, "--children", "--comm", comm, "--percentage", "relative", "--sort", "sym",
                "-g", "none", "--stdio", "--percent-limit", str(PERCENT_MIN)]).stdout
    lines, seen = [], set()
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+[\d.]+%\s+\[\.\]\s+(\S+)", line)
        if m and m.group(2) not in seen | GENERIC and not m.group(2).startswith("0x"):
            seen.add(m.group(2))
            lines.append(f"  {float(m.group(1)):5.1f}%  {m.group(2)}")
    return lines[:TOP_FUNCTIONS]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crashes", type=int, default=200)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    a = ap.parse_args()
    if subprocess.run(["perf", "--version"], capture_output=True).returncode != 0:
        sys.exit("bench/profile.py: perf is missing (apt-get install linux-perf)")
    cdtest.require_kernel()
    cdtest.save_sysctl(cdtest.CORE_PATTERN)
    cdtest.save_sysctl(cdtest.CORE_PIPE_LIMIT)
    rundir, base = run.scratch_dirs()
    cd = run.Coredumpd(a.build, rundir, base, debug=False)
    cdtest.write_file(cdtest.CORE_PIPE_LIMIT, "0")
    cdtest.write_file(cdtest.CORE_PATTERN, cd.pattern())
    data = os.path.join(base, "perf.data")
    rec = subprocess.Popen(["perf", "record", "-a", "-F", PERF_HZ, "--call-graph", PERF_STACK, "-o", data],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cdtest._restore.append((lambda: rec.poll() is None and (rec.kill(), rec.wait()), "perf record"))
    time.sleep(1)  # perf is recording
    rate, _, pids = run.storm(os.path.join(a.build, "bench", "stormer"), a.crashes, 4)
    cd.wait_done(pids)
    time.sleep(LAST_EXIT_WAIT_S)
    rec.send_signal(signal.SIGINT)
    rec.wait(120)
    cpu = cpu_by_comm(data)
    print(f"coredump-socket profile: Linux {os.uname().release}, {os.cpu_count()} CPUs, {a.crashes} tiny crashes, "
          f"4 in flight ({rate:.0f} crashes/s under perf); coredumpd with its defaults, the rate limit off")
    print("CPU per crash (perf cpu-clock, ms):")
    for comm in COMMS:
        print(f"  {comm:<16} {cpu.get(comm, 0.0) / a.crashes:6.2f}")
    for comm in ("coredumpd", "coredump-worker"):
        print(f"{comm}: where its samples are (functions and what they call):")
        print("\n".join(top_functions(data, comm)) or "  (no samples)")


if __name__ == "__main__":
    main()
