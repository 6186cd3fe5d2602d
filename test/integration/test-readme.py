#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's first command, exactly as written, on a machine as it is after a boot: /run
has no coredump-socket directory. It must bind the default socket, register itself, store a
crash in the default storage and, on Ctrl-C (SIGINT), stop and put core_pattern back."""
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile

from cdtest import (CORE_PATTERN, CORE_PIPE_LIMIT, _restore, check, crash, kernel_has_socket, read_file,
                    require_kernel, run_cases, save_sysctl, wait_until)

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


if __name__ == "__main__":
    run_cases({"run_daemon": case_run_daemon})
