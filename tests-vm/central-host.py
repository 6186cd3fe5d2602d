#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""t20-central, this machine's side (tests-vm/run runs it after the guest's boot 1).

  central-host.py ship --url=URL --crasher=PATH
      bug A (the crasher's segfault in cds_crash_inner, the same file the guest crashed, at the
      same path) crashes here under coredumpd without journald (test/integration/cdtest.py: a
      private store, kernel.core_pattern restored, the daemon stopped); its sidecar record goes
      to systemd-journal-remote with tools/coredump-ship-records. Exit 77 without the socket.

  central-host.py check --dir=DIR --crasher=PATH --guest-machine-id=ID --console=LOG [--no-host]
      the central journal DIR, with our coredumpctl -D: both machines' crashes listed with their
      hostname and machine id; --group shows bug A once (one COREDUMP_SIGNATURE) with 2
      machines, bug B with 1; debug of the guest's bug A (Storage=journal) prints
      cds_crash_inner; debug of bug B (a core on the guest's disk) says on which machine it is.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "test", "integration"))
BUILD = os.path.realpath(os.environ.get("CDS_BUILD_DIR", os.path.join(TOP, "build-vm")))
os.environ["CDS_BUILD_DIR"] = BUILD
COREDUMPCTL = os.path.join(BUILD, "src", "coredumpctl")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def ship(args):
    import cdtest  # after CDS_BUILD_DIR: it takes the daemon from there

    env = cdtest.Env()  # exits 77 without the coredump socket
    daemon = env.start()
    pid, rc = cdtest.crash("deep", exe=args.crasher)
    print(f"bug A here: PID {pid} (exit {rc}), {args.crasher}")

    def record():
        for name in os.listdir(env.store):
            if name.startswith("record.") and f".{pid}." in name:
                with open(os.path.join(env.store, name), "rb") as f:
                    data = f.read()
                if re.search(rb"^COREDUMP_PID=%d$" % pid, data, re.M):
                    return name, data
        return None
    name, data = cdtest.wait_until(record, 60, lambda: f"the record of PID {pid}:\n{daemon.log_text()}")
    daemon.stop()
    for line in data.split(b"\n"):
        if re.match(rb"(COREDUMP_(PID|EXE|SIGNAL_NAME|HOSTNAME|FILENAME|SIGNATURE)|_MACHINE_ID)=", line):
            print(f"  record: {line.decode(errors='replace')}")
    p = subprocess.run([os.path.join(TOP, "tools", "coredump-ship-records"), f"--url={args.url}",
                           f"--state={env.base}/shipped", env.store], capture_output=True, text=True, timeout=120)
    print(p.stdout + p.stderr, end="")
    cdtest.check(p.returncode == 0, f"tools/coredump-ship-records failed ({p.returncode})")
    # what it shipped is remembered: a second run ships nothing
    again = subprocess.run([os.path.join(TOP, "tools", "coredump-ship-records"), f"--url={args.url}",
                            f"--state={env.base}/shipped", env.store], capture_output=True, text=True, timeout=120)
    cdtest.check(again.returncode == 0 and " 0 new record(s)" in again.stdout,
                 f"a second run shipped again:\n{again.stdout}{again.stderr}")


def ctl(args, *argv, check=True, show=None):
    """Our coredumpctl on the central journal; prints its output (the lines matching show)."""
    cmd = [COREDUMPCTL, "--no-pager", "-D", args.dir, *argv]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(f"$ coredumpctl -D CENTRAL {' '.join(repr(a) if ' ' in a else a for a in argv)}"
          f"{'' if show is None else '  (some lines)'}")
    for line in (p.stdout + p.stderr).splitlines():
        if show is None or re.search(show, line):
            print(f"  {line}")
    if check and p.returncode != 0:
        fail(f"coredumpctl {' '.join(argv)} exited {p.returncode}")
    return p


def check(args):
    host_mid = open("/etc/machine-id").read().strip()
    guest_mid = args.guest_machine_id
    with open(args.console, "rb") as f:
        m = re.search(rb"central-guest: bugA=(\d+) bugB=(\d+)", f.read())
    if not m:
        fail("the guest did not say which PIDs crashed (t20-central failed before its upload?)")
    pid_a, pid_b = int(m.group(1)), int(m.group(2))
    machines = {guest_mid} | (set() if args.no_host else {host_mid})

    # what arrived: the coredump entries in the central journal, per machine
    ids = subprocess.run(["journalctl", "-D", args.dir, "-q", "--no-pager", "-o", "export",
                          "MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1"], capture_output=True, timeout=120).stdout
    per = {}
    for e in ids.split(b"\n\n"):
        mid = re.search(rb"^_MACHINE_ID=(\w+)$", e, re.M)
        if mid:
            per[mid.group(1).decode()] = per.get(mid.group(1).decode(), 0) + 1
    print(f"coredump entries in the central journal: "
          f"{', '.join(f'{n} of {k}' + (' (guest)' if k == guest_mid else ' (here)' if k == host_mid else '') for k, n in per.items())}")
    out = ctl(args, "list", args.crasher).stdout
    rows = [line for line in out.splitlines()[1:] if line.strip()]
    want = 2 + (0 if args.no_host else 1)
    if len(rows) != want:
        # why an entry that arrived is not listed: coredumpctl's debug log says
        p = subprocess.run([COREDUMPCTL, "--no-pager", "-D", args.dir, "list", args.crasher], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, COREDUMP_SOCKET_LOG_LEVEL="debug"))
        for line in p.stderr.splitlines():
            if "Skipping" in line:
                print(f"  {line}")
        fail(f"{len(rows)} crashes of {args.crasher} listed centrally, expected {want}")

    info = ctl(args, "info", args.crasher, show=r"^ *(PID|Signal|Machine ID|Hostname|Storage):").stdout
    got = set(re.findall(r"^ *Machine ID: (\w+)$", info, re.M))
    if got != machines:
        fail(f"machine ids centrally {sorted(got)}, expected {sorted(machines)}")
    hosts = set(re.findall(r"^ *Hostname: (.+)$", info, re.M))
    if "cdsvm" not in hosts or len(hosts) != len(machines):
        fail(f"hostnames centrally {sorted(hosts)}")

    ctl(args, "list", "--group", args.crasher)
    groups = json.loads(ctl(args, "list", "--group", "--json=short", args.crasher).stdout or "[]")
    for g in groups:
        if "machines" not in g:
            fail(f"--group --json has no \"machines\" key: {sorted(g)} (COREDUMP_SIGNATURE grouping not there yet?)")
    seg = [g for g in groups if g.get("sig") in ("SEGV", "SIGSEGV", 11)]
    abrt = [g for g in groups if g.get("sig") in ("ABRT", "SIGABRT", 6)]
    if len(seg) != 1 or seg[0]["count"] != len(machines) or seg[0]["machines"] != len(machines) or not seg[0]["signature"]:
        fail(f"bug A (SIGSEGV) should be one group, count and machines {len(machines)}: {seg}")
    if len(abrt) != 1 or abrt[0]["count"] != 1 or abrt[0]["machines"] != 1:
        fail(f"bug B (SIGABRT) should be one group of 1 crash on 1 machine: {abrt}")

    # the guest's bug A: its core came inside the entry; gdb reads it with the crasher here
    gdb_lines = r"^(#\d|Program terminated|Core was generated|Cannot|The core|.*not on this machine)"
    dbg = ctl(args, "debug", f"_MACHINE_ID={guest_mid}", f"COREDUMP_PID={pid_a}", "-A", "-batch -ex bt", show=gdb_lines)
    if not re.search(r"\bcds_crash_inner\b", dbg.stdout):
        fail("the debugger's backtrace of the guest's bug A does not name cds_crash_inner")
    # the guest's bug B: its core is a file on the guest
    dbg = ctl(args, "debug", f"_MACHINE_ID={guest_mid}", f"COREDUMP_PID={pid_b}", "-A", "-batch -ex bt", check=False,
              show=gdb_lines)
    if dbg.returncode == 0:
        fail("debug of a core stored on the guest succeeded here")
    said = dbg.stdout + dbg.stderr
    if guest_mid not in said or "cdsvm" not in said:
        fail("debug of a core on the guest does not say on which machine it is (machine id and host)")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("ship")
    s.add_argument("--url", required=True)
    s.add_argument("--crasher", required=True)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--crasher", required=True)
    c.add_argument("--guest-machine-id", required=True)
    c.add_argument("--console", required=True)
    c.add_argument("--no-host", action="store_true")
    args = ap.parse_args()
    ship(args) if args.verb == "ship" else check(args)


if __name__ == "__main__":
    main()
