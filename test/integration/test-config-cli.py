#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""coredumpd --check-config: exit 0 and the effective values for a valid configuration,
exit 1 and file:line for every bad value, drop-ins applied in order."""
import os
import subprocess
import tempfile

from cdtest import COREDUMPD, check, run_cases


def check_config(conf, confdir):
    return subprocess.run([COREDUMPD, "--check-config", f"--config={conf}", f"--config-dir={confdir}"],
                          capture_output=True, text=True, timeout=30)


def case_check_config():
    with tempfile.TemporaryDirectory() as d:
        conf, dropins = os.path.join(d, "coredump.conf"), os.path.join(d, "coredump.conf.d")
        os.mkdir(dropins)
        with open(conf, "w") as f:
            f.write("[Coredump]\nCompress=lz4\nExternalSizeMax=1G\nMysteryKey=1\n")
        with open(os.path.join(dropins, "50-local.conf"), "w") as f:
            f.write("[Coredump]\n# comment\nCompress=zstd\nCompressLevel=1\n")
        p = check_config(conf, dropins)
        check(p.returncode == 0, f"valid configuration refused:\n{p.stderr}")
        check("Compress=zstd\nCompressLevel=1\n" in p.stdout, f"drop-in not applied:\n{p.stdout}")
        check(f"ExternalSizeMax={1 << 30}\n" in p.stdout, f"main file not applied:\n{p.stdout}")
        check(f"{conf}:4: Unknown key 'MysteryKey'" in p.stderr, f"unknown key not warned with file:line:\n{p.stderr}")

        bad = os.path.join(dropins, "90-bad.conf")
        for line, key in (("MaxUse=ninety", "MaxUse"), ("SpareWorkers=4294967296", "SpareWorkers"),
                          ("TimeoutSec=-1", "TimeoutSec"), ("Storage=", "Storage"),
                          ("ProcessSizeMax=18446744073709551616", "ProcessSizeMax")):
            with open(bad, "w") as f:
                f.write(f"[Coredump]\n\n{line}\n")
            p = check_config(conf, dropins)
            check(p.returncode == 1, f"{line}: exit {p.returncode}")
            check(f"{bad}:3: Invalid value for {key}=" in p.stderr, f"{line}: no file:line error:\n{p.stderr}")
        with open(bad, "w") as f:
            f.write("[Coredump]\nStorage=" + "x" * 5000 + "\n")
        p = check_config(conf, dropins)
        check(p.returncode == 1 and f"{bad}:2: Line too long" in p.stderr, f"long line: {p.stderr}")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
