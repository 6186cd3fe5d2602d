#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""coredumpctl against journal entries that local users forge (issue 18, finding 8 and the last
item of finding 6): anyone can log an entry with the coredump MESSAGE_ID, so what an entry says is
checked against who logged it (_UID, set by journald) and against the records coredumpd (root)
wrote. Each case failed before the fix. test-coredumpctl.py's 'forged' and 'terminal' cases cover
the simpler forms (an entry pointing out of the store, colours on a terminal)."""
import importlib
import json
import os
import pwd
import re
import shutil
import subprocess
import time

from cdtest import (COREDUMP_MESSAGE_ID, CRASHER, SUID_DUMPABLE, Env, Journal, check, coredumpctl, crash, read_exports,
                    read_file, run_cases, save_sysctl, skip, test_user, wait_until, write_file)

# the helpers of the coredumpctl tests (crash and wait for the record, log an entry as a user, a pty)
ctl = importlib.import_module("test-coredumpctl")

WORKER_USER = "coredump-socket"  # meson's worker-user default, what the test daemon runs workers as
FORGED_PID = 7002


def worker_user():
    try:
        return pwd.getpwnam(WORKER_USER)
    except KeyError:
        skip(f"worker user {WORKER_USER} missing (run test/setup.sh)")


def record_of(env, pid):
    return {r["COREDUMP_PID"]: r for r in read_exports(env, "record")}[str(pid).encode()]


def entry_fields(uid, pid, **more):
    """A coredump entry as a collector writes one, about a crash of uid."""
    fields = {"MESSAGE_ID": COREDUMP_MESSAGE_ID, "COREDUMP_PID": str(pid), "COREDUMP_UID": str(uid),
              "COREDUMP_GID": str(uid), "COREDUMP_SIGNAL": "11", "COREDUMP_COMM": "forged",
              "COREDUMP_EXE": "/usr/bin/forged", "COREDUMP_TIMESTAMP": str(time.time_ns() // 1000),
              "MESSAGE": f"Process {pid} (forged) of user {uid} dumped core."}
    fields.update(more)
    return fields


def log_pairs_as(j, user, pairs):
    """As test-coredumpctl's log_as, with a field given more than once."""
    text = "".join(f"{k}={v}\n" for k, v in pairs)
    subprocess.run(["nsenter", f"--mount={j.ns}", "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                    "--clear-groups", "logger", "--journald"], input=text.encode(), check=True, timeout=30)


def wait_forged(j, n):
    """The n forged entries (COREDUMP_COMM starting with "forged"), once journald has them all."""
    def found():
        es = [e for e in j.entries("MESSAGE_ID=" + COREDUMP_MESSAGE_ID) if e.get("COREDUMP_COMM", b"").startswith(b"forged")]
        return es if len(es) >= n else None
    return wait_until(found, 30, f"{n} forged entries in the journal")


def listed(args, *matches):
    return json.loads(ctl.ok(coredumpctl(*args, "--json=short", "list", *matches), "list"))


def case_forged_filename():
    """A user logs an entry about "their own" crash whose COREDUMP_FILENAME is root's core in the
    store. Root's dump, debug and delete of that PID must not open, output or delete it: the uid,
    PID, time and boot in a stored core's name (coredumpd's, root-only to rename) must be the
    entry's. Before: dump printed root's core, delete deleted it."""
    user = test_user()
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    real = ctl.crash_and_wait(env, 0)
    j.entry(real)
    victim = ctl.core_of(env, real)
    kept = open(victim, "rb").read()
    ctl.log_as(j, user, entry_fields(user.pw_uid, FORGED_PID, COREDUMP_FILENAME=victim))
    wait_forged(j, 1)
    A = (j, "--storage", env.store, "--config", env.conf)
    out = os.path.join(env.base, "stolen.core")
    dumped = coredumpctl(*A, "dump", str(FORGED_PID), "-o", out)
    deleted = coredumpctl(*A, "delete", str(FORGED_PID))
    stolen = os.path.getsize(out) if os.path.exists(out) else 0
    check(os.path.exists(victim) and open(victim, "rb").read() == kept and stolen == 0,
          f"root's core was {'kept' if os.path.exists(victim) else 'DELETED'} (delete exit {deleted.returncode}); "
          f"dump (exit {dumped.returncode}) wrote {stolen} bytes of it to --output")
    ctl.fails(dumped, "dump of the forged entry", "not the core of")
    ctl.fails(deleted, "delete of the forged entry", "not deleting it")
    p = coredumpctl(*A, "dump", str(FORGED_PID))
    check(p.returncode == 1 and not p.stdout.startswith(b"\x7fELF"), f"dump to stdout gave {p.stdout[:16]!r}")
    ctl.fails(coredumpctl(*A, "debug", str(FORGED_PID), "--debugger=true"), "debug of the forged entry", "not the core of")
    rows = {e["pid"]: e for e in listed(A)}
    check(rows[FORGED_PID]["uid"] == user.pw_uid and rows[FORGED_PID]["corefile"] == "error" and
          rows[FORGED_PID]["size"] is None, f"the forged entry's core: {rows[FORGED_PID]}")
    check(rows[real]["corefile"] == "present", f"root's crash: {rows[real]}")
    info = ctl.ok(coredumpctl(*A, "info", str(FORGED_PID)), "info")
    check(f"Storage: {victim} (error)" in info and "Size on Disk" not in info, f"info of the forged entry:\n{info}")
    check(os.path.exists(victim) and open(victim, "rb").read() == kept, "root's core was deleted or changed")
    # root's own crash is still dumped and deleted as before
    ctl.check_dump(A, real, env, "root's own")
    ctl.ok(coredumpctl(*A, "delete", str(real)), "root deleting root's crash")
    check(not os.path.exists(victim), "root's delete of root's crash left the core")
    d.stop()


def case_forged_merge():
    """Root's crash known from its record only (the daemon's entry went to another journal), and
    entries with its PID and crash time logged by the test user (about "their own" uid) and by
    the worker user (as a compromised worker could, about uid 0). list and info show root's crash
    as its record says, once, and the user's entry as the user's. Before: the record was folded
    into a forged entry, so root's crash was shown with the forger's uid or executable."""
    user, worker = test_user(), worker_user()
    env = Env()
    j = Journal(env)
    d = env.start()  # its journal entries do not go to j
    real = ctl.crash_and_wait(env, 0)
    rec = record_of(env, real)
    key = {"COREDUMP_TIMESTAMP": rec["COREDUMP_TIMESTAMP"].decode()}
    ctl.log_as(j, user, entry_fields(user.pw_uid, real, **key))
    ctl.log_as(j, worker, entry_fields(0, real, **key, COREDUMP_EXE="/usr/bin/forged-by-worker",
                                       COREDUMP_COMM="forged-worker", MESSAGE="forged by the worker user"))
    es = wait_forged(j, 2)
    check(all(e["_BOOT_ID"] == rec["_BOOT_ID"] for e in es), "the forged entries are of another boot")
    A = (j, "--storage", env.store, "--config", env.conf)
    rows = sorted((e["pid"], e["uid"], e["exe"], e["corefile"]) for e in listed(A))
    want = sorted([(real, 0, CRASHER, "present"), (real, user.pw_uid, "/usr/bin/forged", "none")])
    check(rows == want, f"listed {rows}, expected {want}")
    info = ctl.ok(coredumpctl(*A, "info", str(real)), "info")
    blocks = info.split("\n\n           PID: ")
    check(len(blocks) == 2, f"info shows {len(blocks)} crashes:\n{info}")
    root_block = [b for b in blocks if "UID: 0 (root)" in b]
    check(len(root_block) == 1 and f"Executable: {CRASHER}" in root_block[0] and
          f"Storage: {ctl.core_of(env, real)} (present)" in root_block[0], f"root's crash in info:\n{info}")
    check("forged-by-worker" not in info and "forged by the worker user" not in info,
          f"the worker user's entry replaced root's record:\n{info}")
    d.stop()


def case_journal_trust():
    """Who may speak of whose crash. A real setuid crash of the test user (a root-only dump, so
    its worker and journal entry are the worker user's) is believed with its record; the worker
    user's entry about a user's crash that no record confirms is not, nor is a user's entry about
    root's crashes, nor one that names two crashing uids. Before: the worker user's entries were
    believed for any COREDUMP_UID, and the two-uid entry was listed among root's crashes; and a
    process running as nobody was believed about nobody's crashes."""
    user, worker = test_user(), worker_user()
    save_sysctl(SUID_DUMPABLE)
    env = Env()
    write_file(SUID_DUMPABLE, "2")
    suid = os.path.join(env.base, "suid-crasher")
    shutil.copy(CRASHER, suid)
    os.chown(suid, 0, 0)
    os.chmod(suid, 0o4755)
    j = Journal(env)
    d = env.start(journal=j)
    spid = ctl.crash_and_wait(env, 0, user=user, exe=suid)
    check(j.entry(spid)["_UID"] == str(worker.pw_uid).encode(), "the setuid crash's entry is not the worker user's")
    root = ctl.crash_and_wait(env, 1)
    j.entry(root)
    root_ts = record_of(env, root)["COREDUMP_TIMESTAMP"].decode()
    # the user's own crash, and root's too: shown as the first, found by a match on the second (the
    # first in the user's journal file, so journald lists its uid first)
    log_pairs_as(j, user, [*entry_fields(user.pw_uid, 7103).items(), ("COREDUMP_UID", "0")])
    wait_forged(j, 1)
    ctl.log_as(j, user, entry_fields(0, 7101))  # a user claiming a crash of root
    ctl.log_as(j, user, entry_fields(0, root, COREDUMP_TIMESTAMP=root_ts))  # ... root's very crash
    ctl.log_as(j, worker, entry_fields(user.pw_uid, 7102))  # the worker user, about a user's crash
    # any process running as nobody (or a recycled DynamicUser= uid), about "its own" crash: those
    # crashes are always the worker user's to log
    nobody = pwd.getpwnam("nobody")
    ctl.log_as(j, nobody, entry_fields(nobody.pw_uid, 7104))
    wait_forged(j, 5)
    A = (j, "--storage", env.store, "--config", env.conf)
    rows = sorted((e["pid"], e["uid"], e["exe"]) for e in listed(A))
    want = sorted([(spid, user.pw_uid, suid), (root, 0, CRASHER)])
    check(rows == want, f"listed {rows}, expected {want}")
    rows = sorted((e["pid"], e["uid"]) for e in listed(A, "COREDUMP_UID=0"))
    check(rows == [(root, 0)], f"root's crashes: listed {rows}")
    # the journal alone: nothing confirms the worker user's entry about the user's setuid crash
    rows = sorted((e["pid"], e["uid"]) for e in listed((j, "--config", env.conf, "--storage", os.path.join(env.base, "none"))))
    check(rows == [(root, 0)], f"journal only: listed {rows}")
    d.stop()


def case_escapes():
    """A crash of a program whose name carries ESC [ 2 J, a C1 CSI, a right-to-left override
    (U+202E, which makes a terminal show the columns after it in reverse) and a zero width space,
    with an OSC sequence among its arguments: list, list --group, info and dump's header show them
    escaped (\\x1b..., \\xe2\\x80\\xae), the stack trace keeps its lines, and no control or format
    character reaches the output, from the journal or the records, nor the daemon's log; -F escapes
    on a terminal only; JSON carries the text itself, escaped the JSON way. Before: the raw
    sequences were printed (the format characters until the third security review)."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    exe = os.path.join(env.base.encode(), b"cr\x1b[2J\xc2\x9bx\xe2\x80\xae\xe2\x80\x8by")
    shutil.copy(CRASHER, exe)
    os.chmod(exe, 0o755)
    osc = "\x1b]0;pwned\x07"
    pid, _ = crash("segv", 1, osc, exe=exe)
    env.wait_cores(1)
    wait_until(lambda: any(r.get("COREDUMP_PID") == str(pid).encode() for r in read_exports(env, "record")), 20,
               "the record")
    j.entry(pid)
    shown_exe = os.path.join(env.base, "cr\\x1b[2J\\xc2\\x9bx\\xe2\\x80\\xae\\xe2\\x80\\x8by").encode()
    raws = (b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae", b"\xe2\x80\x8b")
    for src in ((j, "--config", env.conf), ("--config", env.conf, *ctl.no_journal(env))):
        for args in (("list",), ("list", "--group"), ("info", str(pid))):
            p = coredumpctl(*src, *args)
            ctl.ok(p, f"{args}")
            for raw in raws:
                check(raw not in p.stdout and raw not in p.stderr, f"{src[0]} {args}: raw {raw!r} in\n{p.stdout!r}")
            check(shown_exe in p.stdout, f"{src[0]} {args}: the escaped name is not shown:\n{p.stdout.decode()}")
        info = coredumpctl(*src, "info", str(pid)).stdout.decode()
        check("\\x1b]0;pwned\\x07" in info, f"the command line is not shown escaped:\n{info}")
        check(re.search(rf"of user 0 dumped core\.\n {{16}}\n(.*\n)* {{16}}Stack trace of thread {pid}:\n {{16}}#0 ", info),
              f"the stack trace lost its lines:\n{info}")
        p = coredumpctl(*src, "dump", str(pid), "-o", os.path.join(env.base, "x.core"))  # the header on stdout
        check(p.returncode == 0 and b"\x1b" not in p.stdout + p.stderr and shown_exe in p.stdout, f"dump's header:\n{p.stdout!r}")
        p = coredumpctl(*src, "dump", str(pid))  # the header on stderr
        check(p.returncode == 0 and b"\x1b" not in p.stderr and shown_exe in p.stderr, f"dump's header:\n{p.stderr!r}")
        p = coredumpctl(*src, "list", "--json=short")
        check(b"\x1b" not in p.stdout and b"\x07" not in p.stdout, f"raw control bytes in JSON: {p.stdout!r}")
        check(json.loads(p.stdout)[0]["exe"] == exe.decode(), f"JSON does not carry the name itself: {p.stdout!r}")
        p = coredumpctl(*src, "list", "-F", "COREDUMP_CMDLINE")
        check(osc.encode() in p.stdout, f"-F into a pipe must print the value itself: {p.stdout!r}")
        rc, text = ctl.on_pty([*src, "--no-pager", "list", "-F", "COREDUMP_CMDLINE"], env={"NO_COLOR": "1"})
        check(rc == 0 and not any(c in text for c in "\x1b\x07\x9b") and "\\x1b]0;pwned\\x07" in text,
              f"-F on a terminal: {text!r}")
    log = d.log_text().encode()
    check(f"PID {pid}".encode() in log and not any(raw in log for raw in raws[2:]),
          f"the daemon's log shows the crash's names raw:\n{log!r}")
    d.stop()


def case_filename_outside_store():
    """Third review, finding 1: a user logs an entry about their own crash whose COREDUMP_FILENAME
    is a file in their home bearing that crash's very name (their uid, this boot, the PID and
    time the entry gives), a symlink to a file only root may read. Root's dump, debug and info
    read only files in a store the configuration names, opened there once without following a
    symlink. Before: dump copied the root-only file to --output."""
    user = test_user()
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    secret = os.path.join(env.base, "secret")
    write_file(secret, "root's secret\n")
    os.chmod(secret, 0o600)
    home = os.path.join(env.base, "home")
    os.mkdir(home)
    os.chown(home, user.pw_uid, user.pw_gid)
    boot = read_file("/proc/sys/kernel/random/boot_id").replace("-", "")
    ts = time.time_ns() // 1000
    link = os.path.join(home, f"core.x.{user.pw_uid}.{boot}.{FORGED_PID}.{ts}")
    subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "ln", "-s", secret,
                    link], check=True)
    ctl.log_as(j, user, entry_fields(user.pw_uid, FORGED_PID, COREDUMP_FILENAME=link, COREDUMP_TIMESTAMP=str(ts)))
    wait_forged(j, 1)
    A = (j, "--config", env.conf)
    out = os.path.join(env.base, "stolen.core")
    p = coredumpctl(*A, "dump", str(FORGED_PID), "-o", out)
    stolen = open(out, "rb").read() if os.path.exists(out) else b""
    check(b"secret" not in stolen and b"secret" not in p.stdout, f"dump (exit {p.returncode}) gave out the root-only "
          f"file: {stolen!r}")
    ctl.fails(p, "dump of a file outside the store", "not in a store the configuration names")
    p = coredumpctl(*A, "dump", str(FORGED_PID))
    check(p.returncode == 1 and b"secret" not in p.stdout, f"dump to stdout gave {p.stdout[:32]!r}")
    ctl.fails(coredumpctl(*A, "debug", str(FORGED_PID), "--debugger=cat"), "debug of a file outside the store",
              "not in a store the configuration names")
    info = ctl.ok(coredumpctl(*A, "info", str(FORGED_PID)), "info")
    check(f"Storage: {link} (error)" in info and "Size on Disk" not in info, f"info of the entry:\n{info}")
    rows = {e["pid"]: e for e in listed(A)}
    check(rows[FORGED_PID]["corefile"] == "error" and rows[FORGED_PID]["size"] is None, f"listed: {rows}")
    # the user's own real crash is theirs to dump, from the store
    exe = ctl.user_exe(env)
    mine = ctl.crash_and_wait(env, 0, user=user, exe=exe)
    j.entry(mine)
    ctl.check_dump(A, mine, env, "the user's own")
    d.stop()


def foreign_journal(env, directory, entries):
    """A journal file of these entries (export format) in directory, written by
    systemd-journal-remote: as a container's journald, a journal-upload client or a copy would
    leave one, not this machine's journald."""
    remote = next((p for p in ctl.JOURNAL_REMOTE_PATHS if os.access(p, os.X_OK)), None)
    if not remote:
        skip(f"no systemd-journal-remote in {ctl.JOURNAL_REMOTE_PATHS}")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "forged.journal")
    p = subprocess.run([remote, "--split-mode=none", "-o", path, "-"], input=entries, capture_output=True, timeout=60)
    check(p.returncode == 0, f"systemd-journal-remote refused the entries: {p.stderr.decode()}")
    return path


