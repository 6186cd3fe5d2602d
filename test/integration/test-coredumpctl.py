#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Our coredumpctl against real crashes recorded by our daemon: over a real journald's journal,
over the records beside the cores alone, and over a mix; compared with systemd's coredumpctl
where both read the same journal."""
import json
import os
import pty
import pwd
import re
import shutil
import signal
import subprocess

from cdtest import (COREDUMP_MESSAGE_ID, CRASHER, Env, Journal, check, coredumpctl, crash, ctl_command, elf_core_info,
                    read_exports, run_cases, systemd_coredumpctl, test_user, USER_PYTHON, wait_until)

LIST_KEYS = {"time", "pid", "uid", "gid", "sig", "corefile", "exe", "size"}


def ok(p, what):
    check(p.returncode == 0, f"{what}: exit {p.returncode}\nstdout: {p.stdout.decode(errors='replace')}\n"
                             f"stderr: {p.stderr.decode(errors='replace')}")
    return p.stdout.decode()


def fails(p, what, message):
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1, f"{what}: exit {p.returncode}, expected 1\nstderr: {err}")
    check(message in err, f"{what}: stderr lacks {message!r}:\n{err}")


def rows(text):
    return [l for l in text.splitlines()[1:] if l.strip()]


def user_exe(env):
    """A copy of the crasher the test user can run (the build tree may be out of their reach)."""
    exe = os.path.join(env.base, "crasher")
    if not os.path.exists(exe):
        shutil.copy(CRASHER, exe)
        os.chmod(exe, 0o755)
    return exe


def crash_and_wait(env, n_before, mode="segv", user=None, exe=CRASHER):
    """A crash, once its core (the n_before + 1-th) and its record are in the store."""
    pid, _ = crash(mode, user=user, exe=exe)
    env.wait_cores(n_before + 1)
    wait_until(lambda: any(r.get("COREDUMP_PID") == str(pid).encode() for r in read_exports(env, "record")), 20,
               lambda: f"the record of PID {pid} beside its core; the store has {sorted(os.listdir(env.store))}:\n"
               + "\n".join(d.log_text() for d in env.daemons))
    return pid


def core_of(env, pid):
    hits = [c for c in env.cores() if f".{pid}." in os.path.basename(c)]
    check(len(hits) == 1, f"cores for PID {pid}: {hits}")
    return hits[0]


def without(text, *labels):
    return "\n".join(l for l in text.splitlines() if not any(l.lstrip().startswith(x + ":") for x in labels))


def check_dump(args, pid, env, what):
    out = os.path.join(env.base, f"dump-{pid}-{what}.core")
    ok(coredumpctl(*args, "dump", str(pid), "-o", out), f"dump ({what})")
    info = elf_core_info(out)
    check(info["type"] == 4 and info["pids"][0] == pid, f"dump ({what}) is not PID {pid}'s core: {info}")
    return out



def no_journal(env):
    """An empty journal directory (-D; with it records are read from --storage= only): a case
    without journald that lists every crash must not see the machine's own journal, which may
    hold crashes of its own."""
    path = os.path.join(env.base, "no-journal")
    os.makedirs(path, exist_ok=True)
    return ("-D", path, "--storage", env.store)

def case_journal():
    """list/info/-F/JSON/dump over a journal our daemon wrote: byte for byte what systemd's
    coredumpctl prints for the same journal (info: plus our TID line)."""
    systemd = systemd_coredumpctl()
    user = test_user()
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    exe = user_exe(env)
    pids = [crash_and_wait(env, 0, "segv", exe=exe), crash_and_wait(env, 1, "abort", exe=exe),
            crash_and_wait(env, 2, "segv", user=user, exe=exe)]
    for pid in pids:  # the entry is written after the record
        j.entry(pid)
    # the journal as the local journald's (ctl_command()); ours finds the store through --storage=,
    # which also merges the records of the same crashes
    D, O = (j,), (j, "--storage", env.store)
    for args in (("list",), ("list", "--json=short"), ("--json=pretty", "list"), ("list", "--no-legend"),
                 ("list", "-r", "-n", "2"), ("-1",), ("list", "-F", "COREDUMP_EXE"), ("list", exe),
                 ("list", "crasher"), ("list", str(pids[1])), ("list", "COREDUMP_UID=" + str(user.pw_uid))):
        ours, theirs = coredumpctl(*O, *args), coredumpctl(*D, *args, tool=systemd)
        check(ours.stdout == theirs.stdout and ours.returncode == theirs.returncode,
              f"{args}: ours (exit {ours.returncode}):\n{ours.stdout.decode()}\n"
              f"systemd's (exit {theirs.returncode}):\n{theirs.stdout.decode()}")
    listed = ok(coredumpctl(*O, "list"), "list")
    check(len(rows(listed)) == 3 and all(" present " in r for r in rows(listed)), f"list:\n{listed}")
    data = json.loads(ok(coredumpctl(*O, "list", "--json=short"), "json"))
    check([e["pid"] for e in data] == pids and all(set(e) == LIST_KEYS for e in data), f"json: {data}")
    for e in data:
        check(e["size"] == os.path.getsize(core_of(env, e["pid"])) and e["corefile"] == "present", f"json row {e}")
    check(data[1]["sig"] == 6 and data[2]["uid"] == user.pw_uid, f"json: {data}")
    check(ok(coredumpctl(*O, "list", "-F", "COREDUMP_EXE"), "-F").splitlines() == [exe] * 3, "-F COREDUMP_EXE")
    for pid in pids:
        ours = ok(coredumpctl(*O, "info", str(pid)), "info")
        theirs = ok(coredumpctl(*D, "info", str(pid), tool=systemd), "systemd info")
        # ours adds TID, and Debug Info where frames have no name (DEBUGINFOD_URLS would look them up)
        check(without(ours, "TID", "Timestamp", "Debug Info") == without(theirs, "Timestamp"),
              f"info:\n{ours}\nsystemd's:\n{theirs}")
        check(f"TID: {pid}" in ours and f"Storage: {core_of(env, pid)} (present)" in ours, f"info:\n{ours}")
        a = check_dump(O, pid, env, "ours")
        b = os.path.join(env.base, f"dump-{pid}-systemd.core")
        ok(coredumpctl(*D, "dump", str(pid), "-o", b, tool=systemd), "systemd dump")
        check(open(a, "rb").read() == open(b, "rb").read(), "dumps differ from systemd's")
    d.stop()


def case_records():
    """Without any journal: list/info/dump/debug from the records beside the cores, found
    through Directory= of the configuration."""
    env = Env()
    d = env.start()
    pids = [crash_and_wait(env, 0, "segv"), crash_and_wait(env, 1, "abort")]
    C = ("--config", env.conf)  # records found through Directory= of the config; listed by PID
    listed = ok(coredumpctl(*C, "list", *map(str, pids)), "list")
    check(len(rows(listed)) == 2 and all(" present " in r for r in rows(listed)), f"list:\n{listed}")
    data = json.loads(ok(coredumpctl(*C, "--json=short", "list", *map(str, pids)), "json"))
    check([e["pid"] for e in data] == pids and [e["sig"] for e in data] == [11, 6], f"json: {data}")
    info = ok(coredumpctl(*C, "info", str(pids[1])), "info")
    boot = open("/proc/sys/kernel/random/boot_id").read().strip().replace("-", "")
    for want in (f"PID: {pids[1]} (crasher)", "Signal: 6 (ABRT)", f"Executable: {CRASHER}", f"Boot ID: {boot}",
                 f"Storage: {core_of(env, pids[1])} (present)", "Size on Disk: ",
                 f"Message: Process {pids[1]} (crasher) of user 0 dumped core."):
        check(want in info, f"info lacks {want!r}:\n{info}")
    check_dump(C, pids[0], env, "records")
    p = coredumpctl(*C, "debug", str(pids[0]), "-A", "-batch -nx -ex 'info threads'")
    out = ok(p, "debug")
    check(re.search(r"^\*\s+1\s+(Thread|LWP|process)", out, re.M), f"gdb did not load the core:\n{out}")
    d.stop()


def case_mix():
    """Crashes in the journal and crashes only in records (journald gone meanwhile): listed
    once each, the journal's copy preferred."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    first = [crash_and_wait(env, 0), crash_and_wait(env, 1, "abort")]
    for pid in first:  # in the journal before journald goes
        j.entry(pid)
    j.stop()
    later = crash_and_wait(env, 2)
    args = (j, "--storage", env.store)
    data = json.loads(ok(coredumpctl(*args, "list", "--json=short"), "json"))
    check([e["pid"] for e in data] == first + [later], f"merged list: {data}")
    journal_only = json.loads(ok(coredumpctl(j, "--storage", os.path.join(env.base, "no-store"), "list", "--json=short"),
                                 "journal only"))
    check([e["pid"] for e in journal_only] == first, f"journal: {journal_only}")
    info = ok(coredumpctl(*args, "info", str(later)), "info of the record-only crash")
    check(f"Storage: {core_of(env, later)} (present)" in info, f"info:\n{info}")
    check("Machine ID: " in ok(coredumpctl(*args, "info", str(first[0])), "info from the journal"), "no Machine ID")
    for pid in first + [later]:
        check_dump(args, pid, env, "mix")
    d.stop()


