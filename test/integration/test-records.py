#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every crash becomes one journal entry in systemd-coredump's format, read back from a real
journald and with systemd's own coredumpctl, and a record kept beside the core."""
import glob
import os
import shutil
import signal
import socket
import subprocess
import time

from cdtest import (CORE_PATTERN, CRASHER, SUID_DUMPABLE, Env, Journal, check, crash, decompress, parse_export,
                    require_socket, run_cases, wait_backlog, save_sysctl, systemd_coredumpctl, test_user, write_file)

MESSAGE_ID = b"fc2e22bc6ee647b6b90729ab34a250b1"


def only_entry(j, pid):
    """The one entry of the crash, once journald has it (written after the core and the record)."""
    return j.entry(pid)


def check_entry(e, pid, uid, sig, signame, exe, cmdline, t0, t1, path):
    def f(k):
        return e.get(k, b"").decode(errors="replace")
    want = {"COREDUMP_PID": str(pid), "COREDUMP_UID": str(uid), "COREDUMP_GID": str(uid), "COREDUMP_SIGNAL": str(sig),
            "COREDUMP_SIGNAL_NAME": signame, "COREDUMP_COMM": os.path.basename(exe)[:15], "COREDUMP_EXE": exe,
            "COREDUMP_CMDLINE": cmdline, "COREDUMP_HOSTNAME": socket.gethostname(), "COREDUMP_FILENAME": path,
            "COREDUMP_TID": str(pid), "COREDUMP_BY_PIDFD": "1", "PRIORITY": "2", "MESSAGE_ID": MESSAGE_ID.decode()}
    for k, v in want.items():
        check(f(k) == v, f"{k}={f(k)!r}, expected {v!r}")
    check(t0 <= int(f("COREDUMP_TIMESTAMP")) <= t1, f"COREDUMP_TIMESTAMP {f('COREDUMP_TIMESTAMP')} not in [{t0}, {t1}]")
    check(f("MESSAGE").startswith(f"Process {pid} ({os.path.basename(exe)[:15]}) of user {uid} dumped core."),
          f"MESSAGE {f('MESSAGE')!r}")
    check(f"Pid:\t{pid}\n" in f("COREDUMP_PROC_STATUS"), "COREDUMP_PROC_STATUS is not this process's")
    check(exe in f("COREDUMP_PROC_MAPS"), "COREDUMP_PROC_MAPS does not map the executable")
    check("Max core file size" in f("COREDUMP_PROC_LIMITS"), "COREDUMP_PROC_LIMITS missing")
    check("0::/" in f("COREDUMP_PROC_CGROUP"), "COREDUMP_PROC_CGROUP missing")
    check(" / " in f("COREDUMP_PROC_MOUNTINFO"), "COREDUMP_PROC_MOUNTINFO missing")
    check(len(e.get("COREDUMP_PROC_AUXV", b"")) >= 16 and len(e["COREDUMP_PROC_AUXV"]) % 16 == 0, "COREDUMP_PROC_AUXV")
    check(f("COREDUMP_CWD") and f("COREDUMP_ROOT") == "/", "COREDUMP_CWD/ROOT")
    check("CDS_TEST_MARK=1" in f("COREDUMP_ENVIRON").split("\n"), "COREDUMP_ENVIRON lacks the test's variable")
    check(f("COREDUMP_OPEN_FDS").startswith("0:"), "COREDUMP_OPEN_FDS")
    check(not any(k.startswith("_CDS_") for k in e), "internal fields leaked into the journal")


def run_crash(mode, *args, user=None, exe=CRASHER):
    env = dict(os.environ, CDS_TEST_MARK="1")
    t0 = time.time_ns() // 1000
    pid, rc = crash(mode, *args, user=user, exe=exe, env=env)
    return pid, rc, t0, time.time_ns() // 1000


def user_exe(env):
    exe = os.path.join(env.base, "crasher")
    shutil.copy(CRASHER, exe)
    os.chmod(exe, 0o755)
    return exe


