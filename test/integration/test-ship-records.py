#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tools/coredump-ship-records (installed in libexec): sidecar records to a systemd-journal-remote
on this machine's loopback with the real systemd-journal-upload; read back with our coredumpctl
-D. Each record arrives once: after a server that could not be reached (exit 1, the record left
for the next run), with two runs at once, and run after run. No crash: the records are the
committed fixtures of test/data/ctl."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from cdtest import COREDUMPCTL, check, run_cases, skip, wait_until

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIP = os.path.join(TOP, "tools", "coredump-ship-records")
FIXTURES = os.path.join(TOP, "test", "data", "ctl", "root", "var", "lib", "coredump-socket")
REMOTE = "/lib/systemd/systemd-journal-remote"
UPLOAD = "/lib/systemd/systemd-journal-upload"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Central:
    """systemd-journal-remote on 127.0.0.1, writing one directory."""

    def __init__(self, base, port=None):
        self.dir = os.path.join(base, "central")
        os.makedirs(self.dir, exist_ok=True)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([REMOTE, f"--listen-http=127.0.0.1:{self.port}", f"--output={self.dir}/"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def listening():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        wait_until(listening, 20, "systemd-journal-remote to listen")

    def pids(self):
        """The PIDs of the coredumps in the central journal, once journal-remote closed it."""
        self.proc.terminate()
        self.proc.wait(20)
        out = subprocess.run([COREDUMPCTL, "--no-pager", "-D", self.dir, "--storage", "/nonexistent",
                              "--json=short", "list"], capture_output=True, text=True, timeout=60)
        check(out.returncode == 0, f"coredumpctl -D: {out.stderr}")
        return sorted(e["pid"] for e in json.loads(out.stdout))


def setup():
    for p in (REMOTE, UPLOAD):
        if not os.access(p, os.X_OK):
            skip(f"{p} missing (Debian: systemd-journal-remote)")
    base = tempfile.mkdtemp(prefix="cds-ship.")
    store = os.path.join(base, "store")
    shutil.copytree(FIXTURES, store)
    return base, store, os.path.join(base, "state")


def ship(url, store, state):
    return subprocess.run(["sh", SHIP, f"--url={url}", f"--state={state}", store], capture_output=True, text=True,
                          timeout=120)


def fixture_pids():
    return sorted(int(f.split(".")[4]) for f in os.listdir(FIXTURES) if f.startswith("record."))


def case_once():
    """Every record arrives, once: a second run ships nothing; a new record is shipped alone."""
    base, store, state = setup()
    try:
        c = Central(base)
        p = ship(c.url, store, state)
        check(p.returncode == 0 and "5 new record(s)" in p.stdout and "5 shipped" in p.stdout, f"{p.stdout}{p.stderr}")
        again = ship(c.url, store, state)
        check(again.returncode == 0 and "0 new record(s)" in again.stdout, f"second run: {again.stdout}{again.stderr}")
        got = c.pids()
        check(got == fixture_pids(), f"central journal: {got}, records {fixture_pids()}")
        print(f"shipped: {p.stdout.strip()}; again: {again.stdout.strip()}; central PIDs {got}")
    finally:
        shutil.rmtree(base)


def case_unreachable():
    """No server: exit 1, a clear message, nothing marked shipped; the next run with the server
    up ships every record once."""
    base, store, state = setup()
    try:
        port = free_port()
        p = ship(f"http://127.0.0.1:{port}", store, state)
        check(p.returncode == 1 and "not shipped" in p.stderr, f"exit {p.returncode}: {p.stdout}{p.stderr}")
        check(open(state).read() == "", f"state after a failed run: {open(state).read()!r}")
        c = Central(base, port)
        p = ship(c.url, store, state)
        check(p.returncode == 0 and "5 shipped" in p.stdout, f"{p.stdout}{p.stderr}")
        check(c.pids() == fixture_pids(), "records lost or doubled after the failed run")
        bad = subprocess.run(["sh", SHIP, "--url=http://127.0.0.1:1", os.path.join(base, "nonexistent")],
                             capture_output=True, text=True)
        check(bad.returncode == 1 and "no such directory" in bad.stderr, f"missing dir: {bad.stderr}")
        check(subprocess.run(["sh", SHIP, store], capture_output=True).returncode == 2, "no --url= accepted")
    finally:
        shutil.rmtree(base)


def case_concurrent():
    """Two runs at once on one state file take turns: each record arrives once."""
    base, store, state = setup()
    try:
        c = Central(base)
        runs = [subprocess.Popen(["sh", SHIP, f"--url={c.url}", f"--state={state}", store], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [r.communicate(timeout=120) for r in runs]
        check(all(r.returncode == 0 for r in runs), f"runs: {outs}")
        got = c.pids()
        check(got == fixture_pids(), f"central journal after two runs at once: {got}")
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    run_cases({"once": case_once, "unreachable": case_unreachable, "concurrent": case_concurrent})