def case_gdb():
    """coredumpctl gdb PID -A '-batch -ex bt' names the crashing functions of a program with
    debug info, innermost first; the debugger's exit status passes through; no file is left."""
    env = Env()
    d = env.start()
    pid = crash_and_wait(env, 0, "deep")
    C = ("--config", env.conf, *no_journal(env))
    before = set(os.listdir("/var/tmp"))
    out = ok(coredumpctl(*C, "gdb", str(pid), "-A", "-batch -nx -ex bt"), "gdb bt")
    bt = out[out.rindex("\n#0 "):]  # gdb prints frame #0 once when loading the core, then the bt
    frames = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+)", bt, re.M)
    check(frames[:3] == ["cds_crash_inner", "cds_crash_middle", "cds_crash_outer"], f"bt frames {frames}:\n{out}")
    p = coredumpctl(*C, "-q", "debug", str(pid), "--debugger=sh", "-A", "-c 'test -s \"$3\" && exit 7' sh")
    check(p.returncode == 7, f"debugger exit status not passed through: {p.returncode} {p.stderr.decode()}")
    check(set(os.listdir("/var/tmp")) <= before | {os.path.basename(env.base)}, "debug left files in /var/tmp")
    d.stop()


def case_negative():
    """Each wrong use fails with exit 1 and says why; vanished, unreadable and broken cores are
    shown as missing, inaccessible and error."""
    user = test_user()
    env = Env()
    d = env.start()
    exe = user_exe(env)
    pid = crash_and_wait(env, 0, exe=exe)
    upid = crash_and_wait(env, 1, user=user, exe=exe)
    gone = crash_and_wait(env, 2, exe=exe)
    broken = crash_and_wait(env, 3, exe=exe)
    C = ("--config", env.conf, *no_journal(env))
    fails(coredumpctl(*C, "list", "nosuchprogram"), "no match", "No coredumps found.")
    fails(coredumpctl(*C, "info", "999999999"), "no such PID", "No coredumps found.")
    fails(coredumpctl(*C, "--frobnicate"), "unknown option", "unrecognized option")
    fails(coredumpctl(*C, "frobnicate"), "unknown verb", "Unknown command verb 'frobnicate'.")
    fails(coredumpctl(*C, "--json=xml", "list"), "bad --json", "Unknown argument to --json=")
    fails(coredumpctl(*C, "-n", "0", "list"), "bad -n", "Invalid numeric parameter to -n")
    fails(coredumpctl(*C, "-S", "next tuesday", "list"), "bad --since", "Failed to parse timestamp")
    fails(coredumpctl(*C, "-S", "today", "-U", "yesterday", "list"), "since after until", "--since= must be before")
    fails(coredumpctl(*C, "dump", "-F", "COREDUMP_EXE", str(pid)), "dump -F", "only makes sense with list")
    fails(coredumpctl(*C, "delete"), "delete without match", "delete needs a match")
    fails(coredumpctl(*C, "FIELD-x=1"), "bad field", "Unknown command verb")
    fails(coredumpctl(*C, "list", "bad-field=1"), "bad field name", "invalid field name")
    # dump to a terminal is refused before anything is written
    master, slave = pty.openpty()
    p = coredumpctl(*C, "dump", str(pid), stdout=slave)
    os.close(slave)
    os.close(master)
    fails(p, "dump to a tty", "Refusing to dump core to tty")
    # a core that vanished, one the user may no longer read, one that is not a file
    os.unlink(core_of(env, gone))
    subprocess.run(["setfacl", "-b", core_of(env, upid)], check=True)
    bpath = core_of(env, broken)
    os.unlink(bpath)
    os.mkdir(bpath)
    data = {e["pid"]: e for e in json.loads(ok(coredumpctl(*C, "--json=short", "list"), "list"))}
    check(data[gone]["corefile"] == "missing" and data[gone]["size"] is None, f"vanished core: {data[gone]}")
    check(data[broken]["corefile"] == "error", f"directory instead of a core: {data[broken]}")
    check(data[pid]["corefile"] == "present", f"intact core: {data[pid]}")
    fails(coredumpctl(*C, "dump", str(gone), "-o", os.path.join(env.base, "x")), "dump of a vanished core",
          "Cannot access")
    mine = json.loads(ok(coredumpctl(*C, "--json=short", "list", user=user), "list as user"))
    check([(e["pid"], e["corefile"]) for e in mine] == [(upid, "inaccessible")], f"user's view: {mine}")
    fails(coredumpctl(*C, "dump", str(upid), "-o", "/dev/null", user=user), "dump of an unreadable core",
          "Cannot access")
    d.stop()


