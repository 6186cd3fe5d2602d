#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""coredumpctl over the committed fixture store (test/data/ctl): every output format against
the expected files in test/data/ctl/expected; then the same records imported into a journal
file by systemd-journal-remote and read by systemd's coredumpctl must print the same.

CDS_UPDATE_FIXTURES=1 rewrites the expected files (check the diff by eye before committing)."""
import os
import re
import shutil
import subprocess
import tempfile

from cdtest import BUILD, check, coredumpctl, run_cases, skip, systemd_coredumpctl

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "ctl")
EXPECTED = os.path.join(DATA, "expected")
STORE_IN_ROOT = "var/lib/coredump-socket"
MACHINE_ID = "5b0a4f4a7a9b4d3c8e1f2a3b4c5d6e7f"
JOURNAL_REMOTE = os.path.join(BUILD, "systemd-journal-remote", "lib", "systemd", "systemd-journal-remote")

# name → arguments; every output format and the verbs that read entries
OUTPUTS = {
    "list": ("list",),
    "list-json-short": ("list", "--json=short"),
    "list-json-pretty": ("--json=pretty", "list"),
    "list-no-legend": ("--no-legend", "list"),
    "list-reverse-2": ("list", "-r", "-n", "2"),
    "list-last": ("-1",),
    "list-since": ("list", "--since=2026-12-03 12:39:00", "--until=@1796301670"),
    "list-match-signal": ("list", "COREDUMP_SIGNAL=11"),
    "list-match-uid-or": ("list", "COREDUMP_UID=65534", "COREDUMP_UID=1"),
    "field-exe": ("list", "-F", "COREDUMP_EXE"),
    "field-pid": ("-F", "COREDUMP_PID"),
    "info-all": ("info", "crasher"),
    "info-last": ("info",),
    "info-one": ("info", "4101"),
    "group": ("list", "--group"),
    "group-json": ("list", "--group", "--json=short"),
}
# what systemd's coredumpctl prints identically from the imported journal
SAME_AS_SYSTEMD = ("list", "list-json-short", "list-json-pretty", "list-no-legend", "list-reverse-2", "list-last",
                   "list-since", "list-match-signal", "list-match-uid-or", "field-exe", "field-pid")


def normalize(text, root):
    text = text.replace(root, "ROOT")
    return re.sub(r"\([0-9][^()]* (ago|left)\)|\(now\)", "(RELATIVE)", text)


def fixture_root():
    tmp = tempfile.mkdtemp(prefix="coredumpctl-fixture.")
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(DATA, "root"), root)
    return tmp, root


def ours(root, args):
    """Our coredumpctl on the fixture root: its journal (if one was imported) and its records."""
    return coredumpctl("--root", root, "--storage", os.path.join(root, STORE_IN_ROOT), *args)


def case_outputs():
    tmp, root = fixture_root()
    try:
        update = os.environ.get("CDS_UPDATE_FIXTURES") == "1"
        for name, args in OUTPUTS.items():
            p = ours(root, args)
            check(p.returncode == 0, f"{name}: exit {p.returncode}: {p.stderr.decode()}")
            got = normalize(p.stdout.decode(), root)
            path = os.path.join(EXPECTED, name + ".txt")
            if update:
                os.makedirs(EXPECTED, exist_ok=True)
                with open(path, "w") as f:
                    f.write(got)
                continue
            want = open(path).read()
            check(got == want, f"{name} ({' '.join(args)}) differs from {path}:\n--- got\n{got}\n--- expected\n{want}")
        # dump of the zstd core is the committed core, uncompressed
        out = os.path.join(tmp, "dumped")
        p = ours(root, ("dump", "4105", "-o", out))
        check(p.returncode == 0, f"dump: {p.stderr.decode()}")
        want = subprocess.run(["zstd", "-dc", os.path.join(DATA, "..", "core-segv-x86_64.zst")], capture_output=True,
                              check=True).stdout
        check(open(out, "rb").read() == want, "dump differs from the core")
        p = ours(root, ("dump", "4102", "-o", out))
        check(p.returncode == 1 and b"Cannot access" in p.stderr, f"dump of a missing core: {p.stderr.decode()}")
        p = ours(root, ("dump", "4103", "-o", out))
        check(p.returncode == 1 and b"no core attached" in p.stderr, f"dump without core: {p.stderr.decode()}")
    finally:
        shutil.rmtree(tmp)


def import_records(root):
    """The sidecar records are journal export entries: systemd-journal-remote takes them as is."""
    if not os.access(JOURNAL_REMOTE, os.X_OK):
        skip(f"{JOURNAL_REMOTE} missing (tools/run-tests.sh unpacks it)")
    jdir = os.path.join(root, "var", "log", "journal", MACHINE_ID)
    os.makedirs(jdir)
    store = os.path.join(root, STORE_IN_ROOT)
    # in time order: a journal file lists entries in the order they were written
    names = sorted((f for f in os.listdir(store) if f.startswith("record.")), key=lambda f: int(f.split(".")[5]))
    records = b"".join(open(os.path.join(store, f), "rb").read() for f in names)
    p = subprocess.run([JOURNAL_REMOTE, "-o", os.path.join(jdir, "imported.journal"), "-"], input=records,
                       capture_output=True, timeout=60)
    check(p.returncode == 0, f"systemd-journal-remote refused our records: {p.stderr.decode()}")


def case_systemd():
    """Our records, imported into a journal, read by systemd's coredumpctl: the same output as
    ours from the records; ours from records + that journal merges them (no duplicates)."""
    systemd = systemd_coredumpctl()
    tmp, root = fixture_root()
    try:
        import_records(root)
        for name in SAME_AS_SYSTEMD:
            args = OUTPUTS[name]
            theirs = coredumpctl("--root", root, *args, tool=systemd)
            check(theirs.returncode == 0, f"systemd {name}: {theirs.stderr.decode()}")
            want = open(os.path.join(EXPECTED, name + ".txt")).read()
            got = normalize(theirs.stdout.decode(), root)
            check(got == want, f"systemd's coredumpctl {' '.join(args)} differs:\n--- systemd\n{got}\n--- ours\n{want}")
            merged = ours(root, args)
            check(normalize(merged.stdout.decode(), root) == want, f"journal + records ({name}) not merged:\n"
                  f"{merged.stdout.decode()}")
        for name in ("info-one", "info-all", "info-last"):
            theirs = coredumpctl("--root", root, *OUTPUTS[name], tool=systemd)
            want = open(os.path.join(EXPECTED, name + ".txt")).read()
            want = "".join(l for l in want.splitlines(True) if not l.startswith("           TID: "))
            got = normalize(theirs.stdout.decode(), root)
            check(got == want, f"systemd's info ({name}) differs beyond our TID line:\n{got}\n--- ours\n{want}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    run_cases({"outputs": case_outputs, "systemd": case_systemd})
