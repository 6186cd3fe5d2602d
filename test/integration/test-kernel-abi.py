#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The live kernel speaks the protocol our headers describe: a raw server answers real crashes
with every kind of malformed ack and checks the 4-byte mark against src/shared/kernel-abi.h,
and that a refused ack means no dump (and nothing hangs)."""
import os
import re
import socket
import struct

from cdtest import CORE_PATTERN, CRASHER, Env, check, require_socket, run_cases, write_file

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL, USERSPACE, REJECT, WAIT = 1, 2, 4, 8


def header_marks():
    with open(os.path.join(HERE, "..", "..", "src", "shared", "kernel-abi.h")) as f:
        text = f.read()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"COREDUMP_MARK_(\w+) = (\d+)", text)}


def case_marks():
    marks = header_marks()
    check(set(marks) == {"REQACK", "MINSIZE", "MAXSIZE", "UNSUPPORTED", "CONFLICTING"}, f"header marks {marks}")
    require_socket("the case speaks the @@ protocol with the kernel")
    env = Env()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(env.sock)
    srv.listen(8)
    srv.settimeout(20)
    write_file(CORE_PATTERN, "@@" + env.sock)
    acks = [
        ("REQACK", struct.pack("<IIQ", 16, 0, KERNEL | WAIT), True),
        ("MINSIZE", struct.pack("<IIQ", 8, 0, KERNEL | WAIT), False),
        ("MAXSIZE", struct.pack("<IIQ", 32, 0, KERNEL | WAIT) + bytes(16), False),
        ("UNSUPPORTED", struct.pack("<IIQ", 16, 0, KERNEL | 1 << 9), False),
        ("UNSUPPORTED", struct.pack("<IIQ", 16, 1, KERNEL), False),  # spare must be 0
        ("CONFLICTING", struct.pack("<IIQ", 16, 0, KERNEL | REJECT), False),
        ("CONFLICTING", struct.pack("<IIQ", 16, 0, WAIT), False),  # no action at all
        ("REQACK", struct.pack("<IIQ", 16, 0, REJECT), False),  # a valid refusal
    ]
    for expected, ack, dumped in acks:
        pid = os.posix_spawn(CRASHER, [CRASHER, "segv"], os.environ)
        conn, _ = srv.accept()
        conn.settimeout(10)
        size, size_ack, mask = struct.unpack("<IIQ", conn.recv(16, socket.MSG_WAITALL))
        check(size == 16 and size_ack >= 16 and mask & KERNEL, f"request {size} {size_ack} {mask:#x}")
        conn.sendall(ack)
        mark = conn.recv(4, socket.MSG_WAITALL)
        check(len(mark) == 4, f"mark of {len(mark)} bytes")  # 4, whatever the uapi comment says
        got = struct.unpack("<I", mark)[0]
        check(got == marks[expected], f"ack {ack[:16].hex()}: mark {got}, expected {expected}={marks[expected]}")
        conn.close()
        _, status = os.waitpid(pid, 0)
        check(os.WCOREDUMP(status) == dumped, f"ack {ack[:16].hex()}: WCOREDUMP={os.WCOREDUMP(status)}")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
