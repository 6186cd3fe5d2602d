#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Crashes in containers made here with unshare (mount, PID and user namespaces, a chroot, an
overlay root as podman and docker build theirs): the record's container facts read back from a
real journald, the traces from the container's own binaries where EnterNamespace=yes asks for
them, and a crash on the host beside them never labelled a container's."""
import os
import re
import shutil
import subprocess

from cdtest import (CRASHER, Env, Journal, check, crash, run_cases, test_user, wait_until)

DEEP = ["cds_crash_inner", "cds_crash_middle", "cds_crash_outer"]
CONTAINER_FIELDS = ("COREDUMP_CONTAINER_CMDLINE", "COREDUMP_CONTAINER_PID", "COREDUMP_CONTAINER_UID",
                    "COREDUMP_CONTAINER_GID")


def setup(config=None):
    env = Env(config or {})
    j = Journal(env)
    d = env.start(journal=j)
    return env, j, d


def entry_by_comm(j, comm, timeout=60):
    def found():
        es = [e for e in j.entries("MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1") if e.get("COREDUMP_COMM") == comm.encode()]
        check(len(es) <= 1, f"{len(es)} journal entries for {comm}")
        return es and es[0]
    e = wait_until(found, timeout, f"the journal entry of {comm}")
    return {k: v.decode(errors="replace") for k, v in e.items()}


def crashing_frames(e):
    """The crashing thread's [(symbol, module)], from the MESSAGE."""
    tid, out, cur = e["COREDUMP_TID"], [], None
    for line in e["MESSAGE"].splitlines():
        m = re.match(r"Stack trace of thread (\d+):$", line)
        if m:
            cur = m.group(1) == tid
            continue
        m = re.match(r"#\d+\s+0x[0-9a-f]{16} (\S+) \((\S+) \+ 0x[0-9a-f]+\)$", line)
        if m and cur:
            out.append((m.group(1), m.group(2)))
        elif not line.strip():
            cur = False
    return out


def starter_cmdline():
    with open("/proc/self/cmdline", "rb") as f:
        return f.read().rstrip(b"\0").replace(b"\0", b" ").decode()


def in_ns_pid(pidfile, exe):
    """A shell command: the PID the namespace gives it written to pidfile, then exe in its place."""
    return f"sh -c 'echo $$ > {pidfile}; exec {exe} deep'"


def read_pid(pidfile):
    with open(pidfile) as f:
        return f.read().strip()


def run_in(cmd, user=None):
    """cmd under sh, as user if given; its output for the failure message."""
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.stdout + p.stderr


def make_root(root, exe_name):
    """A root directory holding the crasher (as exe_name) and the libraries it loads, at their paths."""
    os.makedirs(root, exist_ok=True)
    libs = re.findall(r"(/\S+) \(0x", subprocess.run(["ldd", CRASHER], capture_output=True, text=True).stdout)
    for lib in libs:
        dst = root + os.path.realpath(lib)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(os.path.realpath(lib), dst)
        if os.path.realpath(lib) != lib:  # the name the loader asks for
            os.makedirs(os.path.dirname(root + lib), exist_ok=True)
            if not os.path.lexists(root + lib):
                os.symlink(os.path.realpath(lib), root + lib)
    shutil.copy(CRASHER, os.path.join(root, exe_name))
    os.chmod(root, 0o755)


def check_host(j, pid):
    e = {k: v.decode(errors="replace") for k, v in j.entry(pid).items()}
    for f in CONTAINER_FIELDS:
        check(f not in e, f"a host crash labelled a container's: {f}={e.get(f)!r}")
    return e


def case_facts():
    """mount + PID namespaces, the binary on a tmpfs only the namespace sees, EnterNamespace=yes:
    the container's command line (the process that started it), its PID as the container sees
    it (what its shell said), UID and GID unchanged (no user namespace), the root, and traces that
    name the hidden binary's functions; a host crash beside it has none of these."""
    env, j, d = setup({"EnterNamespace": "yes"})
    host, _ = crash("segv")
    hidden = os.path.join(env.base, "hidden")
    os.mkdir(hidden)
    exe = os.path.join(hidden, "crasher-ct")
    pidfile = os.path.join(env.base, "inner.pid")
    out = run_in(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c",
                  f"mount -t tmpfs tmpfs {hidden} && cp {CRASHER} {exe} && {in_ns_pid(pidfile, exe)}; true"])
    check(not os.path.exists(exe), "the binary leaked out of the namespace")
    e = entry_by_comm(j, "crasher-ct")
    inner = read_pid(pidfile)
    check(e.get("COREDUMP_CONTAINER_CMDLINE") == starter_cmdline(),
          f"container command line {e.get('COREDUMP_CONTAINER_CMDLINE')!r}, expected this test's ({out})")
    check(e.get("COREDUMP_CONTAINER_PID") == inner, f"PID in the container: {e.get('COREDUMP_CONTAINER_PID')!r}, "
          f"the shell said {inner}")
    check(int(e["COREDUMP_PID"]) > 10 and e["COREDUMP_PID"] != inner, f"host PID {e['COREDUMP_PID']}")
    check(e.get("COREDUMP_CONTAINER_UID") == e["COREDUMP_UID"] == "0", "UID in the container")
    check(e.get("COREDUMP_CONTAINER_GID") == e["COREDUMP_GID"] == "0", "GID in the container")
    check(e.get("COREDUMP_ROOT") == "/", f"root {e.get('COREDUMP_ROOT')!r}")
    frames = crashing_frames(e)
    check([f[0] for f in frames[:3]] == DEEP and all(f[1] == "crasher-ct" for f in frames[:3]),
          f"the container binary's functions: {frames[:5]}\n{e['MESSAGE'][:600]}")
    check_host(j, host)
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: PID {e['COREDUMP_PID']} (container PID {e['COREDUMP_CONTAINER_PID']}), "
          f"container {e['COREDUMP_CONTAINER_CMDLINE']!r}, frames {frames[:3]}; host PID {host}: no container fields")


