#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pipe mode (kernels without the coredump socket), forced by Mode=pipe on this kernel: the
kernel's usermode helper coredump-pipe hands the pipe and the pidfd (%F) to coredumpd, and the
crash goes through the same pipeline as in socket mode."""
import glob
import os
import re
import shutil
import signal
import socket
import struct
import subprocess

from cdtest import (BUILD, kernel_has_socket, CORE_PATTERN, CORE_PIPE_LIMIT, CRASHER, SUID_DUMPABLE, Env, Journal, check, crash,
                    decompress, elf_core_info, parse_export, read_exports, read_file, run_cases, save_sysctl,
                    systemd_coredumpctl, test_user, USER_PYTHON, wait_until, write_file)

HELPER = os.path.join(BUILD, "src", "coredump-pipe")
# fields whose values differ between any two crashes
VARYING = {"COREDUMP_TIMESTAMP", "__REALTIME_TIMESTAMP", "__MONOTONIC_TIMESTAMP", "__CURSOR", "__SEQNUM",
           "__SEQNUM_ID", "_SOURCE_REALTIME_TIMESTAMP", "_PID"}


def run_set(mode, user):
    """The spine's crash set in one mode: {name: (pid, entry, core path)}."""
    save_sysctl(SUID_DUMPABLE)
    env = Env({"Mode": mode})
    write_file(SUID_DUMPABLE, "2")
    j = Journal(env)
    d = env.start(journal=j)
    check(read_file(CORE_PATTERN).startswith("|" if mode == "pipe" else "@@"), f"pattern {read_file(CORE_PATTERN)}")
    exe = os.path.join(env.base, "crasher")
    shutil.copy(CRASHER, exe)
    os.chmod(exe, 0o755)
    suid = os.path.join(env.base, "suid-crasher")
    shutil.copy(CRASHER, suid)
    os.chmod(suid, 0o4755)
    out = {}
    for n, (name, mode_args, who, path) in enumerate((("segv", ("segv",), None, exe), ("abort", ("abort",), None, exe),
                                                      ("threads", ("threads", 64), None, exe),
                                                      ("mem", ("mem", 200), None, exe),
                                                      ("user", ("segv",), user, exe), ("setuid", ("segv",), user, suid))):
        pid, _ = crash(*mode_args, user=who, exe=path)
        cores = env.wait_cores(n + 1)
        core = [c for c in cores if f".{pid}." in os.path.basename(c)]
        check(len(core) == 1, f"{mode} {name}: no core for {pid}: {cores}")
        out[name] = (pid, j.entry(pid), core[0])
    return env, j, d, out


def case_crash_set():
    """Pipe mode stores and records the spine's crash set exactly as socket mode does (same
    fields, BY_PIDFD included: this kernel has %F), and systemd's coredumpctl lists them."""
    user = test_user()
    penv, pj, pd, pipe = run_set("pipe", user)
    for name, (pid, e, core) in pipe.items():
        out = decompress(core, os.path.join(penv.base, f"{name}.core"))
        info = elf_core_info(out)
        check(info["type"] == 4 and pid in info["pids"] + [int(e["COREDUMP_TID"])], f"{name}: core {info}")
        check(e.get("COREDUMP_BY_PIDFD") == b"1", f"{name}: no BY_PIDFD")
        check(e["COREDUMP_FILENAME"].decode() == core, f"{name}: FILENAME")
    check(pipe["threads"][1]["COREDUMP_PROC_STATUS"].count(b"Threads:\t65") == 1, "threads: /proc status")
    check(pipe["user"][1]["_UID"] == str(user.pw_uid).encode(), "the user's crash is not written as the user")
    check(pipe["setuid"][1]["COREDUMP_DUMPABLE"] == b"2" and pipe["user"][1]["COREDUMP_DUMPABLE"] == b"1", "DUMPABLE")
    acl = subprocess.run(["getfacl", "-cpn", pipe["setuid"][2]], capture_output=True, text=True).stdout
    check(f"user:{user.pw_uid}:" not in acl, "the setuid core is readable by the user")
    listed = subprocess.run([systemd_coredumpctl(), "--no-pager", "-D", pj.dir, "list"], capture_output=True,
                            text=True).stdout
    for name, (pid, _, _) in pipe.items():
        check(re.search(rf"\b{pid}\b", listed), f"systemd's coredumpctl does not list {name} ({pid}):\n{listed}")
    pd.stop()
    pj.stop()
    if not kernel_has_socket():
        print("observed: the pipe set stored and listed; no coredump socket here to compare it with")
        return
    senv, sj, sd, sock = run_set("socket", user)
    for name in pipe:
        # ours, not what journald adds about the writing process (it varies with timing)
        a = {k for k in pipe[name][1] if not k.startswith("_")} - VARYING
        b = {k for k in sock[name][1] if not k.startswith("_")} - VARYING
        check(a == b, f"{name}: fields differ between pipe and socket mode: pipe only {a - b}, socket only {b - a}")
        for k in ("COREDUMP_UID", "COREDUMP_GID", "COREDUMP_SIGNAL", "COREDUMP_SIGNAL_NAME", "COREDUMP_COMM",
                  "COREDUMP_DUMPABLE", "COREDUMP_BY_PIDFD", "_UID"):
            check(pipe[name][1].get(k) == sock[name][1].get(k), f"{name}: {k} {pipe[name][1].get(k)} != {sock[name][1].get(k)}")
        # each run has its own directory: the same program, from another place
        check(os.path.basename(pipe[name][1]["COREDUMP_EXE"]) == os.path.basename(sock[name][1]["COREDUMP_EXE"]), "EXE")
    sd.stop()


