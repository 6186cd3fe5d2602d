#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Slots one unprivileged user must not be able to take from everyone else (issue 18, findings 3
and 10): the worker slots (a worker runs as the crashing user, who can SIGSTOP it) and the
control socket's connections. The test user attacks; root and another user are the victims."""
import glob
import os
import pwd
import re
import signal
import subprocess
import time

from cdtest import (USER_PYTHON, Env, _restore, as_uid, check, crasher_copies, read_exports, read_file, run_cases,
                    scaled, test_user, wait_until)

# the attacker's crashes: distinct programs, so no rate limit merges them
N_ATTACK = 20
# each core big and incompressible enough (and CompressLevel=19) that its worker is still at it
# when the attacker looks
ATTACK_MIB = 32
# between two of them: the stopper (one process of the user) looks every millisecond or so
CRASH_SPACING = 0.05
# WorkerStallTimeoutSec= of the test: long enough that the victims' crashes come while every
# stopped worker is still stopped (so the per-user cap alone must make room), short for the test
STALL = 15
# "promptly": a victim's crash is stored this soon, far below TimeoutSec= and the stall timeout
PROMPT = 5.0
# the daemon's control socket (src/manager/control.h): CONTROL_CONNECTIONS_PER_UID connections per
# user, CONTROL_CONNECTIONS_MAX of them in all, root's beside them; so many users fill them all
HELD_PER_UID = 2
HOLDERS = 16 // HELD_PER_UID
REPLY_PROMPT_S = 1.0  # a request answered at once (scaled() for sanitizer builds)
WORKER_COMM = "coredump-worker"
# MaxParallelPerUser= by default: a quarter of MaxParallel=16
DEFAULT_CAP = 4
# workers a MaxParallel= refusal window starts for records (its first refusal's)
CAP_RECORD_WORKERS = 1
# the stopper continues each stopped worker for a moment this often
STOPPER_BLIP_S = 0.5
# held_workers(): samples this far apart, over more than one blip period
HELD_SAMPLES = 7
HELD_SPACING = 0.1
assert (HELD_SAMPLES - 1) * HELD_SPACING > STOPPER_BLIP_S

# Run as the test user: SIGSTOPs every coredump-worker that runs as this user, as soon as it
# does (kill() is refused for the others), for argv[1] seconds. A process not (yet) called
# coredump-worker may be a worker not exec'd yet, or exec'd and not yet named (coredumpd execs
# it through /proc/self/fd/N): looked at again. Every STOPPER_BLIP_S it continues each one for a
# moment (SIGCONT, SIGSTOP), so that its CPU account moves without it doing anything. Prints
# "watching" once it has been through every process once.
STOPPER = r"""
import os, signal, sys, time
end = time.monotonic() + float(sys.argv[1])
known = {}
blip = time.monotonic()
first = True
while time.monotonic() < end:
    if time.monotonic() - blip >= %(blip)s:
        blip = time.monotonic()
        for pid in [p for p, comm in known.items() if comm == sys.argv[2]]:
            try:
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
    for e in os.scandir("/proc"):
        if e.name.isdigit() and known.get(int(e.name)) != sys.argv[2]:
            try:
                with open(f"/proc/{e.name}/comm") as f:
                    known[int(e.name)] = f.read().strip()
            except OSError:
                pass
    for pid in [p for p, comm in known.items() if comm == sys.argv[2]]:
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            del known[pid]
        except PermissionError:
            pass
    if first:
        print("watching", flush=True)
        first = False
    time.sleep(0.001)
"""

# Run as a user: holds as many connections to the control socket (argv[1]) as it can,
# reconnecting each one the daemon closes, for argv[2] seconds; prints "held N" each time it has
# held more than before, and at its end how many the daemon let it hold at most.
HOLDER = r"""
import select, socket, sys, time
path, end, most = sys.argv[1], time.monotonic() + float(sys.argv[2]), 0
socks = {}  # socket: when it connected
while time.monotonic() < end:
    while len(socks) < 64:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.setblocking(False)
        try:
            s.connect(path)
        except OSError:
            s.close()
            break
        socks[s] = time.monotonic()
    for s in select.select(list(socks), [], [], 0.005)[0]:
        try:
            gone = s.recv(1) == b""
        except OSError:
            gone = True
        if gone:
            del socks[s]
            s.close()
    # held: open for a second and more (the daemon closes those over a bound at once)
    now = sum(time.monotonic() - t >= 1 for t in socks.values())
    if now > most:
        most = now
        print(f"held {most}", flush=True)
print(most, flush=True)
"""

