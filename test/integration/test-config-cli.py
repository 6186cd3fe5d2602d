#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""coredumpd --check-config: exit 0 and the effective values for a valid configuration,
exit 1 and file:line for every bad value, drop-ins applied in order and listed.
Runs coredumpd --check-config only: no crash, no core_pattern."""
import os
import re
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
                          ("TimeoutSec=-1", "TimeoutSec"), ("Storage=disk", "Storage"),
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


def case_dropins():
    """The files applied are listed first, as "# path" comments, in the order applied (a
    /dev/null drop-in is masked: not listed); "Key=" resets a key to its default."""
    with tempfile.TemporaryDirectory() as d:
        conf, dropins = os.path.join(d, "coredump.conf"), os.path.join(d, "coredump.conf.d")
        os.mkdir(dropins)
        with open(conf, "w") as f:
            f.write("[Coredump]\nStorage=journal\nSpareWorkers=5\nMaxParallel=4\n")
        files = {"20-b.conf": "[Coredump]\nSpareWorkers=\nMaxParallel=8\n",
                 "10-a.conf": "[Coredump]\nStorage=\n",
                 ".40-hidden.conf": "[Coredump]\nMaxParallel=2\n",
                 "50-notes.txt": "not a drop-in\n"}
        for name, text in files.items():
            with open(os.path.join(dropins, name), "w") as f:
                f.write(text)
        os.symlink("/dev/null", os.path.join(dropins, "30-masked.conf"))

        p = check_config(conf, dropins)
        check(p.returncode == 0, f"valid configuration refused:\n{p.stderr}")
        listed = [l[2:] for l in p.stdout.splitlines() if l.startswith("# ")]
        want = [conf, os.path.join(dropins, "10-a.conf"), os.path.join(dropins, "20-b.conf")]
        check(listed == want, f"files listed {listed}, expected {want}:\n{p.stdout}")
        check(p.stdout.startswith("".join(f"# {f}\n" for f in want) + "Mode="),
              f"the file list is not a block before the values:\n{p.stdout}")
        check("\nStorage=external\n" in p.stdout, f"Storage= did not reset:\n{p.stdout}")
        check("\nSpareWorkers=2\n" in p.stdout, f"SpareWorkers= did not reset:\n{p.stdout}")
        check("\nMaxParallel=8\n" in p.stdout, f"20-b.conf not applied:\n{p.stdout}")
        check(re.search(r"^Pattern=", p.stdout, re.M), f"no Pattern= line:\n{p.stdout}")
        # every other line is still KEY=value
        bad = [l for l in p.stdout.splitlines() if not l.startswith("# ") and "=" not in l]
        check(not bad, f"lines that are neither a file nor KEY=value: {bad}")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
