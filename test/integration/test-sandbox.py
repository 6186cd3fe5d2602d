#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The worker's sandbox against the real kernel: every forbidden thing dies with SIGSYS or fails
with the expected errno; a live worker shows the confinement in /proc; the manager holds only
its documented capabilities."""
import errno
import os
import re
import signal
import struct
import subprocess
import time

from cdtest import (BUILD, JOURNAL_RUN_DIR, LAUNCHER_COMM, SYS_UNSHARE, Env, check, copy_crasher, crash, fd_targets, run_cases, start_filtered,
                    test_user, wait_until)

PROBE = os.path.join(BUILD, "test", "sandbox-probe")
MANAGER_CAPS = (1 << 19) | (1 << 2) | (1 << 5) | (1 << 7) | (1 << 6) | (1 << 8)
CAP_SYS_ADMIN = 1 << 21
# the forward launcher's: SYS_ADMIN, SETUID, SETGID, SETPCAP, DAC_READ_SEARCH (src/forward/launcher.c)
LAUNCHER_CAPS = CAP_SYS_ADMIN | (1 << 7) | (1 << 6) | (1 << 8) | (1 << 2)



# what a worker's empty root holds where the machine runs journald: the journal's socket, bound
# there for the worker's entry (src/worker/sandbox.c); nothing else, nothing at all without it
JOURNAL_SOCKET = os.path.join(JOURNAL_RUN_DIR, "socket")
JOURNAL_TREE = ["run", "run/systemd", "run/systemd/journal", "run/systemd/journal/socket"]


def root_tree(pid):
    """Every path beneath pid's root, relative, sorted."""
    root = f"/proc/{pid}/root"
    out = []
    for d, dirs, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in dirs + files]
    return sorted(out)


def empty_root(pid):
    """pid's root is the worker's empty root: nothing in it but, where journald runs, its socket."""
    tree = root_tree(pid)
    return tree == [] or (os.path.exists(JOURNAL_SOCKET) and tree == JOURNAL_TREE)


def probe(user, action, *args):
    p = subprocess.run([PROBE, str(user.pw_uid), str(user.pw_gid), action, *args], capture_output=True, text=True,
                       timeout=30)
    return p.returncode, p.stdout.strip()


def case_forbidden():
    if os.geteuid() != 0:
        from cdtest import skip
        skip("needs root")
    user = test_user()
    rc, out = probe(user, "none")
    check(rc == 0 and out == "allowed", f"the sandbox itself failed: {rc} {out}")
    rundir = Env().rundir  # a real socket path outside the empty root
    expect = {
        "open-write": f"errno={errno.EACCES}", "open-read": f"errno={errno.EACCES}",
        "connect": f"errno={errno.ENOENT}",
        "socket-inet": -signal.SIGSYS, "socket-unix-stream": -signal.SIGSYS, "execve": -signal.SIGSYS,
        "ptrace": -signal.SIGSYS, "mount": -signal.SIGSYS, "setuid0": -signal.SIGSYS, "mmap-exec": -signal.SIGSYS,
        "mprotect-exec": -signal.SIGSYS, "fork": -signal.SIGSYS, "kill": -signal.SIGSYS, "memfd": -signal.SIGSYS,
        "clone-vm": -signal.SIGSYS, "clone3": f"errno={errno.ENOSYS}",
        # a worker sandboxed ahead of its job lowers its own limits to the job's; none goes up,
        # none but those it set may be touched, and no other process's, even its own by number
        "rlimit-lower": "allowed", "rlimit-raise": f"errno={errno.EPERM}", "rlimit-stack": -signal.SIGSYS,
        "prlimit-other": -signal.SIGSYS, "prlimit-self-pid": -signal.SIGSYS,
    }
    for action, want in expect.items():
        rc, out = probe(user, action, os.path.join(rundir, "kernel.sock"))
        got = rc if isinstance(want, int) else out
        check(got == want, f"{action}: got {rc} {out!r}, expected {want!r}")

    # zstd's worker threads: as many as the sandbox was set up for (2, or 0 in a sanitizer
    # build, which gives workers none), not one more
    n = int(probe(user, "threads-allowed")[1])
    if n > 0:
        rc, out = probe(user, "threads", str(n))
        check(rc == 0 and out == f"started {n}", f"threads: {rc} {out!r}")
    rc, out = probe(user, "threads", str(n + 1))
    check(rc == 0 and out == f"errno={errno.EAGAIN} after {n}", f"a thread past RLIMIT_NPROC: {rc} {out!r}")

    rc, out = probe(user, "status")
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    check(fields["NoNewPrivs"].strip() == "1" and fields["CapEff"].strip() == "0000000000000000" and
          fields["CapBnd"].strip() == "0000000000000000", f"status:\n{out}")
    check(fields["Uid"].split() == [str(user.pw_uid)] * 4, f"uids {fields['Uid']}")
    check("namespaces=1 empty_root=1" in out, f"no namespaces: {out}")


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def own_filter(pid, manager):
    """Whether process pid installed a seccomp filter of its own: one more than the manager's,
    which every process it starts inherits (src/manager/syscall-filter.h)."""
    return int(status(pid).get("Seccomp_filters", "0")) > int(status(manager).get("Seccomp_filters", "0"))


