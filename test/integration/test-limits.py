#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Limits: rate limiting before the dump (per executable, per service), MaxParallel=,
ProcessSizeMax= decided before the ack, MaxUse=/MaxAgeSec= vacuum. Every crash must be
accounted for: a stored core, or a count in a suppression summary."""
import concurrent.futures
import math
import os
import signal
import subprocess
import time

import cdtest
from cdtest import (CRASHER, Env, check, crash, crasher_copies, fill, read_exports, record_of, run_cases, skip,
                    scaled, slow_crash_in_flight, test_user, wait_until)

SUPPRESSED_ID = b"44a599742dfc4659a9825d09da683686"


def timed_crash(exe):
    t0 = time.monotonic()
    p = subprocess.Popen([exe, "segv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rc = p.wait(300)
    return exe, p.pid, rc, time.monotonic() - t0


def storm(order, lanes):
    """Runs every executable of order once, lanes at a time; [(exe, pid, rc, seconds)]."""
    with concurrent.futures.ThreadPoolExecutor(lanes) as pool:
        return list(pool.map(timed_crash, order))


def cpu_seconds(pid):
    """The daemon's CPU time with its reaped workers' (utime, stime, cutime, cstime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def cores_of(env, comm):
    return [c for c in env.cores() if os.path.basename(c).startswith(f"core.{comm}.")]


def summaries(env):
    s = read_exports(env, "suppressed")
    check(all(e.get("MESSAGE_ID") == SUPPRESSED_ID for e in s), f"summary without its MESSAGE_ID: {s}")
    return s


def suppressed_count(sums, exe=None, reason=b"rate-limit"):
    return sum(int(e["COREDUMP_SUPPRESSED"]) for e in sums if e["COREDUMP_SUPPRESSED_REASON"] == reason and
               (exe is None or e.get("COREDUMP_EXE") == exe.encode()))


def wait_quiet(env, d, n_records, timeout=120):
    """Until n_records crash records are written (every taken or fully recorded crash has one)."""
    wait_until(lambda: len(read_exports(env, "record")) >= n_records, scaled(timeout),
               lambda: f"{n_records} records, have {len(read_exports(env, 'record'))}:\n" + d.log_text()[-4000:])


def rate_limit_reason(burst, interval, exe):
    """COREDUMP_PROCESSING_ERROR of the first crash of exe refused in a window (src/manager/policy.c)."""
    return (f"rate limit: more than RateLimitBurst={burst} cores of executable {exe} in RateLimitIntervalSec={interval}s; "
            "core not dumped, further crashes in this window are counted in a summary").encode()


def case_storm():
    """1000 crashes: one program crash-looping (975) beside five others (5 each). The others'
    crashes are all stored; the looping one keeps RateLimitBurst= cores per window, the first
    refused crash of each window gets a full record, the rest are counted in summaries, and the
    counts add up to every crash. No crashing task waits longer than the per-crash deadline."""
    burst, interval, timeout = 5, 30, 10
    env = Env({"RateLimitBurst": str(burst), "RateLimitIntervalSec": f"{interval}s", "TimeoutSec": str(timeout)})
    others = [f"other-{i}" for i in range(5)]
    exes = crasher_copies(env, ["looper", *others])
    order = [exes["looper"]] * 975
    for i, name in enumerate(others * 5):  # spread through the storm
        order.insert(37 * (i + 1), exes[name])
    d = env.start()
    cpu0, t0 = cpu_seconds(d.proc.pid), time.monotonic()
    results = storm(order, 8)
    elapsed = time.monotonic() - t0
    check(all(rc == -signal.SIGSEGV for _, _, rc, _ in results), "a crasher did not die of SIGSEGV")
    others_pids = {pid for exe, pid, _, _ in results if exe != exes["looper"]}
    wait_quiet(env, d, len(others_pids))
    cpu = cpu_seconds(d.proc.pid) - cpu0
    check(d.stop() == 0, "daemon did not stop cleanly")  # flushes the open windows' summaries

    stored = {int(os.path.basename(c).split(".")[4]) for c in env.cores()}
    check(others_pids <= stored, f"crashes of the other programs not stored: {sorted(others_pids - stored)}")
    looper = cores_of(env, "looper")
    windows = math.ceil(elapsed / interval) + 1
    check(burst <= len(looper) <= burst * windows, f"{len(looper)} cores of the looper in {elapsed:.1f} s")
    sums = summaries(env)
    counted = suppressed_count(sums, exes["looper"])
    check(len(looper) + counted == 975, f"looper: {len(looper)} stored + {counted} suppressed != 975")
    firsts = [r for r in read_exports(env, "record") if r.get("COREDUMP_COMM") == b"looper"
              and b"rate limit" in r.get("COREDUMP_PROCESSING_ERROR", b"")]
    reason = rate_limit_reason(burst, interval, exes["looper"])
    wrong = [r["COREDUMP_PROCESSING_ERROR"] for r in firsts if r["COREDUMP_PROCESSING_ERROR"] != reason]
    check(not wrong, f"refused crashes of the looper not explained as {reason!r}: {wrong}")
    looper_sums = [e for e in sums if e.get("COREDUMP_EXE") == exes["looper"].encode()]
    check(len(firsts) == len(looper_sums) >= 1, f"{len(firsts)} full records of refused crashes, "
          f"{len(looper_sums)} summaries: one of each per window")
    worst = max(s for _, _, _, s in results)
    check(worst < timeout, f"a crashing task was held {worst:.1f} s, past TimeoutSec={timeout}")
    size = sum(os.stat(c).st_blocks * 512 for c in looper)
    print(f"storm: {len(order)} crashes in {elapsed:.1f} s ({len(order) / elapsed:.0f}/s), "
          f"daemon CPU {cpu:.2f} s ({cpu * 1000 / len(order):.2f} ms/crash), longest hold {worst * 1000:.0f} ms; "
          f"looper: {len(looper)} cores ({size} bytes) + {counted} suppressed in {len(looper_sums)} summaries")


def case_burst50():
    """1000 crashes in a burst from 50 programs (20 each, 16 at a time), default limits: every
    program keeps its first crash, every crash is a stored core or counted in a summary, and the
    daemon stores the next crash."""
    env = Env({"TimeoutSec": "30"})
    names = [f"prog-{i:02d}" for i in range(50)]
    exes = crasher_copies(env, names)
    order = [exes[n] for _ in range(20) for n in names]
    d = env.start()
    results = storm(order, 16)
    check(all(rc == -signal.SIGSEGV for _, _, rc, _ in results), "a crasher did not die of SIGSEGV")
    first_pids = {}
    for exe, pid, _, _ in results:
        first_pids.setdefault(exe, pid)
    pid, _ = crash("segv")
    env.wait_cores(1)
    wait_quiet(env, d, 50)
    # finishes every crash in flight, each with its record, and writes the summaries
    check(d.stop() == 0, "daemon did not stop cleanly")
    cores = env.cores()
    check(any(f".{pid}." in c for c in cores), "the crash after the burst was not stored")
    sums = summaries(env)
    counted = suppressed_count(sums) + suppressed_count(sums, reason=b"max-parallel")
    burst_cores = len(cores) - 1
    check(burst_cores + counted == 1000, f"{burst_cores} stored + {counted} suppressed != 1000")
    missing = [n for n in names if not cores_of(env, n)]
    check(not missing, f"programs without a stored core: {missing}")
    print(f"burst: {burst_cores} stored, {suppressed_count(sums)} rate-limited, "
          f"{suppressed_count(sums, reason=b'max-parallel')} over MaxParallel=, {len(sums)} summaries; "
          f"longest hold {max(s for _, _, _, s in results) * 1000:.0f} ms")


def case_max_parallel():
    """MaxParallel=1 with a core streaming: the next crashes are refused before their dump; the
    first gets a record saying why, all are counted in the summary."""
    env = Env({"MaxParallel": "1", "CompressLevel": "19", "SpoolMax": "0"})
    d = env.start()
    p = slow_crash_in_flight(64, 0.5)
    refused = [crash("segv")[0] for _ in range(3)]
    check(p.wait(120) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    wait_quiet(env, d, 2)
    check(d.stop() == 0, "daemon did not stop cleanly")
    check([c for c in env.cores() if f".{p.pid}." in c], "the core in flight was not stored")
    check(not any(f".{r}." in c for c in env.cores() for r in refused), f"a refused core was stored: {env.cores()} {refused}\n{d.log_text()}")
    rec = [r for r in read_exports(env, "record") if r["COREDUMP_PID"] == str(refused[0]).encode()]
    check(rec and b"MaxParallel=1 cores were already in flight" in rec[0].get("COREDUMP_PROCESSING_ERROR", b""),
          f"record of the first refused crash: {rec}")
    sums = [e for e in summaries(env) if e["COREDUMP_SUPPRESSED_REASON"] == b"max-parallel"]
    check(len(sums) == 1 and sums[0]["COREDUMP_SUPPRESSED"] == b"3", f"summary: {sums}")
    check(sums[0]["COREDUMP_SUPPRESSED_PIDS"].split() == [str(r).encode() for r in refused], f"PIDs: {sums}")


def case_service():
    """Crashes of different programs in one service share its limit."""
    env = Env({"RateLimitBurst": "2"})
    exes = crasher_copies(env, ["svc-a", "svc-b", "svc-c"])
    with open("/proc/self/mounts") as f:
        roots = [line.split()[1] for line in f if line.split()[2] == "cgroup2"]
    if not roots:
        from cdtest import skip
        skip("no cgroup2 hierarchy to make a service's cgroup in")
    cg = os.path.join(roots[0], "system.slice", "cds-limit-test.service")
    made_slice = not os.path.isdir(os.path.dirname(cg))
    os.makedirs(cg)
    try:
        d = env.start()
        pids = []
        for name in ("svc-a", "svc-b", "svc-c", "svc-a"):
            p = subprocess.Popen(["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec {exes[name]} segv'])
            check(p.wait(60) == -signal.SIGSEGV, f"{name} ended with {p.returncode}")
            pids.append(p.pid)
        wait_quiet(env, d, 3)
        check(d.stop() == 0, "daemon did not stop cleanly")
    finally:
        os.rmdir(cg)
        if made_slice:
            os.rmdir(os.path.dirname(cg))
    check(len(env.cores()) == 2, f"two cores for the service's burst of 2: {env.cores()}")
    sums = summaries(env)
    check(len(sums) == 1 and sums[0].get("COREDUMP_SUPPRESSED_SERVICE") == b"cds-limit-test.service" and
          sums[0]["COREDUMP_SUPPRESSED"] == b"2", f"service summary: {sums}")


def case_pipe():
    """Pipe mode: the same limits; a refused core is dropped (the pipe closed), still counted."""
    env = Env({"Mode": "pipe", "RateLimitBurst": "2", "RateLimitIntervalSec": "60s"})
    d = env.start()
    pids = [crash("segv")[0] for _ in range(5)]
    wait_quiet(env, d, 3)
    check(d.stop() == 0, "daemon did not stop cleanly")
    check(len(env.cores()) == 2, f"two cores for a burst of 2: {env.cores()}")
    rec = [r for r in read_exports(env, "record") if r["COREDUMP_PID"] == str(pids[2]).encode()]
    reason = rate_limit_reason(2, 60, CRASHER)
    check(rec and rec[0].get("COREDUMP_PROCESSING_ERROR") == reason, f"record of the first refused, expected {reason!r}: {rec}")
    check(suppressed_count(summaries(env), CRASHER) == 3, f"summary: {summaries(env)}")


def case_process_size_max():
    """Storage=none keeps no core, so a process with more anonymous memory than ProcessSizeMax=
    is refused before its dump (socket mode: REJECT; pipe mode: the pipe closed unread); the
    record says why. A small one is still traced."""
    for mode in cdtest.modes():
        env = Env({"Storage": "none", "ProcessSizeMax": "16M", "Mode": mode})
        d = env.start()
        big, _ = crash("mem", 64)
        small, _ = crash("segv")
        wait_quiet(env, d, 2)
        recs = {r["COREDUMP_PID"]: r for r in read_exports(env, "record")}
        why = recs[str(big).encode()].get("COREDUMP_PROCESSING_ERROR", b"")
        check(b"more than ProcessSizeMax=16777216" in why, f"{mode}: big process: {why!r}")
        check(recs[str(big).encode()]["MESSAGE"].startswith(f"Process {big} (crasher) of user 0 crashed, no core: ".encode()),
              f"{mode}: MESSAGE {recs[str(big).encode()]['MESSAGE']!r}")
        check(f"Crash of PID {big} (crasher, uid 0): no core" in d.log_text(), f"{mode}: the big core was taken")
        s = recs[str(small).encode()]
        check("COREDUMP_PROCESSING_ERROR" not in s and b"Stack trace of thread" in s["MESSAGE"], f"{mode}: small: {s}")
        d.stop()


def case_hostile_name():
    """A program named with a newline cannot forge log lines or summary fields through the
    limits (its name goes into both)."""
    env = Env({"RateLimitBurst": "1"})
    exe = crasher_copies(env, ["evil\nForged: line"])["evil\nForged: line"]
    d = env.start()
    for _ in range(3):
        p = subprocess.Popen([exe, "segv"])
        check(p.wait(60) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    wait_quiet(env, d, 2)
    check(d.stop() == 0, "daemon did not stop cleanly")
    check(not any(line.startswith("Forged") for line in d.log_text().splitlines()), "a forged log line")
    sums = summaries(env)
    check(len(sums) == 1 and b"\n" not in sums[0]["COREDUMP_EXE"] and b"evil?Forged: line" in sums[0]["COREDUMP_EXE"],
          f"summary: {sums}")
    check(b"\n" not in sums[0]["MESSAGE"], f"MESSAGE: {sums[0]['MESSAGE']!r}")


def allocated(paths):
    return sum(os.stat(p).st_blocks * 512 for p in paths)


def case_vacuum_users():
    """With the store past MaxUse=, the oldest cores of the user with the most go first, an
    older core of another user stays, and the new core is kept."""
    user = test_user()
    env = Env({"KeepFree": "0"})
    d = env.start()
    root_old, _ = crash("segv")
    users = [crash("segv", user=user)[0] for _ in range(3)]
    cores = env.wait_cores(4)
    env.write_config({"KeepFree": "0", "MaxUse": str(allocated(cores) + allocated(cores[:1]) // 2)})
    d.proc.send_signal(signal.SIGHUP)
    # (the reload is done in one turn of the event loop: no crash is taken before it is applied)
    d.wait_log(r"Reloading configuration")
    root_new, _ = crash("segv")
    d.wait_log(rf"Vacuumed core\.crasher\.{user.pw_uid}\..*\.{users[0]}\.")
    names = " ".join(env.cores())
    check(f".{users[0]}." not in names, f"the heaviest user's oldest core stayed: {names}")
    for pid in (root_old, root_new, users[1], users[2]):
        check(f".{pid}." in names, f"core of {pid} was vacuumed: {names}")
    # the new core's record is written after the vacuum that follows its link
    wait_until(lambda: len(read_exports(env, "record")) == 5, 30,
               lambda: f"5 records (the vacuum must keep them), have {len(read_exports(env, 'record'))}")
    d.stop()


def case_keep_free():
    """The disk filled by something else, past KeepFree= by more than all the cores: the vacuum
    deletes none (deleting them would not restore KeepFree=; a user filling the disk must not
    empty the store) and says so once; the new crash gets no file, the log says why. Once the
    disk is short by less than the cores hold, the oldest core goes and the next one is stored."""
    env = Env({"KeepFree": "4M", "MaxUse": "1G"})
    env.mount_tmpfs(env.store, "16M")
    d = env.start()
    old, _ = crash("segv")
    env.wait_cores(1)
    filler = os.path.join(env.store, "filler")
    fill(filler)
    new, _ = crash("segv")
    print("observed:", d.wait_log(r"below KeepFree= by more than all its cores"))
    d.wait_log(rf"Crash of PID {new} \(crasher\): no room in the store")  # (a full disk has no room for its record)
    check(any(f".{old}." in c for c in env.cores()), "the old core was deleted for a disk it could not free")
    d.wait_log(rf"Crash of PID {new} \(crasher\): failed to keep its record")  # done with the full disk
    # short by less than the old core holds: now deleting it restores KeepFree=
    core = os.stat(env.cores()[0]).st_blocks * 512
    os.unlink(filler)
    st = os.statvfs(env.store)
    with open(filler, "wb") as f:
        f.write(b"\xff" * (st.f_bavail * st.f_frsize - (4 << 20) + core // 2))
    last, _ = crash("segv")
    print("observed:", d.wait_log(rf"Vacuumed core\.crasher\.0\..*\.{old}\."))
    d.stop()


def case_max_age():
    """MaxAgeSec=: cores older than that go at the next store, and so do their records (the
    history is bounded too); the new crash's core and record stay."""
    env = Env({"MaxAgeSec": "2s"})
    d = env.start()
    old, _ = crash("segv")
    env.wait_cores(1)
    time.sleep(3)
    new, _ = crash("segv")
    d.wait_log(rf"Vacuumed core\.crasher\.0\..*\.{old}\.")  # by the vacuum before the new core is written
    names = " ".join(c for c in env.wait_cores(1) if f".{new}." in c or f".{old}." in c)
    check(f".{new}." in names and f".{old}." not in names, f"cores: {names}")
    def recorded():
        return [r["COREDUMP_PID"] for r in read_exports(env, "record")]
    # the new crash's record comes after the vacuum
    wait_until(lambda: str(new).encode() in recorded(), 20, lambda: f"the record of PID {new}; records: {recorded()}")
    recs = recorded()
    check(recs == [str(new).encode()], f"records: {recs}")
    d.stop()


def case_max_age_periodic():
    """The periodic vacuum, with no new crash: a core older than MaxAgeSec= goes, and its record
    with it, by time alone (a test build asked for it runs it every second; it runs every 10
    minutes otherwise)."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("needs a build with -Dworker-test-faults=true (the sanitizer build of tools/run-tests.sh)")
    env = Env({"MaxAgeSec": "2s"})
    d = env.start(environ={"COREDUMPD_TEST_FAULT": "vacuum-soon"})
    pid, _ = crash("segv")
    record_of(env, pid, d)
    check([c for c in env.wait_cores(1) if f".{pid}." in c], f"PID {pid}'s core was not stored")
    line = d.wait_log(rf"Vacuumed core\.crasher\.0\..*\.{pid}\.", timeout=30)
    check(not [c for c in env.cores() if f".{pid}." in c], f"PID {pid}'s core is still there: {env.cores()}")
    wait_until(lambda: not read_exports(env, "record"), 10,
               lambda: f"PID {pid}'s record to go with its core: {read_exports(env, 'record')}")
    print(f"observed: with no new crash, {line.strip()}; its record gone too")
    check(d.stop() == 0, "daemon did not stop cleanly")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