# One control request (what coredumpctl delete sends) as whoever runs it: prints the reply and
# the seconds it took, or the error.
CLIENT = r"""
import socket, struct, sys, time
t0 = time.monotonic()
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
# blocking, as coredumpctl's: connect() waits for room in the listen backlog
for opt in (socket.SO_SNDTIMEO, socket.SO_RCVTIMEO):
    s.setsockopt(socket.SOL_SOCKET, opt, struct.pack("ll", 10, 0))
try:
    s.connect(sys.argv[1])
    s.send(sys.argv[2].encode())
    reply = s.recv(512).decode() or "(closed without a reply)"
except OSError as e:
    reply = f"({e})"
print(f"{time.monotonic() - t0:.3f} {reply}", flush=True)
"""


def free_uids(n, first):
    """n uids from first on that no account has (a second user that only setpriv becomes, or a
    user's subordinate uids)."""
    out = []
    for uid in range(first, 60000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            out.append(uid)
            if len(out) == n:
                return out
    raise AssertionError("no free uids")


def popen(cmd, **kw):
    p = subprocess.Popen(cmd, stdout=kw.pop("stdout", subprocess.DEVNULL), stderr=subprocess.DEVNULL, **kw)
    _restore.append((lambda: p.poll() is None and p.kill(), f"process {p.pid}"))
    return p


def start_stopper(uid, gid, seconds):
    """STOPPER as uid, once it has looked at every process (the spare workers among them)."""
    p = popen(as_uid(uid, gid, [USER_PYTHON, "-c", STOPPER % {"blip": STOPPER_BLIP_S}, str(seconds), WORKER_COMM]),
              stdout=subprocess.PIPE, text=True)
    check(p.stdout.readline().strip() == "watching", f"the stopper of uid {uid} did not start")
    return p


def launch_attack(programs):
    """The attacking crashes, [(exe, uid, gid)]: every program fills its memory first (ATTACK_MIB
    of random bytes), then they crash one after the other, CRASH_SPACING apart: (their Popens,
    the time.monotonic() of the first crash)."""
    attack = [popen(as_uid(uid, gid, [exe, "mem", str(ATTACK_MIB), "random"]), env=dict(os.environ, CRASHER_SYNC="1"),
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
              for exe, uid, gid in programs]
    for p in attack:
        check(p.stdout.readline().strip() == b"ready", "a crasher did not get ready")
    first = time.monotonic()
    for p in attack:
        p.stdin.write(b"x")
        p.stdin.flush()
        time.sleep(CRASH_SPACING)
    return attack, first


def user_workers(uid):
    """The coredump-workers of uid: {pid: state letter}."""
    out = {}
    for d in glob.glob("/proc/[0-9]*"):
        try:
            if read_file(f"{d}/comm") != WORKER_COMM:
                continue
            status = read_file(f"{d}/status")
        except OSError:
            continue
        state = re.search(r"^State:\s+(\S)", status, re.M)
        if re.search(rf"^Uid:\s+{uid}\s", status, re.M) and state:
            out[int(os.path.basename(d))] = state.group(1)
    return out


def stopped_workers(uid):
    """The coredump-workers of uid that are stopped (state T) right now."""
    return [pid for pid, state in user_workers(uid).items() if state == "T"]


def held_workers(uid):
    """The coredump-workers of uid that the stopper holds: found stopped at one of HELD_SAMPLES
    samples over more than one of its blips, and still there after them. One sample is not
    enough: a worker the stopper has just continued for a moment shows as running until it has
    been on a CPU again to stop, which on a loaded machine may take a while."""
    seen = set()
    for i in range(HELD_SAMPLES):
        if i:
            time.sleep(HELD_SPACING)
        seen.update(stopped_workers(uid))
    return sorted(seen & set(user_workers(uid)))


def stored(env, pid):
    return [c for c in env.cores() if f".{pid}." in os.path.basename(c)]


def victim_crash(env, exe, uid=None, gid=None):
    """A crash that must be stored promptly; returns (pid, seconds until its core was there)."""
    t0 = time.monotonic()
    cmd = [exe, "segv"] if uid is None else as_uid(uid, gid, [exe, "segv"])
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.wait(60)
    check(p.returncode == -signal.SIGSEGV, f"{exe} ended with {p.returncode}")
    pid = p.pid
    wait_until(lambda: stored(env, pid), max(0.1, scaled(PROMPT) - (time.monotonic() - t0)),
               lambda: f"the core of PID {pid} ({os.path.basename(exe)}) within {scaled(PROMPT)}s; cores {env.cores()}\n"
               + env.daemons[-1].log_text()[-3000:])
    return pid, time.monotonic() - t0


def case_frozen_workers():
    """The test user makes 20 crashes of distinct programs and SIGSTOPs every worker running as
    them at once, continuing each for a moment twice a second (its CPU account moves). Root's crash and another user's crash are still stored within seconds (the
    per-user cap kept slots free); the stopped workers are killed by the watchdog after
    WorkerStallTimeoutSec=, and every attacking crash is accounted for: its record says why, or
    it is counted in the per-user summary."""
    user = test_user()
    other = free_uids(1, 2000)[0]
    env = Env({"WorkerStallTimeoutSec": f"{STALL}s", "TimeoutSec": "600", "CompressLevel": "19", "SpoolMax": "0"})
    names = [f"frozen-{i:02d}" for i in range(N_ATTACK)]
    exes = crasher_copies(env, names + ["victim-root", "victim-user"])
    d = env.start()
    start_stopper(user.pw_uid, user.pw_gid, STALL * 4)
    # (from the first crash: the first workers' stall clocks start with it)
    attack, t_attack = launch_attack([(exes[n], user.pw_uid, user.pw_gid) for n in names])

    # the attack is in effect: the per-user cap refused one of the user's crashes (the user's
    # slots are all taken), and as many of their workers are stopped as the cap lets them have
    def in_effect():
        n = len(held_workers(user.pw_uid))
        return n >= DEFAULT_CAP and f"uid {user.pw_uid}) refused: MaxParallelPerUser=" in d.log_text() and n
    n_stopped = wait_until(in_effect, 30, lambda: f"the test user's workers to be stopped:\n{d.log_text()[-3000:]}")
    root_pid, root_s = victim_crash(env, exes["victim-root"])
    other_pid, other_s = victim_crash(env, exes["victim-user"], other, other)
    held = held_workers(user.pw_uid)
    still = len(held)
    check(time.monotonic() - t_attack < STALL, "the victims came after the watchdog's time: the test proves nothing")
    # the user's DEFAULT_CAP streaming workers stay stopped; a worker that only writes a refused
    # crash's record may finish in a moment the stopper continues it, so n_stopped may drop by those
    check(still >= DEFAULT_CAP, f"{n_stopped} workers were stopped, {still} still are ({held}; the user's workers "
          f"now: {user_workers(user.pw_uid)}): the attack was not in effect\n{d.log_text()[-3000:]}")
    print(f"attack: {n_stopped} workers of uid {user.pw_uid} stopped; root's crash stored in {root_s:.2f} s, "
          f"uid {other}'s in {other_s:.2f} s")

    # the watchdog: every stopped worker killed, every attacking task released
    wait_until(lambda: all(p.poll() is not None for p in attack), STALL * 2 + 10,
               lambda: f"the attacking crashes to end (stopped: {stopped_workers(user.pw_uid)}):\n{d.log_text()[-3000:]}")
    kills = re.findall(r"Killing worker \d+: did not run for WorkerStallTimeoutSec=\d+s", d.log_text())
    # (the refused crash's worker, for its record only, may finish in a moment it is continued)
    check(len(kills) >= DEFAULT_CAP, f"{len(kills)} workers killed by the watchdog, {n_stopped} were stopped")
    # finishes every crash in flight, each with its record, and flushes the per-user summary
    check(d.stop() == 0, "daemon did not stop cleanly")

    attack_pids = {p.pid for p in attack}
    records = {int(r["COREDUMP_PID"]): r.get("COREDUMP_PROCESSING_ERROR", b"") for r in read_exports(env, "record")
               if int(r["COREDUMP_PID"]) in attack_pids}
    stalled = [pid for pid, why in records.items() if re.match(
        rb"the worker did not run for WorkerStallTimeoutSec=\d+s \(stopped or stuck\) and was killed", why)]
    capped = [pid for pid, why in records.items() if why.startswith(b"MaxParallelPerUser=")]
    sums = [e for e in read_exports(env, "suppressed") if e["COREDUMP_SUPPRESSED_REASON"] == b"max-parallel-per-user"]
    counted = {int(p) for e in sums for p in e["COREDUMP_SUPPRESSED_PIDS"].split()}
    check(all(e["COREDUMP_UID"] == str(user.pw_uid).encode() for e in sums), f"summaries of another uid: {sums}")
    with_core = {pid for pid in attack_pids if stored(env, pid)}
    lost = attack_pids - set(records) - counted - with_core
    check(not lost, f"attacking crashes with no core, record or count: {sorted(lost)}")
    check(len(stalled) >= DEFAULT_CAP, f"{len(stalled)} records name the watchdog, {n_stopped} workers were stopped: "
          f"{records}")
    check(capped and counted, f"no crash refused by the per-user cap: records {records}, summaries {sums}")
    print(f"after: {len(stalled)} crashes ended by the watchdog with a record, {len(capped)} refused with a record, "
          f"{len(counted)} counted in the per-user summary, {len(with_core)} stored before their worker was stopped")


def case_root_reserve():
    """Four uids (colluding users, or one user's subordinate uids: each a uid of its own) each fill
    their MaxParallelPerUser= with crashes whose workers they keep stopped, and the watchdog is off
    (WorkerStallTimeoutSec=infinity: as if it were fooled). Together they would hold all of
    MaxParallel=16 and refuse root's crashes; root keeps MaxParallelPerUser= slots of its own, so
    root's crash is still stored promptly."""
    uids = free_uids(4, 3000)
    env = Env({"WorkerStallTimeoutSec": "infinity", "TimeoutSec": "600", "CompressLevel": "19", "SpoolMax": "0"})
    names = [f"held-{u}-{i}" for u in uids for i in range(DEFAULT_CAP)]
    exes = crasher_copies(env, names + ["victim-root"])
    d = env.start()
    for uid in uids:
        start_stopper(uid, uid, 120)
    launch_attack([(exes[n], int(n.split("-")[1]), int(n.split("-")[1])) for n in names])

    def held():
        return sum(len(held_workers(u)) for u in uids)

    # all the users may hold (without root's share they would have taken every slot), and a crash
    # of theirs refused at MaxParallel=: every slot left to them is taken
    wait_until(lambda: held() >= 16 - DEFAULT_CAP and "MaxParallel=16 cores were already in flight" in d.log_text(),
               60, lambda: f"the attackers' workers to be stopped (all {16 - DEFAULT_CAP} the users may hold), and a "
               f"refusal at MaxParallel=:\n{d.log_text()[-3000:]}")
    root_pid, root_s = victim_crash(env, exes["victim-root"])
    n = held()  # after root's crash: the users still hold no more than their share
    print(f"observed: {n} workers of {len(uids)} uids stopped; root's crash stored in {root_s:.2f} s")
    # The users' cores hold at most MaxParallel= less root's share; the crashes refused beyond
    # that are counted, and only the cap window's first refusal gets a worker, for its record
    # (bounded: no core, one per window), which the users may stop as well.
    check(n <= 16 - DEFAULT_CAP + CAP_RECORD_WORKERS, f"{n} workers held by the users: root's share was not kept")


def control_request(path, text, uid=None, gid=None):
    cmd = [USER_PYTHON, "-c", CLIENT, path, text]
    out = subprocess.run(cmd if uid is None else as_uid(uid, gid, cmd), capture_output=True, text=True, timeout=30)
    seconds, reply = out.stdout.strip().split(" ", 1)
    return float(seconds), reply


def start_holder(env, uid, gid, hold):
    """HOLDER as uid, once it holds HELD_PER_UID connections for a second and more."""
    h = popen(as_uid(uid, gid, [USER_PYTHON, "-c", HOLDER, env.control, str(hold)]), stdout=subprocess.PIPE, text=True)
    line = h.stdout.readline().strip()
    while line and line != f"held {HELD_PER_UID}":
        line = h.stdout.readline().strip()
    check(line == f"held {HELD_PER_UID}", f"uid {uid} never held {HELD_PER_UID} connections ({line!r})")
    return h


def answered(env, who, uid=None):
    """Three requests as uid (root by default): [(who, seconds, reply)], each checked."""
    missing = "DELETE core.none.0.0.0.0"  # a valid name that is not there: "ERR 2" (ENOENT)
    answers = [(who, *control_request(env.control, missing, uid, uid)) for _ in range(3)]
    bad = [a for a in answers if a[2] != "ERR 2" or a[1] > scaled(REPLY_PROMPT_S)]
    check(not bad, f"requests not answered within {scaled(REPLY_PROMPT_S)} s: {bad}")
    return answers


def case_control_slots():
    """The test user holds every control connection it can (reconnecting those the daemon
    closes): root's and another user's requests are still answered at once. Then eight users
    do, filling every user's slot together (CONTROL_CONNECTIONS_MAX, CONTROL_CONNECTIONS_PER_UID
    each): root's requests are still answered at once, root's slots being beside theirs."""
    user = test_user()
    *others, outsider = free_uids(HOLDERS, 2000)
    env = Env()
    d = env.start()
    hold = 60
    holders = [start_holder(env, user.pw_uid, user.pw_gid, hold)]
    answers = answered(env, "root") + answered(env, f"uid {outsider}", outsider)
    holders += [start_holder(env, uid, uid, hold) for uid in others]
    answers += answered(env, f"root, {HOLDERS} users holding")
    check(all(h.poll() is None for h in holders), "a holder ended before the requests")
    for h in holders:
        h.kill()
        h.wait()
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: {HOLDERS} uids held {HELD_PER_UID} connections each; answers in ms: "
          + ", ".join(f"{who} {s * 1000:.0f}" for who, s, _ in answers))


if __name__ == "__main__":
    run_cases({"frozen_workers": case_frozen_workers, "control_slots": case_control_slots,
               "root_reserve": case_root_reserve})
