#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Regenerates the coredumpctl fixture store (root/var/lib/coredump-socket) from records that
coredumpd wrote for real crashes (argument: a storage directory), keeping the fields
coredumpctl shows and fixing what varies between runs (times, PIDs, ids, host) so the expected
outputs in expected/ stay stable. The cores are the committed real core fixture (zstd) and a
plain prefix of it. Run from this directory; then regenerate expected/ with
`meson test ctl-fixtures` after checking the output by eye (see test-ctl-fixtures.py)."""
import glob
import os
import struct
import subprocess
import sys

KEEP = ("COREDUMP_PID", "COREDUMP_UID", "COREDUMP_GID", "COREDUMP_SIGNAL", "COREDUMP_SIGNAL_NAME", "COREDUMP_CODE",
        "COREDUMP_COMM", "COREDUMP_EXE", "COREDUMP_CMDLINE", "COREDUMP_CGROUP", "COREDUMP_RLIMIT", "COREDUMP_TID",
        "COREDUMP_THREAD_NAME", "COREDUMP_DUMPABLE", "COREDUMP_BY_PIDFD", "COREDUMP_PROC_AUXV", "COREDUMP_PROC_LIMITS",
        "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER")
STORE = "root/var/lib/coredump-socket"
BOOT = "8d3a1bcd27d94e6cbb3f6f2aa1c0e7a1"
MACHINE = "5b0a4f4a7a9b4d3c8e1f2a3b4c5d6e7f"
T0 = 1796301477361187

# (pid, uid, signal, name, storage, extra fields)
CRASHES = [
    (4101, 0, 11, "SIGSEGV", "zst", {"COREDUMP_PACKAGE_NAME": "crasher", "COREDUMP_PACKAGE_VERSION": "1.2-3",
                                     "COREDUMP_PACKAGE_JSON": '{"/usr/bin/crasher":{"type":"deb","name":"crasher",'
                                                              '"version":"1.2-3","buildId":"0123456789abcdef0123456789abcdef01234567"},'
                                                              '"/usr/lib/x86_64-linux-gnu/libc.so.6":{"buildId":"fedcba9876543210"}}',
                                     "COREDUMP_UNIT": "crasher.service", "COREDUMP_SLICE": "system.slice"}),
    (4102, 65534, 6, "SIGABRT", "missing", {}),
    (4103, 0, 11, "SIGSEGV", "none", {}),
    (4104, 0, 7, "SIGBUS", "plain-truncated", {"COREDUMP_TRUNCATED": "1"}),
    (4105, 0, 11, "SIGSEGV", "zst", {}),
]
STACK = ("\n\nStack trace of thread {pid}:\n#0  0x000055d1c0a0156b cds_crash_inner (crasher + 0x156b)\n"
         "#1  0x000055d1c0a0158c cds_crash_middle (crasher + 0x158c)\n#2  0x000055d1c0a0159d cds_crash_outer (crasher + 0x159d)\n"
         "#3  0x00007f0e8d4911f5 start_thread (libc.so.6 + 0x891f5)\n")


def parse_export(data):
    out, i = {}, 0
    while i < len(data) and data[i:i + 1] != b"\n":
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k, n = line, struct.unpack_from("<Q", data, nl + 1)[0]
            v, i = data[nl + 9:nl + 9 + n], nl + 9 + n + 1
        out.setdefault(k.decode(), v)
    return out


def export(fields):
    b = b""
    for k, v in fields:
        v = v if isinstance(v, bytes) else v.encode()
        b += (k.encode() + b"\n" + struct.pack("<Q", len(v)) + v + b"\n") if b"\n" in v else (k.encode() + b"=" + v + b"\n")
    return b + b"\n"


def main(src):
    base = parse_export(open(sorted(glob.glob(os.path.join(src, "record.*.export")))[0], "rb").read())
    os.makedirs(STORE, exist_ok=True)
    for f in glob.glob(os.path.join(STORE, "*")):
        os.unlink(f)
    core = subprocess.run(["zstd", "-dc", "../core-segv-x86_64.zst"], capture_output=True, check=True).stdout
    for n, (pid, uid, sig, name, storage, extra) in enumerate(CRASHES):
        ts = T0 + n * 61_500_000
        stem = f"crasher.{uid}.{BOOT}.{pid}.{ts}"
        fields = [(k, base[k]) for k in KEEP if k in base]
        fields = [(k, v) for k, v in fields if k not in ("COREDUMP_PID", "COREDUMP_UID", "COREDUMP_GID", "COREDUMP_SIGNAL",
                                                         "COREDUMP_SIGNAL_NAME", "COREDUMP_TID", "COREDUMP_EXE", "COREDUMP_CMDLINE")]
        fields += [("COREDUMP_PID", str(pid)), ("COREDUMP_UID", str(uid)), ("COREDUMP_GID", str(uid)),
                   ("COREDUMP_SIGNAL", str(sig)), ("COREDUMP_SIGNAL_NAME", name), ("COREDUMP_TID", str(pid)),
                   ("COREDUMP_EXE", "/usr/bin/crasher"), ("COREDUMP_CMDLINE", "/usr/bin/crasher " + name[3:].lower()),
                   ("COREDUMP_TIMESTAMP", str(ts)), ("COREDUMP_HOSTNAME", "fixture-host")]
        fields += list(extra.items())
        if storage == "zst":
            fname = f"core.{stem}.zst"
            subprocess.run(["cp", "../core-segv-x86_64.zst", os.path.join(STORE, fname)], check=True)
        elif storage == "plain-truncated":
            fname = f"core.{stem}"
            open(os.path.join(STORE, fname), "wb").write(core[:65536])
        else:
            fname = f"core.{stem}.zst"
        if storage != "none":
            fields.append(("COREDUMP_FILENAME", "/var/lib/coredump-socket/" + fname))
        msg = f"Process {pid} (crasher) of user {uid} dumped core."
        fields.append(("MESSAGE", msg + (STACK.format(pid=pid) if sig == 11 else "")))
        fields += [("__REALTIME_TIMESTAMP", str(ts)), ("_BOOT_ID", BOOT), ("_MACHINE_ID", MACHINE)]
        open(os.path.join(STORE, f"record.{stem}.export"), "wb").write(export(fields))


if __name__ == "__main__":
    main(sys.argv[1])