CONTROL_CLIENT = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(sys.argv[2].encode())
print(s.recv(512).decode())
"""


def control_request(path, text, user):
    """One raw request on coredumpd's control socket, as user."""
    p = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
                        USER_PYTHON, "-c", CONTROL_CLIENT, path, text], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, f"control client failed: {p.stderr}")
    return p.stdout.strip()


def case_user():
    """A user lists only their own crashes (journal and records) and deletes only their own;
    root deletes anyone's. Deleted cores' journal entries stay, their core missing."""
    user = test_user()
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    exe = user_exe(env)
    root_pids = [crash_and_wait(env, 0, exe=exe), crash_and_wait(env, 1, exe=exe)]
    user_pids = [crash_and_wait(env, 2, user=user, exe=exe), crash_and_wait(env, 3, user=user, exe=exe)]
    for pid in root_pids + user_pids:
        j.entry(pid)
    U = (j, "--storage", env.store, "--control", env.control)
    seen = json.loads(ok(coredumpctl(*U, "--json=short", "list", user=user), "user list"))
    check([e["pid"] for e in seen] == user_pids and all(e["corefile"] == "present" for e in seen), f"user sees {seen}")
    fails(coredumpctl(*U, "delete", str(root_pids[0]), user=user), "user deleting root's crash", "No coredumps found.")
    root_core = os.path.basename(core_of(env, root_pids[0]))
    check(control_request(env.control, f"DELETE {root_core}", user) == "ERR 1", "daemon let a user delete root's core")
    check(os.path.exists(core_of(env, root_pids[0])), "root's core is gone")
    for bad in ("DELETE ../etc/passwd", "DELETE core", "FROB x", "DELETE " + "a" * 600):
        check(control_request(env.control, bad, user).startswith("ERR "), f"control accepted {bad!r}")
    ok(coredumpctl(*U, "delete", str(user_pids[0]), user=user), "user deleting their own crash")
    check(not any(f".{user_pids[0]}." in f for f in os.listdir(env.store)), "the user's core or record remains")
    d.wait_log(rf"Deleted core\.crasher\.{user.pw_uid}\..*\.{user_pids[0]}\..* at the request of uid {user.pw_uid}")
    after = {e["pid"]: e["corefile"] for e in json.loads(ok(coredumpctl(*U, "--json=short", "list", user=user), "list"))}
    check(after == {user_pids[0]: "missing", user_pids[1]: "present"}, f"after delete: {after}")
    ok(coredumpctl(*U, "delete", str(user_pids[1])), "root deleting a user's crash")
    ok(coredumpctl(*U, "delete", str(root_pids[1])), "root deleting root's crash")
    left = sorted(f.split(".")[4] for f in os.listdir(env.store))
    check(left == [str(root_pids[0])] * 2, f"store after deletes: {os.listdir(env.store)}")
    d.stop()