def case_userns():
    """A user's container with a user namespace (unshare --map-root-user) and a PID namespace:
    the UID and GID the container sees (0) beside the host's (the user's)."""
    user = test_user()
    env, j, d = setup({"EnterNamespace": "yes"})
    root = os.path.join(env.base, "uroot")
    make_root(root, "crasher-userns")
    out = run_in(["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "sh", "-c",
                  f"{root}/crasher-userns deep; true"], user=user)
    e = entry_by_comm(j, "crasher-userns")
    check(e["COREDUMP_UID"] == str(user.pw_uid) and e["COREDUMP_GID"] == str(user.pw_gid),
          f"host ids {e['COREDUMP_UID']}/{e['COREDUMP_GID']} ({out})")
    check(e.get("COREDUMP_CONTAINER_UID") == "0" and e.get("COREDUMP_CONTAINER_GID") == "0",
          f"ids in the container: {e.get('COREDUMP_CONTAINER_UID')}/{e.get('COREDUMP_CONTAINER_GID')}")
    check(e.get("COREDUMP_CONTAINER_PID") == "2", f"PID in the container: {e.get('COREDUMP_CONTAINER_PID')!r}")
    frames = crashing_frames(e)
    check([f[0] for f in frames[:3]] == DEEP, f"frames: {frames[:5]}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: UID {e['COREDUMP_UID']} → {e['COREDUMP_CONTAINER_UID']} in the container, "
          f"GID {e['COREDUMP_GID']} → {e['COREDUMP_CONTAINER_GID']}, PID {e['COREDUMP_PID']} → 2")


def case_enter_namespace_no():
    """EnterNamespace=no (the default, as systemd's): the container's own binary is not read (its
    frames stay unnamed, its build-id is still listed), the libraries it shares with the host
    (the very same files) still name theirs; the container facts are the same."""
    env, j, d = setup()
    hidden = os.path.join(env.base, "hidden")
    os.mkdir(hidden)
    exe = os.path.join(hidden, "crasher-noenter")
    pidfile = os.path.join(env.base, "inner.pid")
    out = run_in(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c",
                  f"mount -t tmpfs tmpfs {hidden} && cp {CRASHER} {exe} && {in_ns_pid(pidfile, exe)}; true"])
    e = entry_by_comm(j, "crasher-noenter")
    check(e.get("COREDUMP_CONTAINER_PID") == read_pid(pidfile) and "COREDUMP_CONTAINER_CMDLINE" in e, f"container facts ({out})")
    frames = crashing_frames(e)
    names = [f[0] for f in frames]
    check(not set(DEEP) & set(names), f"the container's binary was read: {frames}")
    check(len(frames) >= 3 and all(f[1] == "crasher-noenter" for f in frames[:3]), f"frames: {frames}")
    libc = re.findall(r"^#\d+\s+0x[0-9a-f]+ (\S+) \(libc\.so\.6 \+", e["MESSAGE"], re.M)
    check(set(libc) - {"n/a"}, f"no frame of the host's libc named: {libc}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: frames {frames}")


def case_chroot():
    """A chroot in the host's namespaces: no container, COREDUMP_ROOT the chroot, traces from the
    binaries beneath it."""
    env, j, d = setup()
    root = os.path.join(env.base, "chroot")
    make_root(root, "crasher-chroot")
    out = run_in(["chroot", root, "/crasher-chroot", "deep"])
    e = entry_by_comm(j, "crasher-chroot")
    for f in CONTAINER_FIELDS:
        check(f not in e, f"a chroot labelled a container: {f}={e.get(f)!r}")
    check(e.get("COREDUMP_ROOT") == root, f"root {e.get('COREDUMP_ROOT')!r} ({out})")
    frames = crashing_frames(e)
    check([f[0] for f in frames[:3]] == DEEP, f"frames: {frames[:5]}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: root {e['COREDUMP_ROOT']}, frames {frames[:3]}")


def case_overlay():
    """An overlay root as podman and docker build theirs (image layer below, container layer
    above, pivot_root into the merged tree), in mount and PID namespaces, with EnterNamespace=yes:
    the traces name the functions of the binary in the image layer."""
    env, j, d = setup({"EnterNamespace": "yes"})
    lower, upper, work, merged = (os.path.join(env.base, n) for n in ("lower", "upper", "work", "merged"))
    make_root(lower, "crasher-overlay")
    for p in (upper, work, merged):
        os.mkdir(p)
    script = (f"mount -t overlay overlay -o lowerdir={lower},upperdir={upper},workdir={work} {merged} && "
              f"mkdir -p {merged}/old && cd {merged} && pivot_root . old && exec /crasher-overlay deep")
    out = run_in(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script])
    e = entry_by_comm(j, "crasher-overlay")
    check(e.get("COREDUMP_CONTAINER_PID") == "1" and "COREDUMP_CONTAINER_CMDLINE" in e, f"container facts ({out})")
    frames = crashing_frames(e)
    check([f[0] for f in frames[:3]] == DEEP, f"frames: {frames[:5]}\n{e['MESSAGE'][:800]}")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: root {e.get('COREDUMP_ROOT')!r}, exe {e.get('COREDUMP_EXE')!r}, frames {frames[:3]}")


if __name__ == "__main__":
    run_cases({"facts": case_facts, "userns": case_userns, "enter_namespace_no": case_enter_namespace_no,
               "chroot": case_chroot, "overlay": case_overlay})