def case_journal_entries():
    """The spine's crash set, each read back from journald: exactly one entry, every field."""
    user = test_user()
    save_sysctl(SUID_DUMPABLE)
    env = Env()
    write_file(SUID_DUMPABLE, "2")
    j = Journal(env)
    d = env.start(journal=j)
    exe = user_exe(env)
    suid = os.path.join(env.base, "suid-crasher")
    shutil.copy(CRASHER, suid)
    os.chmod(suid, 0o4755)
    crashes = (("segv", (), 11, "SIGSEGV", None, exe), ("abort", (), 6, "SIGABRT", None, exe),
               ("bus", (), 7, "SIGBUS", None, exe), ("threads", (64,), 11, "SIGSEGV", None, exe),
               ("mem", (200,), 11, "SIGSEGV", None, exe), ("segv", (), 11, "SIGSEGV", user, exe),
               ("segv", (), 11, "SIGSEGV", user, suid))
    for n, (mode, args, sig, name, who, path_exe) in enumerate(crashes):
        pid, rc, t0, t1 = run_crash(mode, *args, user=who, exe=path_exe)
        check(rc == -sig, f"{mode}: crasher ended with {rc}")
        path = [c for c in env.wait_cores(n + 1) if f".{pid}." in c]
        check(len(path) == 1, f"no stored core for {pid}")
        d.wait_log(rf"Crash of PID {pid} ")
        e = only_entry(j, pid)
        uid = who.pw_uid if who else 0
        cmdline = " ".join([path_exe, mode, *map(str, args)])
        check_entry(e, pid, uid, sig, name, path_exe, cmdline, t0, t1, path[0])
        plain_user = who is not None and path_exe != suid
        if plain_user:  # a plain user's crash: their entry (systemd-coredump does the same)
            check(e.get("_UID") == str(uid).encode(), f"_UID={e.get('_UID')}, expected {uid}: the user must own it")
        else:  # root's or a setuid crash: written by the unprivileged worker user, never as root or the user
            check(e.get("_UID") not in (b"0", str(uid).encode(), None), f"_UID={e.get('_UID')} for {mode} {path_exe}")
        check(e.get("COREDUMP_DUMPABLE") == (b"2" if path_exe == suid else b"1"), "COREDUMP_DUMPABLE")
        check(e.get("COREDUMP_THREAD_NAME") == os.path.basename(path_exe)[:15].encode(),
              f"COREDUMP_THREAD_NAME {e.get('COREDUMP_THREAD_NAME')}")
    d.stop()


def coredumpctl(*args, user=None):
    cmd = [systemd_coredumpctl(), "--no-pager", *args]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, timeout=120)


def case_systemd_coredumpctl():
    """systemd's own coredumpctl lists, shows and dumps our crashes."""
    user = test_user()
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    exe = user_exe(env)
    root_pid, _, _, _ = run_crash("segv", exe=exe)
    user_pid, _, _, _ = run_crash("abort", user=user, exe=exe)
    env.wait_cores(2)
    d.wait_log(rf"Crash of PID {user_pid} ")
    for pid in (root_pid, user_pid):
        only_entry(j, pid)

    out = coredumpctl("-D", j.dir, "--no-legend", "list").stdout.decode()
    for pid in (root_pid, user_pid):
        rows = [line for line in out.splitlines() if f" {pid} " in line]
        check(len(rows) == 1 and " present " in rows[0], f"coredumpctl list, PID {pid}:\n{out}")
    info = coredumpctl("-D", j.dir, "info", str(root_pid)).stdout.decode()
    for want in (f"PID: {root_pid} (crasher)", "Signal: 11 (SEGV)", f"Executable: {exe}", "Storage: ", "present",
                 f"Command Line: {exe} segv"):
        check(want in info, f"coredumpctl info lacks {want!r}:\n{info}")
    dumped = os.path.join(env.base, "dumped.core")
    p = coredumpctl("-D", j.dir, "dump", str(root_pid), "-o", dumped)
    check(p.returncode == 0, f"coredumpctl dump failed: {p.stderr.decode()}")
    ours = decompress([c for c in env.cores() if f".{root_pid}." in c][0], os.path.join(env.base, "ours.core"))
    with open(dumped, "rb") as a, open(ours, "rb") as b:
        check(a.read() == b.read(), "coredumpctl dump differs from our decompressed core")

    # an unprivileged user sees their own crash, not root's
    out = coredumpctl("-D", j.dir, "--no-legend", "list", user=user).stdout.decode()
    check(any(f" {user_pid} " in line for line in out.splitlines()), f"user does not see their crash:\n{out}")
    check(not any(f" {root_pid} " in line for line in out.splitlines()), f"user sees root's crash:\n{out}")
    d.stop()