def case_register():
    """The daemon picks socket mode where the kernel has the socket unless Mode=pipe, else pipe
    mode; pipe mode raises core_pipe_limit while registered; both are restored when it stops."""
    env = Env({"Mode": "pipe"})
    old_pattern, old_limit = read_file(CORE_PATTERN), read_file(CORE_PIPE_LIMIT)
    write_file(CORE_PIPE_LIMIT, "0")
    d = env.start()
    pattern = read_file(CORE_PATTERN)
    check(pattern == f"|{HELPER} {os.path.dirname(env.sock)}/pipe.sock %P %I %u %g %s %t %c %h %d %F", pattern)
    check(int(read_file(CORE_PIPE_LIMIT)) >= 1, "core_pipe_limit not raised")
    d.wait_log(r"Using pipe mode: Mode=pipe")
    pid, _ = crash("segv")
    env.wait_cores(1)
    d.stop()
    check(read_file(CORE_PATTERN) == old_pattern and read_file(CORE_PIPE_LIMIT) == "0", "not restored")
    env.write_config({"Mode": "auto"})
    d = env.start()
    if kernel_has_socket():
        check(read_file(CORE_PATTERN) == "@@" + env.sock, "auto mode did not pick the socket")
        d.wait_log(r"Using socket mode: the kernel speaks the @@ request protocol")
    else:
        check(read_file(CORE_PATTERN) == pattern, f"auto mode did not pick the pipe: {read_file(CORE_PATTERN)}")
        d.wait_log(r"Using pipe mode: the kernel has no coredump socket")
    d.stop()
    out = subprocess.run([os.path.join(BUILD, "src", "coredumpd"), "--check-config", f"--config={env.conf}",
                          f"--socket={env.sock}"], capture_output=True, text=True).stdout
    active = "socket" if kernel_has_socket() else "pipe"
    check(f"Mode=auto\nActive={active}" in out, f"--check-config:\n{out}")
    write_file(CORE_PIPE_LIMIT, old_limit)


# what coredump-pipe logs when coredumpd has not answered in time (the handover stays queued)
GAVE_UP = "no answer from coredumpd within"


def kernel_log():
    return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout


def recycle(pid, env):
    impostor_exe = os.path.join(env.base, "impostor")
    shutil.copy("/bin/sleep", impostor_exe)
    for _ in range(50):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen([impostor_exe, "60"], env={"IMPOSTOR_SECRET": "stolen"})
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
    raise AssertionError(f"could not recycle PID {pid}")