def log_as(j, user, fields):
    """Logs a journal entry with these fields as user, into the test's journald."""
    text = "".join(f"{k}={v}\n" for k, v in fields.items())
    subprocess.run(["nsenter", f"--mount={j.ns}", "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                    "--clear-groups", "logger", "--journald"], input=text.encode(), check=True, timeout=30)


def case_forged():
    """Anyone can log an entry with the coredump MESSAGE_ID: one claiming another user's crash
    is not listed, and root's delete never follows an entry out of the store."""
    user = test_user()
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)
    real = crash_and_wait(env, 0)
    victim_dir = os.path.join(env.base, "victim")
    os.mkdir(victim_dir)
    victim = os.path.join(victim_dir, "core.precious")
    open(victim, "w").write("keep me")
    base = {"MESSAGE_ID": "fc2e22bc6ee647b6b90729ab34a250b1", "COREDUMP_GID": "0", "COREDUMP_SIGNAL": "11",
            "COREDUMP_COMM": "forged", "COREDUMP_EXE": "/usr/bin/forged", "COREDUMP_FILENAME": victim,
            "MESSAGE": "Process 1 (forged) dumped core."}
    log_as(j, user, {**base, "COREDUMP_PID": "7001", "COREDUMP_UID": "0"})  # someone else's crash
    log_as(j, user, {**base, "COREDUMP_PID": "7002", "COREDUMP_UID": str(user.pw_uid)})  # their own
    j.entry(real)
    wait_until(lambda: len([e for e in j.entries("MESSAGE_ID=" + COREDUMP_MESSAGE_ID)
                            if e.get("COREDUMP_COMM") == b"forged"]) >= 2, 30, "the two forged entries in the journal")
    A = (j, "--config", env.conf)
    pids = [e["pid"] for e in json.loads(ok(coredumpctl(*A, "--json=short", "list"), "list"))]
    check(pids == [real, 7002], f"listed {pids}: a user's entry about root's crash must not be believed")
    fails(coredumpctl(*A, "delete", "7002"), "root delete of a file outside the store", "not deleting")
    check(open(victim).read() == "keep me", "delete followed an entry out of the store")
    d.stop()


def case_vacuum():
    """vacuum deletes the oldest core of the uid with the most cores until --max-use holds,
    and by age; the records stay (core missing); disk-usage counts what du counts."""
    user = test_user()
    env = Env()
    d = env.start()
    exe = user_exe(env)
    root_pids = [crash_and_wait(env, i, exe=exe) for i in range(3)]
    upid = crash_and_wait(env, 3, user=user, exe=exe)
    C = ("--config", env.conf, *no_journal(env))
    du = sum(os.stat(os.path.join(env.store, f)).st_blocks * 512 for f in os.listdir(env.store))
    check(ok(coredumpctl(*C, "-q", "disk-usage"), "disk-usage").strip() == str(du), "disk-usage differs from du")
    check("4 cores; 4 records" in ok(coredumpctl(*C, "disk-usage"), "disk-usage"), "disk-usage counts")
    out = ok(coredumpctl(*C, "vacuum", "--older-than=1h", "--keep-free=0", "--max-use=1G"), "vacuum by age")
    check("(cores deleted: 0, records deleted: 0)" in out and len(env.cores()) == 4, f"vacuum deleted young cores:\n{out}")
    core_bytes = sum(os.stat(c).st_blocks * 512 for c in env.cores())
    out = ok(coredumpctl(*C, "vacuum", f"--max-use={core_bytes - 1}", "--keep-free=0"), "vacuum by size")
    check("(cores deleted: 1, records deleted: 0)" in out and not os.path.exists(os.path.join(env.store, "x")), f"vacuum:\n{out}")
    states = {e["pid"]: e["corefile"] for e in json.loads(ok(coredumpctl(*C, "--json=short", "list"), "list"))}
    check(states == {root_pids[0]: "missing", root_pids[1]: "present", root_pids[2]: "present", upid: "present"},
          f"after vacuum: {states}")
    ok(coredumpctl(*C, "vacuum", "--older-than=0", "--keep-free=0"), "vacuum everything old")
    check(env.cores() == [] and len(os.listdir(env.store)) == 4, f"records must stay: {os.listdir(env.store)}")
    fails(coredumpctl(*C, "vacuum", "--max-use=lots"), "bad size", "Invalid size")
    d.stop()


def case_group():
    """list --group: one row per program, signal and stack signature, with counts."""
    env = Env()
    d = env.start()
    for i, mode in enumerate(("segv", "segv", "abort", "segv")):
        crash_and_wait(env, i, mode)
    C = ("--config", env.conf, *no_journal(env))
    groups = json.loads(ok(coredumpctl(*C, "--json=short", "list", "--group", CRASHER), "group"))
    check(sorted((g["sig"], g["count"]) for g in groups) == [(6, 1), (11, 3)], f"groups: {groups}")
    check(all(set(g) == {"count", "machines", "first", "last", "sig", "exe", "signature", "frames"} and
              g["first"] <= g["last"] and g["machines"] == 1 and re.fullmatch(r"[0-9a-f]{32}", g["signature"])
              for g in groups), f"group keys: {groups}")
    text = ok(coredumpctl(*C, "list", "--group", CRASHER), "group table")
    check(text.splitlines()[0].split() == ["COUNT", "MACHINES", "FIRST", "LAST", "SIG", "EXE", "SIGNATURE", "FRAMES"],
          text)
    d.stop()


JOURNAL_REMOTE_PATHS = ("/lib/systemd/systemd-journal-remote",
                        os.path.join(os.environ.get("CDS_BUILD_DIR", ""), "systemd-journal-remote", "lib", "systemd",
                                     "systemd-journal-remote"))
OTHER_MACHINE = "0badc0de0badc0de0badc0de0badc0de"


def export_with(entry, **fields):
    """An entry (dict of bytes) in journal export format, with fields replaced."""
    out = b""
    for k, v in {**entry, **{k: v.encode() for k, v in fields.items()}}.items():
        if b"\n" in v:
            out += k.encode() + b"\n" + len(v).to_bytes(8, "little") + v + b"\n"
        else:
            out += k.encode() + b"=" + v + b"\n"
    return out + b"\n"


def journal_remote(env, data, name):
    """The directory of a journal as systemd-journal-remote writes it on a central machine, of
    these entries in export format."""
    remote = next((p for p in JOURNAL_REMOTE_PATHS if os.access(p, os.X_OK)), None)
    check(remote, f"no systemd-journal-remote in {JOURNAL_REMOTE_PATHS}")
    central = os.path.join(env.base, name)
    os.makedirs(central)
    p = subprocess.run([remote, "--split-mode=none", "-o", os.path.join(central, "remote.journal"), "-"], input=data,
                       capture_output=True, timeout=60)
    check(p.returncode == 0, f"systemd-journal-remote refused the entries: {p.stderr.decode()}")
    return central


def case_central():
    """Records of two machines in one journal (systemd-journal-remote's, as a central machine
    has them; the second machine's is this one's record under another machine id and host
    name, the VM test t20 has a real one): list names each crash's host, --group counts the same
    bug once with 2 machines, dump/debug of the other machine's external core says where it is;
    this machine's core dumps from its record, not through the central journal's entry."""
    env = Env()
    d = env.start()
    here, there, other_bug = (crash_and_wait(env, i, mode) for i, mode in enumerate(("deep", "deep", "segv")))
    d.stop()
    recs = {int(r["COREDUMP_PID"]): r for r in read_exports(env, "record")}
    # its core file is here (one machine in this test), and never used: it is that machine's
    local_id = open("/etc/machine-id").read().strip()
    check(recs[here].get("_MACHINE_ID", b"").decode() == local_id, f"record without this machine's id: {recs[here]}")
    data = export_with(recs[here]) + export_with(recs[other_bug]) + \
        export_with(recs[there], _MACHINE_ID=OTHER_MACHINE, COREDUMP_HOSTNAME="far-away")
    # entries journald of the other machine wrote, with its uids: its coredumpd (root) said its
    # workers log as 995, so 995's entry about root's crash is believed; a service account's (33,
    # even running systemd-coredump --backtrace), one whose "announcement" was not root's (34), a
    # regular user's about root's crash and the worker's about a regular user's (no record here
    # to confirm it) are not
    wrote = {"_MACHINE_ID": OTHER_MACHINE, "COREDUMP_HOSTNAME": "far-away", "_HOSTNAME": "far-away"}
    data += export_with({"MESSAGE": b"Workers log crash entries as uid 995", "PRIORITY": b"6",
                         "MESSAGE_ID": b"9aa2e6ef52d9486daa6682c12982eb32", "COREDUMP_SOCKET_WORKER_UID": b"995"},
                        **wrote, _UID="0")
    data += export_with({"MESSAGE": b"forged", "MESSAGE_ID": b"9aa2e6ef52d9486daa6682c12982eb32",
                         "COREDUMP_SOCKET_WORKER_UID": b"34"}, **wrote, _UID="33")
    fake = {k: v for k, v in recs[other_bug].items() if k != "COREDUMP_FILENAME"}
    for pid, uid, extra in ((4001, "995", {}), (4002, "33", {"_EXE": "/usr/lib/systemd/systemd-coredump"}),
                            (4003, "1000", {}), (4004, "34", {}), (4005, "995", {"COREDUMP_UID": "1000"})):
        data += export_with({**fake, "COREDUMP_PID": str(pid).encode()}, **wrote, _UID=uid, **extra)
    central = journal_remote(env, data, "remote")
    C = ("-D", central, "--storage", os.path.join(env.base, "no-store"))
    listed = ok(coredumpctl(*C, "list"), "central list")
    check(listed.splitlines()[0].split()[:4] == ["TIME", "HOST", "PID", "UID"], f"no HOST column:\n{listed}")
    check(any("far-away" in r and f" {there} " in r for r in rows(listed)), f"the other machine's crash:\n{listed}")
    pids = {e["pid"] for e in json.loads(ok(coredumpctl(*C, "--json=short", "list"), "central json"))}
    check(pids == {here, there, other_bug, 4001}, f"believed centrally: {sorted(pids)} (4002-4005 are not)")
    groups = json.loads(ok(coredumpctl(*C, "--json=short", "list", "--group", CRASHER), "central group"))
    sig = recs[here]["COREDUMP_SIGNATURE"].decode()
    by_sig = {g["signature"]: g for g in groups}
    check(by_sig.get(sig, {}).get("count") == 2 and by_sig[sig]["machines"] == 2, f"the same bug on 2 machines: {groups}")
    check([(g["count"], g["machines"]) for g in groups if g["signature"] != sig] == [(2, 2)], f"the other bug: {groups}")
    print(ok(coredumpctl(*C, "list", "--group"), "central group table"))
    info = ok(coredumpctl(*C, "info", str(there)), "info of the other machine's crash")
    check(f"Machine ID: {OTHER_MACHINE}" in info and "Hostname: far-away" in info and "(remote)" in info, info)
    fails(coredumpctl(*C, "dump", str(there), "-o", os.path.join(env.base, "x")), "dump of a remote core",
          f"is stored on machine {OTHER_MACHINE} (host far-away) at")
    fails(coredumpctl(*C, "debug", str(there), "-A", "-batch"), "debug of a remote core", "not on this machine")
    # this machine's crash as the central journal has it: the upload client wrote that entry, and
    # could have named any crash of this machine in it; the core is dumped from the local record
    out = os.path.join(env.base, "here.core")
    fails(coredumpctl(*C, "dump", str(here), "-o", out), "dump of this machine's core through the central journal",
          "the local journald did not write")
    ok(coredumpctl("--storage", env.store, "dump", str(here), "-o", out), "dump of this machine's core")
    info = elf_core_info(out)
    check(info["type"] == 4 and here in info["pids"] and info["threads"] == 4, f"not PID {here}'s core: {info}")


WORKERS_MESSAGE_ID = "9aa2e6ef52d9486daa6682c12982eb32"


def remote_journal(env, entries, name):
    """journal_remote() of these entries (dicts of bytes as journald wrote them here) under another
    machine's id and host name."""
    data = b""
    for e in entries:  # the address fields of the journal they come from are not carried over
        kept = {k: v for k, v in e.items() if not k.startswith("__") or k in ("__REALTIME_TIMESTAMP",
                                                                              "__MONOTONIC_TIMESTAMP")}
        data += export_with(kept, _MACHINE_ID=OTHER_MACHINE, _HOSTNAME="far-away", COREDUMP_HOSTNAME="far-away")
    return journal_remote(env, data, name)


def case_worker_user_reload():
    """A reload that changes WorkerUser= tells the journal, as root, the uid the workers log
    crash entries as from then on, as the start did for the first: on a central machine (the
    journal through systemd-journal-remote) the entries from before and after the reload are
    both believed; without the second announcement the later one would not be."""
    env = Env()
    j = Journal(env)
    d = env.start(journal=j)

    def announced():
        return [e for e in j.entries("MESSAGE_ID=" + WORKERS_MESSAGE_ID) if e.get("_UID") == b"0"]
    first = wait_until(announced, 30, lambda: f"the workers' uid announced at start:\n{d.log_text()}")
    old = int(first[0]["COREDUMP_SOCKET_WORKER_UID"])
    users = [pwd.getpwnam(n) for n in ("nobody", "daemon") if n in {p.pw_name for p in pwd.getpwall()}]
    new = next((u for u in users if u.pw_uid not in (old, 0)), None)
    check(new, f"no user but the workers' ({old}) to switch to")
    before = crash_and_wait(env, 0)
    entry_before = j.entry(before)
    env.write_config({"WorkerUser": new.pw_name})
    d.proc.send_signal(signal.SIGHUP)
    both = wait_until(lambda: len(announced()) >= 2 and announced(), 30,
                      lambda: f"the reload's announcement:\n{d.log_text()}")
    check([e["COREDUMP_SOCKET_WORKER_UID"] for e in both] == [str(old).encode(), str(new.pw_uid).encode()],
          f"announced: {[e.get('COREDUMP_SOCKET_WORKER_UID') for e in both]}, expected {old} then {new.pw_uid}")
    after = crash_and_wait(env, 1)
    entry_after = j.entry(after)
    check((entry_before.get("_UID"), entry_after.get("_UID")) == (str(old).encode(), str(new.pw_uid).encode()),
          f"entries written by {entry_before.get('_UID')} and {entry_after.get('_UID')}, "
          f"expected {old} then {new.pw_uid}")
    d.stop()
    C = ("--storage", os.path.join(env.base, "no-store"), "--json=short", "list")
    central = remote_journal(env, [*both, entry_before, entry_after], "central")
    pids = {e["pid"] for e in json.loads(ok(coredumpctl("-D", central, *C), "central list"))}
    check(pids == {before, after}, f"believed centrally: {sorted(pids)}, expected {before} and {after}")
    # the same without the reload's announcement: the later entry's writer is nobody known
    partial = remote_journal(env, [both[0], entry_before, entry_after], "central-start-only")
    pids = {e["pid"] for e in json.loads(ok(coredumpctl("-D", partial, *C), "central list, start only"))}
    check(pids == {before}, f"believed with the start's announcement alone: {sorted(pids)}, expected {before}")


def on_pty(args, env=None, stdout_file=None, timeout=300):
    """Runs our coredumpctl with a terminal as stdout (or stderr, if stdout goes to a file) and
    returns (exit status, what the terminal got)."""
    master, slave = pty.openpty()
    e = dict(os.environ, TZ="UTC", TERM="xterm", **(env or {}))
    for k in ("SYSTEMD_COLORS", "NO_COLOR", "PAGER", "SYSTEMD_PAGER", "LESS"):
        if k not in (env or {}):
            e.pop(k, None)
    out = open(stdout_file, "wb") if stdout_file else slave
    cmd = ctl_command(args)
    cmd.remove("--no-pager")  # the pager is the case's to choose
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=slave, env=e)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    rc = p.wait(timeout)
    if stdout_file:
        out.close()
    return rc, got.decode(errors="replace")