def case_foreign_journal():
    """Third review, finding 3: a journal file the local journald did not write (a container's
    own journal linked under /var/log/journal and read with --all; -D; --file) holds two entries
    about root's real crash, with its uid, PID, time, boot and core file and this machine's id, one
    "logged by root" (_UID=0), one by no local process (no _UID), naming another executable; beside
    it a file that is no journal and a FIFO named like one (neither hides the rest, nor blocks),
    and another such entry in a journal copied to the top of /var/log/journal (read with --all
    only). Root's list shows root's crash as the local journal and the record say, and the forged
    entries apart with their core "remote"; dump, debug and delete through them refuse and leave
    the core.
    Before: the forged entry was believed as local root's and merged over the record, and dump and
    delete acted on root's core through it."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    real = ctl.crash_and_wait(env, 0)
    j.entry(real)
    d.stop()
    core = ctl.core_of(env, real)
    kept = open(core, "rb").read()
    rec = record_of(env, real)
    base = {k: v for k, v in rec.items()
            if not k.startswith("__") or k in ("__REALTIME_TIMESTAMP", "__MONOTONIC_TIMESTAMP")}
    local_id = read_file("/etc/machine-id")
    data = ctl.export_with(base, _UID="0", _MACHINE_ID=local_id, COREDUMP_EXE="/usr/bin/forged-as-root",
                           MESSAGE="forged by a container's root") + \
        ctl.export_with({k: v for k, v in base.items() if k != "_UID"}, _MACHINE_ID=local_id,
                        COREDUMP_EXE="/usr/bin/forged-no-uid", MESSAGE="forged without _UID")
    ct_dir = os.path.join(j.root, ctl.OTHER_MACHINE)  # a container's journal, as nspawn links one there
    path = foreign_journal(env, ct_dir, data)
    # beside it what a container's root may put there too: a file that is no journal, a FIFO
    # named like one; and a journal copied to the top of /var/log/journal, read with --all only
    write_file(os.path.join(ct_dir, "junk.journal"), "not a journal")
    os.mkfifo(os.path.join(ct_dir, "fifo.journal"))
    top = os.path.join(env.base, "top")
    shutil.move(foreign_journal(env, top, ctl.export_with(base, _UID="0", _MACHINE_ID=local_id,
                                                          COREDUMP_EXE="/usr/bin/forged-top")),
                os.path.join(j.root, "top.journal"))
    rows = sorted((e["exe"], e["corefile"]) for e in listed((j, "--config", env.conf)) if e["pid"] == real)
    check(rows == [(CRASHER, "present")], f"the local journal alone lists {rows}")
    A = (j, "--all", "--config", env.conf)
    rows = sorted((e["exe"], e["corefile"]) for e in listed(A) if e["pid"] == real)
    want = sorted([(CRASHER, "present"), ("/usr/bin/forged-as-root", "remote"), ("/usr/bin/forged-no-uid", "remote"),
                   ("/usr/bin/forged-top", "remote")])
    check(rows == want, f"--all lists {rows}, expected {want}")
    info = ctl.ok(coredumpctl(*A, "info", f"COREDUMP_EXE={CRASHER}"), "info of root's crash")
    check(f"Storage: {core} (present)" in info and "forged" not in info, f"root's crash as --all shows it:\n{info}")
    out = os.path.join(env.base, "through-forged.core")
    for exe in ("/usr/bin/forged-as-root", "/usr/bin/forged-no-uid"):
        for src in (A, ("-D", ct_dir, "--config", env.conf), ("--file", path, "--config", env.conf)):
            what = f"{exe} read with {src[1] if src[0] is j else src[0]}"
            ctl.fails(coredumpctl(*src, "dump", f"COREDUMP_EXE={exe}", "-o", out), f"dump of {what}",
                      "the local journald did not write")
            ctl.fails(coredumpctl(*src, "debug", f"COREDUMP_EXE={exe}", "--debugger=true"), f"debug of {what}",
                      "the local journald did not write")
            ctl.fails(coredumpctl(*src, "delete", f"COREDUMP_EXE={exe}"), f"delete of {what}", "not deleting")
            check(os.path.exists(core) and open(core, "rb").read() == kept, f"root's core changed or gone after {what}")
    check(not os.path.exists(out) or os.path.getsize(out) == 0, "a dump through a forged entry wrote the core")
    # root's crash through the local journal: dumped as before
    ctl.check_dump(A, real, env, "root's own")


if __name__ == "__main__":
    run_cases({"forged_filename": case_forged_filename, "forged_merge": case_forged_merge,
               "journal_trust": case_journal_trust, "escapes": case_escapes,
               "filename_outside_store": case_filename_outside_store, "foreign_journal": case_foreign_journal})