def pid_reuse(with_pidfd):
    """CVE-2025-4598 against the pipe path: the handover waits in the socket's backlog (no
    daemon yet), the crasher is SIGKILLed, reaped and its PID given to an impostor; then the
    daemon takes the handover. Nothing of the impostor may be recorded."""
    env = Env({"Mode": "pipe"})
    kernel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    kernel.bind(env.sock)
    kernel.listen(16)
    handover = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    handover.bind(os.path.join(os.path.dirname(env.sock), "pipe.sock"))
    handover.listen(16)
    pattern = env.pattern()
    if not with_pidfd:  # as on kernels before %F
        pattern = pattern.replace(" %F", "")
    write_file(CORE_PATTERN, pattern)
    write_file(CORE_PIPE_LIMIT, "16")
    said_before = kernel_log().count(GAVE_UP)
    victim = subprocess.Popen([CRASHER, "segv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # the helper handed over (into the backlog) and gave up waiting for the ack: it says so
    wait_until(lambda: kernel_log().count(GAVE_UP) > said_before and f"core of PID {victim.pid}: {GAVE_UP}" in kernel_log(),
               30, "coredump-pipe to give up waiting for the ack")
    check(victim.poll() is None, "the crash did not wait for its helper")
    pid = victim.pid
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    impostor = recycle(pid, env)
    try:
        # both sockets passed the way systemd passes them
        d = env.start(extra=["--no-register"], listen_fd=kernel.fileno(), extra_fds=[handover.fileno()])
        kernel.close()
        handover.close()
        d.wait_log(rf"Crash of PID {pid} ")
        wait_until(lambda: any(r.get("COREDUMP_PID") == str(pid).encode() for r in read_exports(env, "record")), 20,
                   lambda: f"the record of the killed crash {pid}:\n{d.log_text()}")
        d.stop()
        for path in glob.glob(os.path.join(env.store, "*")):
            with open(path, "rb") as f:
                b = f.read()
            check(b"impostor" not in b and b"stolen" not in b, f"the impostor's data was recorded in {path}")
        check("impostor" not in d.log_text(), f"the impostor's data was logged:\n{d.log_text()}")
        recs = [parse_export(open(r, "rb").read())[0] for r in glob.glob(os.path.join(env.store, "record.*"))]
        recs = [r for r in recs if r.get("COREDUMP_PID") == str(pid).encode()]
        check(len(recs) == 1, f"{len(recs)} records for the killed crash:\n{d.log_text()}")
        check(recs[0].get("COREDUMP_PROC_MISSING") == b"1", f"the record used /proc: {recs[0]}")
        check((recs[0].get("COREDUMP_BY_PIDFD") == b"1") == with_pidfd, "BY_PIDFD")
    finally:
        impostor.kill()
        impostor.wait()


def case_pid_reuse():
    pid_reuse(True)


def case_pid_reuse_no_pidfd():
    pid_reuse(False)


def handover_send(path, payload, fds, user=None):
    """Sends one raw message with fds to the handover socket (as user: in a child), returns
    the ack byte or None."""
    code = f"""
import socket, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect({path!r})
fds = {fds!r}
s.sendmsg([bytes.fromhex({payload.hex()!r})], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, __import__('array').array('i', fds))] if fds else [])
s.settimeout(5)
try:
    b = s.recv(1)
    print(b[0] if b else 'eof')
except Exception as e:
    print('none')
"""
    cmd = [USER_PYTHON, "-c", code]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]
    r, w = os.pipe()
    p = subprocess.run(cmd, capture_output=True, text=True, pass_fds=[r, w] + list(fds), timeout=30)
    os.close(r)
    os.close(w)
    return p.stdout.strip() or p.stderr.strip()


def handover_msg(pid=1234, tid=1234, has_pidfd=0, **kw):
    f = dict(magic=0x43445331, type=7, pid=pid, tid=tid, uid=0, gid=0, signal=11, dumpable=1, timestamp=1, rlimit=0,
             has_pidfd=has_pidfd, spare=0, hostname=b"host")
    f.update(kw)
    return struct.pack("<IIiiIIiIQQII65s7x", f["magic"], f["type"], f["pid"], f["tid"], f["uid"], f["gid"],
                       f["signal"], f["dumpable"], f["timestamp"], f["rlimit"], f["has_pidfd"], f["spare"],
                       f["hostname"])


def case_refusals():
    """The helper refuses malformed arguments; the daemon refuses malformed, oversized and
    non-root handovers, and stays healthy."""
    user = test_user()
    env = Env({"Mode": "pipe"})
    d = env.start()
    path = os.path.join(os.path.dirname(env.sock), "pipe.sock")
    good = ["/run/x.sock", "1234", "1234", "0", "0", "11", "1", "0", "host", "1"]
    for bad in ([], good[:-1], good + ["3", "extra"], [*good[:1], "0", *good[2:]], [*good[:5], "99", *good[6:]],
                [*good[:8], "bad host", *good[9:]], [*good[:9], "7"], good + ["4"], good + ["3"], ["relative", *good[1:]]):
        p = subprocess.run([HELPER, *bad], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        check(p.returncode == 1, f"the helper accepted {bad}")
    r, w = os.pipe()
    try:
        st = os.stat(path)
        check(st.st_mode & 0o777 == 0o600 and st.st_uid == 0, f"handover socket mode {oct(st.st_mode)}")
        # first (refusals are logged rate-limited): let the user reach it, the daemon must refuse
        os.chmod(path, 0o666)
        os.chmod(os.path.dirname(path), 0o711)
        check(handover_send(path, handover_msg(), [r], user=user) == "0", "a non-root handover was taken")
        d.wait_log(r"Refused a handover on the pipe socket from uid %d: not root" % user.pw_uid)
        os.chmod(path, 0o600)
        os.chmod(os.path.dirname(path), 0o700)
        check(handover_send(path, handover_msg(), [r]) == "1", "a well-formed handover was refused")
        for what, payload, fds in (("oversized", handover_msg() + b"x" * 100, [r]), ("short", handover_msg()[:40], [r]),
                                   ("wrong type", handover_msg(type=3), [r]), ("no pipe", handover_msg(), []),
                                   ("extra fd", handover_msg(), [r, w]), ("not a FIFO", handover_msg(), [os.open("/dev/null", os.O_RDONLY)]),
                                   ("pidfd claimed, none sent", handover_msg(has_pidfd=1), [r]),
                                   ("bad signal", handover_msg(signal=0), [r]), ("no NUL in hostname", handover_msg(hostname=b"h" * 65), [r])):
            check(handover_send(path, payload, fds) == "0", f"the daemon took a handover with {what}")
    finally:
        os.chmod(os.path.dirname(path), 0o700)
        os.close(r)
        os.close(w)
    pid, _ = crash("segv")  # still healthy
    wait_until(lambda: any(f".{pid}." in c for c in env.cores()), 30,
               lambda: f"a core for {pid} after the refusals:\n{d.log_text()}")
    d.stop()


if __name__ == "__main__":
    run_cases({"crash_set": case_crash_set, "register": case_register, "pid_reuse": case_pid_reuse,
               "pid_reuse_no_pidfd": case_pid_reuse_no_pidfd, "refusals": case_refusals})