def read_records(env):
    recs = []
    for path in glob.glob(os.path.join(env.store, "record.*.export")):
        with open(path, "rb") as f:
            recs += parse_export(f.read())
    return recs


def case_no_journald():
    """Without journald the crash is still stored and its record kept beside the core."""
    env = Env()
    d = env.start(no_journald=True)
    pid, rc, t0, t1 = run_crash("segv")
    path = env.wait_cores(1)[0]
    d.wait_log(rf"Crash of PID {pid} \(crasher\): no journal entry")
    recs = [r for r in read_records(env) if r.get("COREDUMP_PID") == str(pid).encode()]
    check(len(recs) == 1, f"{len(recs)} records for {pid}")
    check_entry(recs[0], pid, 0, 11, "SIGSEGV", CRASHER, f"{CRASHER} segv", t0, t1, path)
    rec = glob.glob(os.path.join(env.store, "record.*.export"))[0]
    st = os.stat(rec)
    check(st.st_uid == 0 and st.st_mode & 0o777 == 0o640, f"record mode {oct(st.st_mode)}")
    d.stop()


def case_storage_journal():
    """Storage=journal: the core goes into the entry (COREDUMP=), no file; coredumpctl dumps it."""
    env = Env({"Storage": "journal"})
    j = Journal(env)
    d = env.start(journal=j)
    pid, rc, _, _ = run_crash("segv")
    d.wait_log(rf"Crash of PID {pid} \(crasher, uid 0\): \d+ bytes processed, core not stored \(Storage=journal\)")
    e = only_entry(j, pid)
    check(e.get("COREDUMP", b"")[:4] == b"\x7fELF", "no core in the entry")
    check("COREDUMP_FILENAME" not in e, "Storage=journal entry names a file")
    check(env.cores() == [], "Storage=journal stored a file")
    dumped = os.path.join(env.base, "dumped.core")
    p = coredumpctl("-D", j.dir, "dump", str(pid), "-o", dumped)
    check(p.returncode == 0, f"coredumpctl dump failed: {p.stderr.decode()}")
    with open(dumped, "rb") as f:
        check(f.read() == e["COREDUMP"], "coredumpctl dump differs from the entry's core")
    d.stop()


def case_storage_none():
    """Storage=none: no file, but the entry and the record; systemd's coredumpctl says 'none'."""
    env = Env({"Storage": "none"})
    j = Journal(env)
    d = env.start(journal=j)
    pid, rc, t0, t1 = run_crash("threads", 3)
    d.wait_log(rf"Crash of PID {pid} \(crasher, uid 0\): \d+ bytes processed, core not stored \(Storage=none\)")
    e = only_entry(j, pid)
    check("COREDUMP_FILENAME" not in e and "COREDUMP" not in e, "Storage=none entry has a core")
    check(e.get("COREDUMP_SIGNAL") == b"11" and e.get("COREDUMP_TID") == str(pid).encode(), f"entry {e.keys()}")
    check(env.cores() == [], "Storage=none stored a file")
    check(len([r for r in read_records(env) if r.get("COREDUMP_PID") == str(pid).encode()]) == 1, "no record kept")
    out = coredumpctl("-D", j.dir, "--no-legend", "list", str(pid)).stdout.decode()
    check(" none " in out, f"coredumpctl list:\n{out}")
    d.stop()