def case_terminal():
    """On a terminal: colours, a pager, and a progress line while a large core decompresses;
    in a pipe none of them."""
    env = Env()
    d = env.start()
    gone = crash_and_wait(env, 0)
    os.unlink(core_of(env, gone))
    pid, _ = crash("mem", 48, "random")
    env.wait_cores(1)  # the first one's core is gone
    C = ("--config", env.conf, *no_journal(env))
    rc, text = on_pty([*C, "list"], env={"SYSTEMD_PAGER": "sed s/^/PAGED:/"})
    check(rc == 0 and "PAGED:" in text and "\x1b[" in text, f"no pager or colours on a terminal:\n{text!r}")
    check("\x1b[0;38;5;245mmissing" in text, f"missing core not greyed:\n{text!r}")
    piped = ok(coredumpctl(*C, "list", env={"SYSTEMD_PAGER": "sed s/^/PAGED:/", "SYSTEMD_COLORS": ""}), "piped list")
    check("PAGED:" not in piped and "\x1b[" not in piped, f"pager or colours in a pipe:\n{piped!r}")
    rc, text = on_pty([*C, "--no-pager", "list"], env={"SYSTEMD_PAGER": "sed s/^/PAGED:/", "NO_COLOR": "1"})
    check(rc == 0 and "PAGED:" not in text and "\x1b[" not in text, f"--no-pager/NO_COLOR ignored:\n{text!r}")
    size = os.path.getsize(core_of(env, pid))
    check(size >= 16 << 20, f"the random-memory core compressed to {size} bytes, too small for a progress line")
    out = os.path.join(env.base, "big.core")
    rc, text = on_pty([*C, "dump", str(pid)], stdout_file=out)
    check(rc == 0 and "Decompressing core: 100%" in text, f"no progress line on the terminal:\n{text[-2000:]!r}")
    check(elf_core_info(out)["pids"][0] == pid, "the dumped core is not the crash's")
    p = coredumpctl(*C, "dump", str(pid), "-o", out)
    check(b"Decompressing" not in p.stderr, "progress line without a terminal")
    d.stop()


if __name__ == "__main__":
    run_cases({"journal": case_journal, "records": case_records, "mix": case_mix, "gdb": case_gdb,
               "negative": case_negative, "user": case_user, "forged": case_forged, "vacuum": case_vacuum, "group": case_group,
               "central": case_central, "worker_user_reload": case_worker_user_reload, "terminal": case_terminal})
