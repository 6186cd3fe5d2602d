#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the README tells a user to type. run_daemon: its first command, exactly as written, on a
machine as it is after a boot: /run has no coredump-socket directory. It must bind the default
socket, register itself, store a crash in the default storage and, on Ctrl-C (SIGINT), stop and
put core_pattern back. first_crash: every command of its "A first crash" section, as written,
against a daemon with a journald, each checked for what the README says it shows."""
import glob
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile

from cdtest import (CORE_PATTERN, CORE_PIPE_LIMIT, Env, Journal, _restore, check, crash, ctl_command, elf_core_info,
                    kernel_has_socket, read_file, require_kernel, run_cases, save_sysctl, wait_until)

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SOCKET_DIR = "/run/coredump-socket"  # meson_options.txt: socket-path
STORAGE = "/var/lib/coredump-socket"  # the default Directory=
README_COMMAND = "tools/run-daemon.sh"


def readme_command():
    """The command the README gives first, checked to be the one this test runs."""
    with open(os.path.join(TOP, "README.md")) as f:
        for line in f:
            if line.startswith("    ") and line.strip().endswith("run-daemon.sh"):
                return line.strip()
    raise AssertionError("README.md gives no run-daemon.sh command")


def in_use(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def empty_run_dir():
    """/run/coredump-socket as after a boot: absent. One left by an earlier run is moved
    aside and put back afterwards; a live daemon's is never touched."""
    if not os.path.lexists(SOCKET_DIR):
        _restore.append((lambda: shutil.rmtree(SOCKET_DIR, ignore_errors=True), SOCKET_DIR))
        return
    sock = os.path.join(SOCKET_DIR, "kernel.sock")
    if os.path.exists(sock) and in_use(sock):
        from cdtest import skip
        skip(f"a coredump daemon is listening on {sock}: this test needs the default paths")
    aside = tempfile.mkdtemp(prefix="coredump-socket-aside.", dir="/run")
    os.rename(SOCKET_DIR, os.path.join(aside, "d"))

    def put_back():
        shutil.rmtree(SOCKET_DIR, ignore_errors=True)
        os.rename(os.path.join(aside, "d"), SOCKET_DIR)
        os.rmdir(aside)
    _restore.append((put_back, f"{SOCKET_DIR} moved to {aside}"))