def case_bounded():
    """100 000 open fds and a 1 MiB environment cannot blow up the record or the entry."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    big = {f"CDS_BIG_{i}": "x" * 100_000 for i in range(10)}
    pid, rc = crash("fds", 100_000, env=dict(os.environ, **big))
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    d.wait_log(rf"Crash of PID {pid} \(crasher, uid 0\): core complete")
    e = only_entry(j, pid)
    check(len(e["COREDUMP_ENVIRON"]) <= 128 << 10, f"COREDUMP_ENVIRON has {len(e['COREDUMP_ENVIRON'])} bytes")
    fds = e["COREDUMP_OPEN_FDS"].decode()
    check(fds.count("\n\n") <= 1024 and len(fds) <= 256 << 10, f"COREDUMP_OPEN_FDS: {fds.count(chr(10) * 2)} fds")
    check(e.get("COREDUMP_RECORD_TRUNCATED") == b"1", "the cut record does not say so")
    check(sum(len(v) for v in e.values()) < 8 << 20, "entry larger than the record bound")
    recs = [r for r in read_records(env) if r.get("COREDUMP_PID") == str(pid).encode()]
    check(len(recs) == 1 and recs[0].get("COREDUMP_RECORD_TRUNCATED") == b"1", "record beside the core")
    d.stop()


def case_pid_reuse():
    """CVE-2025-4598's attack: the crashing process is SIGKILLed while the kernel holds it for
    the dump, reaped, and its PID handed to another process before the collector looks at
    /proc. The record must never carry the impostor's data. (Pipe mode's own: test-pipe.)"""
    require_socket("the crash waits in the coredump socket's backlog")
    env = Env()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(env.sock)
    s.listen(16)
    write_file(CORE_PATTERN, "@@" + env.sock)
    victim = subprocess.Popen([CRASHER, "segv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_backlog(env.sock, 1)  # now waiting in the kernel for our ack (nobody accepts yet)
    check(victim.poll() is None, "the crash did not wait in the backlog")
    pid = victim.pid
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)  # reaped: the PID is free
    impostor_exe = os.path.join(env.base, "impostor")
    shutil.copy("/bin/sleep", impostor_exe)
    impostor = None
    for _ in range(50):  # recycle the PID
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen([impostor_exe, "60"], env={"IMPOSTOR_SECRET": "stolen"})
        if p.pid == pid:
            impostor = p
            break
        p.kill()
        p.wait()
    check(impostor is not None, f"could not recycle PID {pid}")
    try:
        d = env.start(extra=["--no-register"], listen_fd=s.fileno())
        s.close()
        d.wait_log(rf"Crash of PID {pid} \(n/a, uid 0\): no core \(the process was killed while being dumped\); recorded")
        d.stop()
        log = d.log_text()
        for path in glob.glob(os.path.join(env.store, "*")):
            with open(path, "rb") as f:
                b = f.read()
            check(b"impostor" not in b and b"stolen" not in b, f"the impostor's data was recorded in {path}")
        check("impostor" not in log, f"the impostor's data was logged:\n{log}")
        recs = [r for r in read_records(env) if r.get("COREDUMP_PID") == str(pid).encode()]
        check(len(recs) == 1, f"{len(recs)} records for the killed crash")
        check(recs[0].get("COREDUMP_PROC_MISSING") == b"1" and recs[0].get("COREDUMP_UID") == b"0",
              f"record of the killed crash: {recs[0]}")
        check("COREDUMP_FILENAME" not in recs[0], "a core file was claimed for the killed crash")
    finally:
        impostor.kill()
        impostor.wait()


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
