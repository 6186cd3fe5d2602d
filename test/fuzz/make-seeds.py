#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the seed corpora of the fuzz targets (test/fuzz/<target>/seed-*): small valid inputs
from the test data, plus a few edge cases. Inputs libFuzzer found worth keeping are added beside
them as they are (crash-*/min-* files are regressions: keep them)."""
import os
import struct
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
PROTO_MAGIC, MSG_RESULT = 0x43445331, 3
RESULT_SIZE = 8 + 4 + 4 + 8 * 3 + 4 * 3 + 4 * 3 + 4 + 17 + 3 + 4 + 4


def put(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, "seed-" + name), "wb") as f:
        f.write(data)


def record(fields):
    """Our serialised record (binary export form)."""
    out = b""
    for k, v in fields:
        out += k.encode() + b"\n" + struct.pack("<Q", len(v)) + v + b"\n"
    return out


def core_seeds():
    core = subprocess.run(["zstd", "-q", "-d", "-c", os.path.join(DATA, "core-segv-x86_64.zst")],
                          capture_output=True, check=True).stdout
    put("fuzz-core", "head-64k", b"\x00" + core[:64 << 10])  # ELF, program headers, the notes
    put("fuzz-core", "head-64k-chunks", b"\x03" + core[:64 << 10])
    put("fuzz-core", "ehdr-only", b"\x00" + core[:64])
    put("fuzz-core", "empty-notes", b"\x01" + core[:64] + b"\x00" * 56)


def config_seeds():
    with open(os.path.join(HERE, "..", "..", "units", "coredump.conf"), "rb") as f:
        put("fuzz-config", "shipped", f.read().replace(b"\n#", b"\n"))
    put("fuzz-config", "limits", b"[Coredump]\nRateLimitBurst=0\nRateLimitIntervalSec=5min\nMaxAgeSec=2w\n"
        b"MaxUse=1G\nKeepFree=15%\nMaxParallel=256\nTimeoutSec=1d\n")
    put("fuzz-config", "errors", b"[Coredump\nStorage=cloud\n[Other]\nx=y\n[Coredump]\nNoEquals\n"
        b"Directory=/a/../b\nTimeoutSec=5 fortnights\nProcessSizeMax=99999999999999999999\n")


def request_seeds():
    req = struct.pack("<IIQ", 16, 16, 0xf)
    put("fuzz-request", "v0", req + struct.pack("<I", 0))
    put("fuzz-request", "larger", struct.pack("<IIQQ", 24, 16, 0xf, 0) + struct.pack("<I", 3))
    put("fuzz-request", "elf", b"\x7fELF" + b"\x02" * 20)
    put("fuzz-request", "no-kernel", struct.pack("<IIQ", 16, 16, 0x2) + struct.pack("<I", 1))


def worker_msg_seeds():
    res = struct.pack("<IIiIQQQIIIiiiI17s3sII", PROTO_MAGIC, MSG_RESULT, 0, 0, 4096, 1024, 4096, 1, 1, 1, 11, 1,
                      1234, 2, b"crasher", b"", 900, 0)
    assert len(res) == RESULT_SIZE, len(res)
    stack = b"Stack trace of thread 1234:\n#0  0x0000000000401136 crash (crasher + 0x1136)\n"
    put("fuzz-worker-msg", "analysis", res + record([("_CDS_STACK_TRACE", stack),
                                                    ("COREDUMP_PACKAGE_NAME", b"crasher"),
                                                    ("COREDUMP_PACKAGE_VERSION", b"1.0"),
                                                    ("COREDUMP_PACKAGE_JSON", b'{"/x":{"buildId":"ab"}}')]))
    put("fuzz-worker-msg", "forbidden-field", res + record([("COREDUMP_PID", b"1")]))
    put("fuzz-worker-msg", "empty", res)


def export_seeds():
    d = os.path.join(DATA, "ctl", "root", "var", "lib", "coredump-socket")
    for n in sorted(os.listdir(d)):
        if n.startswith("record."):
            with open(os.path.join(d, n), "rb") as f:
                put("fuzz-export", n.split(".")[4], f.read())
    put("fuzz-export", "binary-field", b"MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1\nCOREDUMP_PID=1\nMESSAGE\n"
        + struct.pack("<Q", 3) + b"a\nb\n\n")


SIGNATURE_TRACE = b"""Process 42 (crasher) of user 0 dumped core.

Module /usr/bin/crasher with build-id 1111111111111111111111111111111111111111
Module /usr/lib/x86_64-linux-gnu/libc.so.6 from deb glibc-2.36
Module /opt/lib/libnoid.so without build-id.

Stack trace of thread 42:
#0  0x000055d0c0de1139 inner (crasher + 0x1139)
#1  0x000055d0c0de1150 n/a (crasher + 0x1150)
#2  0x00007f3a0102724a __libc_start_call_main (libc.so.6 + 0x2724a)
#3  0x0000000000000000 n/a (n/a + 0x0)
#4  0x00007f00aa000042 weird(int) (x) (libnoid.so + 0x42)
#5  0x000055d0c0de9999 main (crasher + 0x9999)
"""


def signature_seeds():
    """Signal byte, trace NUL package JSON NUL exe (fuzz-signature.c)."""
    json = (b'{"/usr/bin/crasher":{"buildId":"1111111111111111111111111111111111111111"},'
            b'"/usr/lib/x86_64-linux-gnu/libc.so.6":{"buildId":"2222222222222222222222222222222222222222","type":"deb"}}')
    put("fuzz-signature", "trace", b"\x0b" + SIGNATURE_TRACE + b"\0" + json + b"\0/usr/bin/crasher")
    put("fuzz-signature", "no-json", b"\x06" + SIGNATURE_TRACE)
    quotes = b'"' * 20000  # once quadratic in the JSON lookup: a slow input stays in the corpus
    put("fuzz-signature", "quotes", b"\x0bModule /" + quotes + b" from deb x-1\n\nStack trace of thread 1:\n#0  0x1 f ("
        + quotes + b" + 0x1)\n\0{" + quotes + b"\0/x")
    put("fuzz-signature", "hostile", b"\x00Module \nModule  with build-id \nStack trace of thread 1:\n"
        b"#0  0x1 f ( + 0x1)\n#1 (\n#2  + 0x)\n\0\"\0")


core_seeds()
config_seeds()
request_seeds()
worker_msg_seeds()
export_seeds()
signature_seeds()
