#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real programs crash on the live kernel; each must end as exactly one stored core that
decompresses to a valid ELF core of that process, with the right owner, mode, ACL, xattrs."""
import os
import re
import shutil
import signal
import stat

from cdtest import (CRASHER, Env, acl_users, check, crash, decompress, elf_core_info, gdb_threads, read_file, run_cases,
                    save_sysctl, test_user, xattrs, SUID_DUMPABLE)

ET_CORE = 4


def escape_comm(comm):
    """As coredump_escape_comm(): control characters, non-ASCII, '/', '.', ' ' and '\\' as \\xHH."""
    return "".join(f"\\x{b:02x}" if b < 32 or b >= 127 or chr(b) in "/. \\" else chr(b) for b in comm.encode())


def check_name(path, comm, uid, pid, suffix):
    """The stored core's name is exactly core.COMM.UID.BOOTID.PID.USEC<suffix>, with this crash's
    comm, uid and PID and this boot's id; returns USEC."""
    boot = read_file("/proc/sys/kernel/random/boot_id").replace("-", "")
    name = os.path.basename(path)
    m = re.fullmatch(rf"core\.{re.escape(escape_comm(comm))}\.{uid}\.{boot}\.{pid}\.([0-9]+){re.escape(suffix)}", name)
    check(m, f"bad name {name}: expected core.{escape_comm(comm)}.{uid}.{boot}.{pid}.USEC{suffix}")
    return m.group(1)


def verify_core(env, path, pid, sig, exe=CRASHER, threads=1, uid=0):
    st = os.stat(path)
    check(stat.S_IMODE(st.st_mode) == 0o640 and st.st_uid == 0 and st.st_gid == 0,
          f"{path}: mode {oct(st.st_mode)} owner {st.st_uid}:{st.st_gid}, expected 0640 root:root")
    comm = os.path.basename(exe)[:15]
    usec = check_name(path, comm, uid, pid, ".zst")
    core = decompress(path, os.path.join(env.base, "core.elf"))
    info = elf_core_info(core)
    check(info["type"] == ET_CORE, f"e_type {info['type']}, expected ET_CORE")
    check(info["pids"] and info["pids"][0] == pid, f"NT_PRSTATUS pids {info['pids'][:3]}, expected {pid} first")
    check(info["signal"] == sig, f"NT_SIGINFO signal {info['signal']}, expected {sig}")
    check(info["threads"] == threads, f"{info['threads']} threads in the core, expected {threads}")
    seen = gdb_threads(exe, core)
    check(seen == threads, f"gdb sees {seen} threads, expected {threads}")
    x = xattrs(path)
    for k, v in {"pid": str(pid), "uid": str(uid), "comm": comm, "exe": os.path.realpath(exe)}.items():
        check(x.get(k) == v, f"xattr user.coredump.{k}={x.get(k)!r}, expected {v!r}")
    for k in ("gid", "timestamp", "hostname", "rlimit"):
        check(k in x, f"xattr user.coredump.{k} missing")
    check(x["timestamp"] == usec, f"USEC {usec} of the name is not the crash's time {x['timestamp']}")
    os.unlink(core)
    return x


def one_crash(mode, *args, sig, threads=1):
    env = Env()
    d = env.start()
    pid, rc = crash(mode, *args)
    check(rc == -sig, f"crasher ended with {rc}, expected -{sig}")
    cores = env.wait_cores(1)
    d.wait_log(rf"Crash of PID {pid} .*core complete")
    check(len(env.cores()) == 1, f"expected exactly one core: {env.cores()}")
    verify_core(env, cores[0], pid, sig, threads=threads)
    check(d.stop() == 0, "daemon did not stop cleanly")


def case_segv():
    one_crash("segv", sig=signal.SIGSEGV)


def case_abort():
    one_crash("abort", sig=signal.SIGABRT)


def case_threads64():
    one_crash("threads", 64, sig=signal.SIGSEGV, threads=65)


def case_mem200():
    one_crash("mem", 200, sig=signal.SIGSEGV)


def case_user():
    """A plain user's crash: readable by that user (ACL), by nobody else."""
    user = test_user()
    env = Env()
    exe = os.path.join(env.base, "crasher")
    shutil.copy(CRASHER, exe)
    os.chmod(exe, 0o755)
    d = env.start()
    pid, rc = crash("segv", user=user, exe=exe)
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    path = env.wait_cores(1)[0]
    verify_core(env, path, pid, signal.SIGSEGV, exe=exe, uid=user.pw_uid)
    check(acl_users(path) == [user.pw_uid], f"ACL users {acl_users(path)}, expected [{user.pw_uid}]")
    r = os.system(f"setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups cat {path} > /dev/null 2>&1")
    check(r == 0, "the crashing user cannot read their own core")
    r = os.system(f"setpriv --reuid=65534 --regid=65534 --clear-groups cat {path} > /dev/null 2>&1")
    check(r != 0, "another user can read the core")
    d.stop()


def case_setuid():
    """A setuid-root program crashed by a user: a sensitive dump, root-only."""
    user = test_user()
    save_sysctl(SUID_DUMPABLE)
    env = Env()
    with open(SUID_DUMPABLE, "w") as f:
        f.write("2")
    exe = os.path.join(env.base, "suid-crasher")
    shutil.copy(CRASHER, exe)
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    d = env.start()
    pid, rc = crash("segv", user=user, exe=exe)
    check(rc == -signal.SIGSEGV, f"crasher ended with {rc}")
    path = env.wait_cores(1)[0]
    verify_core(env, path, pid, signal.SIGSEGV, exe=exe, uid=user.pw_uid)
    check(acl_users(path) == [], f"setuid core has an ACL for {acl_users(path)}; must be root-only")
    r = os.system(f"setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups cat {path} > /dev/null 2>&1")
    check(r != 0, "the user can read the core of a setuid program")
    d.stop()


def case_compressions():
    """lz4 and uncompressed (sparse) storage decompress to the same kind of core."""
    for compress, suffix in (("lz4", ".lz4"), ("no", "")):
        env = Env({"Compress": compress})
        d = env.start()
        pid, _ = crash("mem", 32)
        path = env.wait_cores(1)[0]
        check_name(path, "crasher", 0, pid, suffix)  # Compress=no: no suffix at all
        core = decompress(path, os.path.join(env.base, "core.elf"))
        info = elf_core_info(core)
        check(info["type"] == ET_CORE and info["pids"][0] == pid, f"Compress={compress}: bad core {info}")
        gdb_threads(CRASHER, core)
        if not suffix:
            st = os.stat(path)
            check(st.st_blocks * 512 < st.st_size, f"uncompressed core is not sparse ({st.st_blocks * 512} of {st.st_size})")
        d.stop()


run_cases({n[5:]: f for n, f in globals().items() if n.startswith("case_")})