def case_run_daemon():
    require_kernel()
    check(readme_command() == README_COMMAND, f"the README's first command is {readme_command()!r}, "
          f"this test runs {README_COMMAND!r}")
    before_pattern = save_sysctl(CORE_PATTERN)
    save_sysctl(CORE_PIPE_LIMIT)
    empty_run_dir()
    check(not os.path.exists(SOCKET_DIR), f"{SOCKET_DIR} still there")
    ours = []  # PIDs of the test's crashes: their files in the store go afterwards, nothing else
    _restore.append((lambda: [os.unlink(f) for pid in ours for f in glob.glob(os.path.join(STORAGE, f"*.{pid}.*"))],
                     f"the test's files in {STORAGE}"))

    log_path = tempfile.mktemp(prefix="run-daemon.", suffix=".log", dir="/var/tmp")
    _restore.append((lambda: os.path.exists(log_path) and os.unlink(log_path), log_path))
    with open(log_path, "w") as log:
        # in a root shell, as the README says; a fresh process group, as a terminal gives it
        p = subprocess.Popen([os.path.join(TOP, README_COMMAND)], cwd=TOP, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    _restore.append((lambda: p.poll() is None and os.killpg(p.pid, signal.SIGKILL), f"run-daemon.sh {p.pid}"))

    def text():
        return read_file(log_path)
    wait_until(lambda: "Ready:" in text() or p.poll() is not None, 600, "the daemon to be ready")
    check(p.poll() is None, f"run-daemon.sh exited with {p.returncode}:\n{text()}")
    check(os.stat(SOCKET_DIR).st_mode & 0o7777 == 0o700, f"{SOCKET_DIR} mode {oct(os.stat(SOCKET_DIR).st_mode)}")
    # the README's command runs as installed (Mode=auto): the socket where the kernel has it
    if kernel_has_socket():
        check(read_file(CORE_PATTERN) == f"@@{SOCKET_DIR}/kernel.sock", f"core_pattern is {read_file(CORE_PATTERN)!r}")
    else:
        check(read_file(CORE_PATTERN).startswith("|") and f" {SOCKET_DIR}/pipe.sock " in read_file(CORE_PATTERN),
              f"core_pattern is {read_file(CORE_PATTERN)!r}")

    pid, rc = crash("segv")
    ours.append(pid)
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    cores = wait_until(lambda: glob.glob(os.path.join(STORAGE, f"core.crasher.0.*.{pid}.*.zst")), 60,
                       lambda: f"the core of PID {pid} in {STORAGE}: {os.listdir(STORAGE)}\n{text()}")
    check(len(cores) == 1, f"expected one core of PID {pid}: {cores}")
    out = subprocess.run(["zstd", "-q", "-d", "-c", cores[0]], capture_output=True, timeout=60).stdout
    check(out[:4] == b"\x7fELF" and out[16] == 4, "the stored core is not an ELF core")

    os.killpg(p.pid, signal.SIGINT)  # Ctrl-C
    rc = p.wait(30)
    check(rc == 0, f"the daemon exited with {rc} on SIGINT:\n{text()}")
    check(read_file(CORE_PATTERN) == before_pattern,
          f"core_pattern is {read_file(CORE_PATTERN)!r} after Ctrl-C, was {before_pattern!r}")
    print(f"observed: {SOCKET_DIR} made (0700), core of PID {pid} stored as {os.path.basename(cores[0])}, "
          f"core_pattern back to {before_pattern!r}")


FIRST_CRASH = "## A first crash"


def first_crash_commands():
    """The command lines of the README's "A first crash" section, in order."""
    with open(os.path.join(TOP, "README.md")) as f:
        text = f.read()
    check(FIRST_CRASH in text, f"README.md has no section {FIRST_CRASH!r}")
    section = text.split(FIRST_CRASH, 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]


def case_first_crash():
    cmds = first_crash_commands()
    check(len(cmds) == 5 and cmds[0].startswith("sh -c ") and all(c.startswith("coredumpctl ") for c in cmds[1:]),
          f"the README's first crash is not a crash and four coredumpctl commands: {cmds}")
    # the default storage, which coredumpctl trusts as installed (the test's files go afterwards)
    env = Env({"Directory": STORAGE})
    j = Journal(env)
    d = env.start(journal=j)
    crashed = subprocess.Popen(shlex.split(cmds[0]), cwd=env.base)
    _restore.append((lambda: [os.unlink(f) for f in glob.glob(os.path.join(STORAGE, f"*.{crashed.pid}.*"))],
                     f"the test's files in {STORAGE}"))
    check(crashed.wait(60) == -signal.SIGSEGV, f"{cmds[0]!r} ended with {crashed.returncode}, not SIGSEGV")
    wait_until(lambda: glob.glob(os.path.join(STORAGE, f"core.*.{crashed.pid}.*")), 60,
               lambda: f"the crash's core:\n{d.log_text()}")
    j.sync()
    out = {}
    for cmd in cmds[1:]:
        # our coredumpctl, reading that journald's journal as the machine's own (ctl_command()),
        # in the directory the user would be in (dump -o writes there)
        e = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
        e.update({"TZ": "UTC", "LC_ALL": "C.UTF-8", "SYSTEMD_COLORS": "0"})
        p = subprocess.run(ctl_command([j, *shlex.split(cmd)[1:]]), cwd=env.base, env=e, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=300)
        check(p.returncode == 0, f"{cmd!r}: exit {p.returncode}\n{p.stdout.decode()}{p.stderr.decode()}")
        out[cmd.split()[1]] = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    pid = crashed.pid
    check(re.search(rf"^.* {pid} .*\bSIGSEGV\b.*\bpresent\b", out["list"], re.M),
          f"list does not show PID {pid} with its core present:\n{out['list']}")
    check(re.search(rf"PID: {pid} \(", out["info"]) and f"Stack trace of thread {pid}:" in out["info"],
          f"info does not show PID {pid} with its stack trace:\n{out['info']}")
    check(re.search(r"^#0 ", out["gdb"], re.M), f"gdb printed no backtrace:\n{out['gdb']}")
    info = elf_core_info(os.path.join(env.base, "core.dump"))
    check(info["type"] == 4 and pid in info["pids"], f"dump wrote no core of PID {pid}: {info}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    j.stop()
    print(f"observed: {' / '.join(cmds)}: each exit 0; the core of PID {pid} dumped as an ELF core")


if __name__ == "__main__":
    run_cases({"run_daemon": case_run_daemon, "first_crash": case_first_crash})