def check_launcher(d):
    """Third review, finding 8: the daemon's one process with CAP_SYS_ADMIN is the forward launcher
    (coredump-forward --launcher), which holds the five capabilities a forwarder needs and nothing
    else, no_new_privs, not dumpable."""
    launchers = [pid for pid, comm in d._children_named() if comm == LAUNCHER_COMM]
    check(len(launchers) == 1, f"the daemon's children: {d._children_named()}")
    s = status(launchers[0])
    with open(f"/proc/{launchers[0]}/cmdline", "rb") as f:
        check(f.read() == b"coredump-forward\0--launcher\0", "the launcher is not coredump-forward --launcher")
    check(all(int(s[k], 16) == LAUNCHER_CAPS for k in ("CapEff", "CapPrm", "CapBnd")) and int(s["CapAmb"], 16) == 0,
          f"launcher CapEff {s['CapEff']} CapPrm {s['CapPrm']} CapBnd {s['CapBnd']}, expected {LAUNCHER_CAPS:016x}")
    check(s["NoNewPrivs"] == "1", f"launcher: {s}")
    check(os.stat(f"/proc/{launchers[0]}/environ").st_uid == 0 and s["Uid"].split() == ["0"] * 4, f"launcher: {s}")


def case_live_worker():
    """A worker in the middle of a core, as the real daemon runs it; and the manager's caps."""
    user = test_user()
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    d = env.start()
    s = status(d.proc.pid)
    check(all(int(s[k], 16) == MANAGER_CAPS for k in ("CapEff", "CapPrm", "CapBnd")),
          f"manager CapEff {s['CapEff']} CapPrm {s['CapPrm']} CapBnd {s['CapBnd']}, expected {MANAGER_CAPS:016x} "
          "in every set (CAP_SYS_ADMIN is the forward launcher's alone)")
    check_launcher(d)
    # its own syscall filter (test-syscall-filter checks what it refuses), inherited by every child
    check(s["NoNewPrivs"] == "1" and s["Seccomp"] == "2" and int(s["Seccomp_filters"]) >= 1, f"manager: {s}")
    spares = d.wait_idle_workers(2)
    for w in spares:  # waiting for a job: nothing of a crash seen yet, but already no more than the manager
        check(int(status(w)["CapBnd"], 16) & ~MANAGER_CAPS == 0, f"spare {w} holds more than the manager")
        # its mount and user namespaces its own (made before READY); the one mapped ahead already in
        # its empty root (the other makes it in its user namespace once its job's ids are mapped:
        # as real root it would need CAP_SYS_ADMIN, which only the forward launcher keeps)
        if own_filter(w, d.proc.pid):
            check(empty_root(w), f"spare {w}'s root is not empty: {root_tree(w)}")
        for ns in ("mnt", "user"):
            check(os.readlink(f"/proc/{w}/ns/{ns}") != os.readlink(f"/proc/{d.proc.pid}/ns/{ns}"),
                  f"spare {w} shares the manager's {ns} namespace")
    exe = copy_crasher(env, "crasher")
    ahead = spares_split(d)[0]  # sandboxed already (mapped_ahead): not the one that takes this crash
    p = subprocess.Popen(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", exe, "mem",
                          "128", "random"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def sandboxed():
        for w in d.children():
            try:
                if w != ahead and own_filter(w, d.proc.pid):
                    return w
            except (FileNotFoundError, KeyError):
                pass
        return None
    busy = wait_until(sandboxed, 10, lambda: f"a worker to enter its sandbox (a seccomp filter of its own):\n{d.log_text()}")
    s = status(busy)
    check(s["NoNewPrivs"] == "1" and s["Seccomp"] == "2" and int(s["CapEff"], 16) == 0 and int(s["CapBnd"], 16) == 0,
          f"busy worker: {s}")
    check(s["Uid"].split() == [str(user.pw_uid)] * 4, f"a plain user's crash is processed as that user: {s['Uid']}")
    check(empty_root(busy), f"worker root is not empty: {root_tree(busy)}")
    p.kill()
    p.wait()
    d.stop()


def worker_user():
    """WorkerUser='s default, which spares are mapped ahead to (tools/run-tests.sh makes it; without
    it the daemon falls back to nobody, which is never mapped ahead)."""
    import pwd
    from cdtest import skip
    try:
        return pwd.getpwnam("coredump-socket")
    except KeyError:
        skip("no coredump-socket user (tools/run-tests.sh makes it)")


def unmapped(pid):
    """Whether the worker's user namespace is its own and nothing is mapped into it yet (the
    manager writes the map before it sends MAPPED)."""
    with open(f"/proc/{pid}/uid_map") as f:
        return f.read().strip() == "" and os.readlink(f"/proc/{pid}/ns/user") != os.readlink("/proc/self/ns/user")


def spares_split(d):
    """Of the two spares (SpareWorkers=2), the one sandboxed ahead and [the other], once both
    wait for a job."""
    worker_user()

    def split():
        ws = d.wait_idle_workers(2)
        ahead = [w for w in ws if own_filter(w, d.proc.pid)]
        return (ahead[0], [w for w in ws if w != ahead[0]]) if len(ahead) == 1 else None
    return wait_until(split, 10, lambda: f"one spare sandboxed ahead:\n{d.log_text()}")


def limits(pid):
    """/proc/PID/limits: {name: (soft, hard)}."""
    with open(f"/proc/{pid}/limits") as f:
        return {m.group(1): (m.group(2), m.group(3)) for m in
                (re.match(r"(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)", line) for line in f) if m}


def case_mapped_ahead():
    """Of two spares, one waits already sandboxed as WorkerUser= before any crash (mapped ahead:
    its ids, no capability, no_new_privs, its Landlock domain and seccomp filter), with the
    limits any job may need; the other is not mapped yet, for a plain user's crash. A system
    user's crash goes to the one mapped ahead, which lowers its limits to its job's (fewer
    descriptors, the file size cap); crashes of a plain user, two at once, are stored all the same
    (by the spare left unmapped, or workers started for them; live_worker shows such a worker runs
    as the user)."""
    wu = worker_user()
    user = test_user()
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    d = env.start()

    ahead, others = spares_split(d)
    s = status(ahead)
    check(s["Uid"].split() == [str(wu.pw_uid)] * 4 and s["Gid"].split() == [str(wu.pw_gid)] * 4,
          f"spare {ahead} mapped ahead as {s['Uid']} / {s['Gid']}, expected {wu.pw_uid} / {wu.pw_gid}")
    check(s["NoNewPrivs"] == "1" and int(s["CapEff"], 16) == 0 and int(s["CapPrm"], 16) == 0 and
          int(s["CapBnd"], 16) == 0, f"spare {ahead} mapped ahead: {s}")
    lim = limits(ahead)
    check(lim["Max open files"] == ("272", "272"), f"spare {ahead}: open files {lim['Max open files']}, expected "
          "16 + 2 * 128 (every module a job may bring)")
    for w in others:
        check(not own_filter(w, d.proc.pid) and unmapped(w), f"spare {w} should wait unmapped, for a plain user's crash")

    exe = copy_crasher(env, "crasher")
    p = subprocess.Popen([exe, "mem", "128", "random"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def narrowed():
        try:
            return limits(ahead)["Max open files"] != ("272", "272")
        except OSError:
            return False
    wait_until(narrowed, 10, lambda: f"spare {ahead} to take root's crash and lower its limits:\n{d.log_text()}")
    lim = limits(ahead)
    nofile = lim["Max open files"]
    check(nofile[0] == nofile[1] and 16 <= int(nofile[0]) < 272, f"worker {ahead}: open files {nofile}")
    fsize = lim["Max file size"]
    check(fsize[0] == fsize[1] and fsize[0] != "unlimited", f"worker {ahead}: file size {fsize}, expected the job's cap")
    check(status(ahead)["Uid"].split() == [str(wu.pw_uid)] * 4, "the worker mapped ahead changed its user")
    p.kill()  # (killed mid-dump: its core is cut short)
    p.wait()
    pid, _ = crash("segv", exe=exe)
    wait_until(lambda: any(f".{pid}." in c for c in env.cores()), 60, lambda: f"root's crash stored:\n{d.log_text()}")

    users = [subprocess.Popen(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", exe,
                               "segv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
    for u in users:
        u.wait(60)
    wait_until(lambda: all(any(f".{u.pid}." in c for c in env.cores()) for u in users), 60,
               lambda: f"the plain user's two crashes stored:\n{d.log_text()}")
    for u in users:
        got = [c for c in env.cores() if f".{u.pid}." in c]
        check(len(got) == 1 and f".{user.pw_uid}." in got[0], f"plain user's crash {u.pid}: {got}\n{d.log_text()}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_mapped_ahead_not():
    """No spare is mapped ahead with a single spare (it must take any user's crash), nor as nobody
    (other processes of that user could stop it, and with it the next system crash)."""
    for config in ({"SpareWorkers": "1"}, {"WorkerUser": "nobody"}):
        env = Env(config)
        d = env.start(environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"})
        n = int(config.get("SpareWorkers", "2"))
        spares = d.wait_idle_workers(n)
        for w in spares:  # their READY handled: a spare to be mapped ahead would be on its way by then
            d.wait_log(rf"Worker {w}: (waiting for a job|mapped uid \d+ ahead)")
        for w in spares:
            check(unmapped(w), f"{config}: spare {w} mapped ahead, or without a user namespace of its own")
        pid, _ = crash("segv")
        wait_until(lambda: any(f".{pid}." in c for c in env.cores()), 60, lambda: f"{config}: crash stored:\n{d.log_text()}")
        check(d.stop() == 0, f"{config}: daemon did not stop cleanly")


def case_mapped_ahead_failing():
    """Spares that die mapped ahead, before they say they are sandboxed, are counted as failed
    starts, not taken for a crash; after three in a row, spares wait unmapped, and crashes are
    stored all along."""
    from cdtest import skip
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("worker built without -Dworker-test-faults=true")
    env = Env()
    d = env.start(environ={"COREDUMP_WORKER_FAULT": "ahead"})
    d.wait_log(r"3 spares in a row died while mapped ahead: spares wait unmapped from now on")
    pid, _ = crash("segv")
    wait_until(lambda: any(f".{pid}." in c for c in env.cores()), 60, lambda: f"root's crash stored:\n{d.log_text()}")
    for w in d.wait_idle_workers(2):
        check(unmapped(w), f"spare {w} mapped ahead after the failures")
    log = d.log_text()
    check(log.count("Failed to enter the sandbox ahead of the job") == 3, f"not three failures:\n{log}")
    check(d.stop() == 0, "daemon did not stop cleanly")


# A seccomp filter over coredumpd and all it starts: unshare(CLONE_NEWNS) alone fails with EPERM
# (a container or a unit that lets a user namespace be made, but no mount namespace of the real
# root's); unshare with CLONE_NEWUSER among the flags passes.
NO_MOUNT_NS = [(0x20, 0, 0, 0),                    # ld [nr]
               (0x15, 0, 3, SYS_UNSHARE),          # jeq unshare
               (0x20, 0, 0, 16),                   # ld [args[0]] (low half)
               (0x15, 0, 1, 0x00020000),           # jeq CLONE_NEWNS
               (0x06, 0, 0, 0x00050000 | 1),       # ret ERRNO(EPERM)
               (0x06, 0, 0, 0x7fff0000)]           # ret ALLOW


def case_empty_root_in_userns():
    """Where the real root may not make a mount namespace (NO_MOUNT_NS), the spares wait in a
    mount namespace of their user namespace's, the host's tree still there, and the empty root is
    made in it once the job's user is mapped (ahead of any job for the spare mapped ahead): a worker in the middle of a user's core has an
    empty root all the same, and the crash is stored."""
    user = test_user()
    env = Env({"CompressLevel": "19", "SpoolMax": "0"})
    d = start_filtered(env, "coredumpd-no-mount-ns", NO_MOUNT_NS)
    def spares():  # one of them mapped ahead (case_mapped_ahead): the other still root, unmapped
        ws = d.wait_idle_workers(2)
        return ws if sorted(status(w)["Uid"].split()[0] == "0" for w in ws) == [False, True] else None
    for w in wait_until(spares, 10, lambda: f"a spare mapped ahead beside one that is not:\n{d.log_text()}"):
        check(os.readlink(f"/proc/{w}/ns/mnt") != os.readlink(f"/proc/{d.proc.pid}/ns/mnt"),
              f"spare {w} has no mount namespace of its own")
        if status(w)["Uid"].split()[0] == "0":
            check("usr" in os.listdir(f"/proc/{w}/root"), f"spare {w} has an empty root already: the filter did not take")
        else:  # made in its own mount namespace, once its user was mapped
            check(empty_root(w), f"spare {w} mapped ahead has no empty root: {root_tree(w)}")
    exe = copy_crasher(env, "crasher")
    p = subprocess.Popen(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", exe, "mem",
                          "64", "random"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def busy_worker():  # every process of the daemon has Seccomp 2 here (the wrapper's filter)
        for w in d.children():
            try:
                if status(w)["Uid"].split()[0] == str(user.pw_uid):
                    return w
            except (FileNotFoundError, KeyError):
                pass
        return None
    busy = wait_until(busy_worker, 10, lambda: f"a worker to become uid {user.pw_uid}:\n{d.log_text()}")
    check(empty_root(busy), f"worker root is not empty: {root_tree(busy)}")
    check(int(status(busy)["CapEff"], 16) == 0, f"busy worker: {status(busy)}")
    check(p.wait(60) == -signal.SIGSEGV, f"crasher ended with {p.returncode}")
    cores = env.wait_cores(1)
    check(any(f".{p.pid}." in c for c in cores), f"no core for PID {p.pid}: {cores}")
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_faults():
    """A worker that crashes, hangs or breaks the protocol is killed; the crash still ends with a
    record saying why, the task is released, and the next crash is processed normally."""
    import glob
    import shutil
    from cdtest import CRASHER, parse_export, skip
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("worker built without -Dworker-test-faults=true")
    expected = {"crash": r"the worker (died|failed); core lost", "hang": r"worker exceeded the per-crash deadline",
                "malformed": r"(sent a malformed result|the worker failed)"}
    for fault, why in expected.items():
        env = Env({"TimeoutSec": "3"})
        # a deliberate SIGSEGV: not the sanitizer's business (its report would fail the test)
        d = env.start(environ={"COREDUMP_WORKER_FAULT": fault,
                               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"})
        faulty = os.path.join(env.base, "crasher-fault")
        shutil.copy(CRASHER, faulty)
        t0 = time.monotonic()
        pid, rc = crash("segv", exe=faulty, timeout=30)
        check(rc == -signal.SIGSEGV and time.monotonic() - t0 < 15, f"{fault}: task not released ({rc})")
        d.wait_log(rf"Crash of PID {pid} \(crasher-fault\): .*{why}")
        recs = []
        for path in glob.glob(os.path.join(env.store, "record.*.export")):
            with open(path, "rb") as f:
                recs += [r for r in parse_export(f.read()) if r.get("COREDUMP_PID") == str(pid).encode()]
        check(len(recs) == 1 and recs[0].get("COREDUMP_PROCESSING_ERROR"), f"{fault}: no record saying why: {recs}")
        check(env.cores() == [], f"{fault}: a core was stored by a failed worker")
        pid2, _ = crash("segv")
        check(any(f".{pid2}." in c for c in env.wait_cores(1)), f"{fault}: the next crash was not stored")
        check(d.stop() == 0, f"{fault}: daemon did not stop cleanly")


def ns_inode(pid, ns):
    return os.stat(f"/proc/{pid}/ns/{ns}").st_ino


def socket_inodes(pid):
    return set(fd_targets(pid, "socket:["))


def case_zygote():
    """The workers come from the zygote but are the manager's children (it reaps and signals them
    as before), named coredump-worker; the zygote is not dumpable, holds nothing of a crash. Each
    worker is apart from the others: its own user, mount and IPC namespaces, made after the fork
    (so not the zygote's nor a sibling's), no descriptor of the zygote's, and its own sandbox
    (its own Landlock domain and filter, entered after the fork: see live_worker). A worker a
    core took over therefore reaches no other crash: it cannot signal or trace (forbidden), and
    shares no socket, namespace or memory with the next one."""
    from cdtest import crash, read_file
    env = Env({"SpareWorkers": "3", "WorkerZygote": "yes"})
    d = env.start()
    z = wait_until(d.zygote, 10, lambda: f"a zygote:\n{d.log_text()}")
    check(read_file(f"/proc/{z}/comm") == "coredump-zygote", "zygote misnamed")
    spares = d.wait_idle_workers(3)
    for w in spares:
        check(read_file(f"/proc/{w}/comm") == "coredump-worker", f"worker {w} misnamed")
        check(open(f"/proc/{w}/cmdline", "rb").read().rstrip(b"\0") == b"coredump-worker",
              f"worker {w} cmdline {open(f'/proc/{w}/cmdline', 'rb').read()!r}")
        check(int(status(w)["PPid"]) == d.proc.pid, f"worker {w} is not the manager's child")
    for ns in ("user", "mnt", "ipc"):
        inodes = [ns_inode(w, ns) for w in spares] + [ns_inode(z, ns)]
        check(len(set(inodes)) == len(inodes), f"{ns} namespaces shared between workers or with the zygote: {inodes}")
    zsocks = socket_inodes(z)
    for w in spares:
        check(not (socket_inodes(w) & zsocks), f"worker {w} holds a socket of the zygote's")
    check(int(status(z)["CapBnd"], 16) & ~MANAGER_CAPS == 0, "zygote holds more than the manager")
    pid, _ = crash("segv")
    check(any(f".{pid}." in c for c in env.wait_cores(1)), "a crash was not stored")
    check(d.stop() == 0, "daemon did not stop cleanly")
    check(not os.path.exists(f"/proc/{z}"), "the zygote outlived the daemon")


def case_zygote_killed():
    """A zygote that dies is replaced; a worker that dies abnormally (it may have been made to,
    by a crafted core) gets the zygote replaced too, so the next worker has a new address layout;
    crashes are stored all along."""
    from cdtest import crash
    env = Env({"SpareWorkers": "1", "WorkerZygote": "yes"})
    d = env.start()
    z = wait_until(d.zygote, 10, lambda: f"a zygote:\n{d.log_text()}")
    os.kill(z, signal.SIGKILL)
    d.wait_log(r"The worker zygote was killed")
    pid, _ = crash("segv")
    check(any(f".{pid}." in c for c in env.wait_cores(1)), f"crash after the zygote's death not stored:\n{d.log_text()}")
    z2 = wait_until(lambda: d.zygote() not in (None, z) and d.zygote(), 10, lambda: f"a new zygote:\n{d.log_text()}")
    w = d.wait_idle_workers(1)[0]
    os.kill(w, signal.SIGKILL)
    z3 = wait_until(lambda: d.zygote() not in (None, z2) and d.zygote(), 10,
                    lambda: f"a zygote other than {z2} after a worker's abnormal end:\n{d.log_text()}")
    pid, _ = crash("segv")
    check(any(f".{pid}." in c for c in env.wait_cores(2)), f"crash after the renewal not stored:\n{d.log_text()}")
    print(f"observed: zygotes {z} -> {z2} (killed) -> {z3} (a worker killed)")
    check(d.stop() == 0, "daemon did not stop cleanly")


AT_RANDOM = 25  # the auxv entry: 16 random bytes the kernel gives each exec, glibc's canary and pointer guard


def secrets(pid):
    """(libc's address, the 16 bytes AT_RANDOM points at) of a process: its layout, and what glibc
    took its stack canary and pointer guard from."""
    with open(f"/proc/{pid}/maps") as f:
        libc = next(l.split("-")[0] for l in f if "/libc.so" in l)
    with open(f"/proc/{pid}/auxv", "rb") as f:
        auxv = f.read()
    where = next(v for k, v in struct.iter_unpack("<QQ", auxv) if k == AT_RANDOM)
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(where)
        return libc, f.read(16)


def case_worker_secrets():
    """Third review, finding 5: each worker has an address layout, stack canary and pointer guard
    of its own (it is started from the worker binary, not forked from a zygote), so that a user who
    took over the worker of their own crash learns nothing that helps against a sibling reading
    another user's crash: three spares, three layouts and three AT_RANDOMs. With WorkerZygote=yes,
    the trade-off coredump-socket.conf(5) describes, they share the zygote's (shown here too).
    Before: every worker was the zygote's fork."""
    for zygote, want_distinct in (("no", True), ("yes", False)):
        env = Env({"SpareWorkers": "3", "WorkerZygote": zygote})
        d = env.start()
        spares = d.wait_idle_workers(3)
        seen = [secrets(w) for w in spares]
        layouts, randoms = {s[0] for s in seen}, {s[1] for s in seen}
        if want_distinct:
            check(len(layouts) == 3 and len(randoms) == 3 and d.zygote() is None,
                  f"workers share secrets: libc at {sorted(layouts)}, {len(randoms)} AT_RANDOMs, zygote {d.zygote()}")
        else:
            check(len(layouts) == 1 and len(randoms) == 1, f"WorkerZygote=yes: {sorted(layouts)}, {len(randoms)}")
        pid, _ = crash("segv")
        check(any(f".{pid}." in c for c in env.wait_cores(1)), f"a crash was not stored:\n{d.log_text()}")
        check(d.stop() == 0, "daemon did not stop cleanly")


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
