#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Forwarding into a container (systemd's CoredumpReceive=), between two real coredumpd: the
host's (with a real journald) and one inside a container made here (mount, PID and, for one
case, user namespaces, its own /run and /proc) that takes forwarded crashes on its
/run/systemd/coredump. The container's unit is a cgroup of the unified hierarchy with the
xattrs PID 1 sets for Delegate=yes and CoredumpReceive=yes. The container's store is read back:
the core decompressed and read as an ELF core, the record in the container's terms. Also: the
host keeps its copy or not (KeepForwarded=), a container that did not ask, one whose collector
is gone, one whose collector never reads (ForwardTimeoutSec=), and hostile clients on the
receiving socket."""
import array
import ctypes
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import uuid

from cdtest import (COREDUMPD, CORE_PATTERN, CRASHER, Env, Journal, check, decompress, elf_core_info, fd_targets,
                    parse_export, read_exports, read_file, require_socket, run_cases, scaled, skip, wait_until,
                    write_file, _restore)


USERNS_BASE, USERNS_SIZE = 100000, 65536
# the receiving socket's bounds: FORWARD_FIELDS_MAX (src/shared/forward-proto.h), FIELD_NAME_MAX
# (src/shared/record.h), RECEIVE_TIMEOUT_USEC (src/manager/receive.h)
FORWARD_FIELDS_MAX = 1024
FIELD_NAME_MAX = 64
RECEIVE_TIMEOUT_S = 10
CLONE_NEWUSER = 0x10000000


class UsernsProcess:
    """argv as root of a new user namespace mapping 0..65535 to 100000.. (what unshare
    --map-users does with newuidmap; root writes the maps itself here, /etc/subuid untouched)."""

    def __init__(self, argv, env, preexec):
        libc = ctypes.CDLL(None, use_errno=True)
        go_r, go_w = os.pipe()
        ready_r, ready_w = os.pipe()
        self.returncode = None
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(go_w)
                os.close(ready_r)
                preexec()
                if libc.unshare(CLONE_NEWUSER) != 0:
                    os._exit(120)
                os.write(ready_w, b"1")
                os.read(go_r, 1)
                os.setresgid(0, 0, 0)
                os.setresuid(0, 0, 0)
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(121)
        os.close(go_r)
        os.close(ready_w)
        os.read(ready_r, 1)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{self.pid}/{name}", "w") as f:
                f.write(f"0 {USERNS_BASE} {USERNS_SIZE}\n")
        os.write(go_w, b"1")
        os.close(go_w)
        os.close(ready_r)

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        deadline = time.monotonic() + (timeout or 3600)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("userns", timeout)
            time.sleep(0.05)
        return self.returncode

    def kill(self):
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)


def cgroup2():
    for where in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(where, "cgroup.procs")) and os.path.exists(os.path.join(where, "cgroup.controllers")):
            return where
    skip("no cgroup2 (unified) hierarchy mounted")


class Unit:
    """A unit's cgroup as PID 1 would make it for a container (…slice/NAME.service/payload), with
    the xattrs of Delegate=yes and, if asked, CoredumpReceive=yes."""

    def __init__(self, receive=True):
        tag = uuid.uuid4().hex[:8]
        self.slice = os.path.join(cgroup2(), f"cds-test-{tag}.slice")
        self.name = f"cds-ct-{tag}.service"
        self.path = os.path.join(self.slice, self.name)
        self.payload = os.path.join(self.path, "payload")
        os.makedirs(self.payload)
        _restore.append((self.remove, self.slice))
        os.setxattr(self.path, "trusted.delegate", b"1")
        os.setxattr(self.path, "user.delegate", b"1")
        if receive:
            os.setxattr(self.path, "user.coredump_receive", b"1")

    def remove(self):
        for d in (self.payload, self.path, self.slice):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


class Container:
    """A user namespace of its own (as systemd-nspawn -U, rootless podman: the forwarder joins its
    PID namespace, which takes CAP_SYS_ADMIN in the namespace's owner), then unshare --mount
    --pid --cgroup --fork --mount-proc: a shell as its PID 1 in the unit's payload
    cgroup, a tmpfs over /run, and, with collector, our coredumpd taking forwarded crashes on
    /run/systemd/coredump (no kernel socket registered: the pattern is the host's)."""

    def __init__(self, env, unit, collector="coredumpd", userns=True):
        self.env, self.unit = env, unit
        self.dir = os.path.join(env.base, "ct-" + uuid.uuid4().hex[:6])
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o755)
        self.store = os.path.join(self.dir, "store")
        self.conf = os.path.join(self.dir, "coredump.conf")
        with open(self.conf, "w") as f:
            f.write(f"[Coredump]\nDirectory={self.store}\nTimeoutSec=60\n")
        self.ready = os.path.join(self.dir, "ready")
        self.fifo = os.path.join(self.dir, "commands")
        os.mkfifo(self.fifo)
        self.log = os.path.join(self.dir, "collector.log")
        if collector == "coredumpd":
            start = (f"{COREDUMPD} --receive=/run/systemd/coredump --socket=/run/cds/kernel.sock --control= "
                     f"--config={self.conf} --config-dir={self.dir}/none --no-register >{self.log} 2>&1 & "
                     f"while [ ! -S /run/systemd/coredump ]; do sleep 0.05; done; ")
        elif collector == "stalled":  # a socket nobody ever accepts on
            start = (f"python3 -c 'import socket,time; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); "
                     f"s.bind(\"/run/systemd/coredump\"); s.listen(16); time.sleep(3600)' & "
                     f"while [ ! -S /run/systemd/coredump ]; do sleep 0.05; done; ")
        else:
            start = ""
        # PID 1 of the container runs what the test writes to the FIFO, so that crashes are its
        # descendants (as in a real container); stop() kills it, and the namespace with it
        # The mounts first, in this shell: with "&&" up to the collector's "&" the whole list
        # went to the background, and the wait for the socket could end at once on a machine
        # whose own /run has a /run/systemd/coredump (systemd-coredump's), before the tmpfs hid it.
        script = (f"{{ mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/systemd && mkdir -m 0700 /run/cds; }} "
                  f"|| exit 1; {start}echo $$ > {self.ready}; while read -r cmd < {self.fifo}; do sh -c \"$cmd\"; done")
        cmd = ["unshare", "--mount", "--pid", "--cgroup", "--fork", "--mount-proc", "--propagation", "private",
               "sh", "-c", script]
        env_vars = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
        if userns:
            os.chown(self.dir, USERNS_BASE, USERNS_BASE)
            self.proc = UsernsProcess(cmd, env_vars, self._enter_cgroup)
        else:
            self.proc = subprocess.Popen(cmd, env=env_vars, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         preexec_fn=self._enter_cgroup)
        _restore.append((self.stop, f"container {self.proc.pid}"))
        wait_until(lambda: os.path.exists(self.ready) or self.proc.poll() is not None, 30, "the container to start")
        check(self.proc.poll() is None, f"the container exited: {read_file(self.log) if os.path.exists(self.log) else ''}")

    def _enter_cgroup(self):
        with open(os.path.join(self.unit.payload, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def run(self, command):
        with open(self.fifo, "w") as f:
            f.write(command + "\n")

    def crash(self, mode="segv", exe=CRASHER):
        """A crash of the crasher (or exe), a child of the container's PID 1; its PID there."""
        tag = uuid.uuid4().hex[:6]
        pidfile, done = os.path.join(self.dir, f"crash-{tag}.pid"), os.path.join(self.dir, f"crash-{tag}.done")
        self.run(f"sh -c 'echo $$ > {pidfile}; exec {exe} {mode}'; touch {done}")
        wait_until(lambda: os.path.exists(done), 120, "the crash in the container")
        return int(read_file(pidfile))

    def outer_pid(self):
        """The container's PID 1, as the host numbers it (the child of unshare)."""
        return int(read_file(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").split()[0])

    def records(self):
        if not os.path.isdir(self.store):
            return []
        out = []
        for f in sorted(os.listdir(self.store)):
            if f.startswith("record."):
                with open(os.path.join(self.store, f), "rb") as fh:
                    out.append(parse_export(fh.read())[0])
        return out

    def cores(self):
        return sorted(os.path.join(self.store, f) for f in os.listdir(self.store) if f.startswith("core.")) \
            if os.path.isdir(self.store) else []

    def stop(self):
        """Kills the container's PID 1, and with it everything in its PID namespace."""
        if self.proc.poll() is None:
            try:
                os.kill(self.outer_pid(), signal.SIGKILL)
            except (OSError, IndexError, ValueError):
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def memfds(d):
    """The memfds the daemon holds (each crash's record is one while its worker has it)."""
    return fd_targets(d.proc.pid, "/memfd:")


def host_records(env, n, comm=b"crasher", timeout=60):
    return wait_until(lambda: (lambda rs: rs if len(rs) >= n else None)(
        [r for r in read_exports(env, "record") if r.get("COREDUMP_COMM") == comm]), timeout, f"{n} host records")


def host_record(env, comm=b"crasher", timeout=60):
    def found():
        rs = [r for r in read_exports(env, "record") if r.get("COREDUMP_COMM") == comm]
        check(len(rs) <= 1, f"{len(rs)} host records")
        return rs and rs[0]
    return wait_until(found, timeout, "the host's record")


def setup(config=None):
    env = Env(config or {})
    j = Journal(env)
    d = env.start(journal=j)
    return env, j, d


def check_container_core(ct, inner_pid):
    """The container's record names the crash in its own terms and its core is a full ELF core."""
    recs = wait_until(lambda: ct.records() or None, 60, f"the container's record ({read_file(ct.log)})")
    check(len(recs) == 1, f"{len(recs)} records in the container")
    r = recs[0]
    check(r.get("COREDUMP_FORWARDED") == b"1", f"COREDUMP_FORWARDED: {r.get('COREDUMP_FORWARDED')}")
    check(r.get("COREDUMP_PID") == str(inner_pid).encode(),
          f"the container records PID {r.get('COREDUMP_PID')}, its own PID is {inner_pid}")
    check(r.get("COREDUMP_BY_PIDFD") == b"1", "the pidfd was not used")
    check("COREDUMP_CONTAINER_CMDLINE" not in r and "COREDUMP_CONTAINER_PID" not in r,
          "the container's record describes a container from outside")
    check(r.get("COREDUMP_EXE") == CRASHER.encode(), f"exe {r.get('COREDUMP_EXE')}")
    cores = ct.cores()
    check(len(cores) == 1, f"cores in the container: {cores}")
    info = elf_core_info(decompress(cores[0], os.path.join(ct.dir, "core")))
    check(info["threads"] >= 1, f"the forwarded core is not a core: {info}")
    return r, info


def case_forward():
    """A container that asked (CoredumpReceive=yes): its collector lists the crash with its own
    PID for it; the host keeps its record (COREDUMP_FORWARDED_TO, the unit) but not the core
    (KeepForwarded=no, the default, as systemd-coredump keeps nothing)."""
    env, j, d = setup()
    unit = Unit()
    ct = Container(env, unit)
    inner = ct.crash()
    r, info = check_container_core(ct, inner)
    h = host_record(env)
    check(h.get("COREDUMP_FORWARDED_TO") == unit.name.encode(), f"host record: {h.get('COREDUMP_FORWARDED_TO')}")
    check("COREDUMP_FILENAME" not in h and not env.cores(), f"the host kept the core: {env.cores()}")
    check(h.get("COREDUMP_CONTAINER_PID") == str(inner).encode(), "host record's container PID")
    e = j.entry(int(h["COREDUMP_PID"]))
    check(e.get("COREDUMP_FORWARDED_TO") == unit.name.encode(), "the host's journal entry")
    check(r.get("COREDUMP_UNIT") is None or r.get("COREDUMP_UNIT") != unit.name.encode(),
          "the container's record names the host's unit")
    # nothing of the forwarding left in the daemon: no record memfd, no pidfd but its workers'
    wait_until(lambda: not memfds(d), 10, lambda: f"the daemon to close its record memfds: {memfds(d)}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: host PID {h['COREDUMP_PID'].decode()} → container PID {r['COREDUMP_PID'].decode()}, "
          f"core {info['threads']} threads; host: FORWARDED_TO={h['COREDUMP_FORWARDED_TO'].decode()}, no core")


def case_keep():
    """KeepForwarded=yes: both keep the core."""
    env, j, d = setup({"KeepForwarded": "yes"})
    unit = Unit()
    ct = Container(env, unit)
    inner = ct.crash()
    check_container_core(ct, inner)
    h = host_record(env)
    check(h.get("COREDUMP_FORWARDED_TO") == unit.name.encode() and len(env.cores()) == 1,
          f"host: {h.get('COREDUMP_FORWARDED_TO')}, cores {env.cores()}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")


def case_result_twice():
    """A worker sends RESULT twice while its crash is being forwarded (a fault of the test build,
    as a worker the core took over could): a protocol violation, killed; the forwarding stops and
    the core it stored stays on the host whole. Before, the second RESULT ran the result again:
    the link failed and the file being forwarded was truncated to nothing."""
    if os.environ.get("CDS_WORKER_FAULTS") != "1":
        skip("needs a build with -Dworker-test-faults=true (the sanitizer build of tools/run-tests.sh)")
    env = Env({"KeepForwarded": "yes"})
    j = Journal(env)
    d = env.start(journal=j, environ={"COREDUMP_WORKER_FAULT": "twice@result"})
    exe = os.path.join(env.base, "crasher-fault")
    shutil.copy(CRASHER, exe)
    os.chmod(env.base, 0o755)
    unit = Unit()
    ct = Container(env, unit)
    ct.crash(exe=exe)
    print("observed:", d.wait_log(r"Killing worker \d+: sent a message after its result", timeout=60))
    h = host_record(env, comm=b"crasher-fault")
    cores = env.cores()
    check(len(cores) == 1 and h.get("COREDUMP_FILENAME", b"").decode() == cores[0],
          f"the host's core is not kept: {cores}, record {h.get('COREDUMP_FILENAME')}")
    info = elf_core_info(decompress(cores[0], os.path.join(env.base, "twice.core")))
    check(info["type"] == 4 and info["threads"] >= 1, f"the host's core is not whole: {info}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: host core {os.path.basename(cores[0])} kept whole, {info['threads']} thread(s)")


def case_not_asked():
    """Delegated but without CoredumpReceive=: the host records it, the container sees nothing."""
    env, j, d = setup()
    unit = Unit(receive=False)
    ct = Container(env, unit)
    ct.crash()
    h = host_record(env)
    check("COREDUMP_FORWARDED_TO" not in h and "COREDUMP_FORWARD_ERROR" not in h, f"host record: {h}")
    check(len(env.cores()) == 1, "the host has no core")
    # the host writes its record only once a forward has ended: had it forwarded the crash, the
    # container's record would be there now
    check(not ct.records(), f"the container got it: {ct.records()}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")


def case_collector_gone():
    """The container asked but its collector is not running: the host keeps the crash, and its
    record says why it is not in the container."""
    env, j, d = setup()
    ct = Container(env, Unit(), collector=None)
    ct.crash()
    h = host_record(env)
    check(h.get("COREDUMP_FORWARD_ERROR") == b"the container has no collector listening on /run/systemd/coredump",
          f"host record: {h.get('COREDUMP_FORWARD_ERROR')}")
    check(len(env.cores()) == 1 and "COREDUMP_FILENAME" in h, "the host did not keep it")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: {h['COREDUMP_FORWARD_ERROR'].decode()}")


def case_collector_symlink():
    """The container's /run/systemd/coredump leads by symbolic links to a socket the host's
    coredumpd sees and the container does not (it hides the socket's directory under a tmpfs of
    its own): the socket itself linked by absolute path, through /proc/1/root, and its directory
    linked in place of /run/systemd. The forwarder resolves the path beneath the container's
    root, so it never reaches that socket; the host keeps the crash and says the container has
    no collector."""
    for how in ("link", "proc", "dir"):
        env, j, d = setup()
        hidden = os.path.join(env.base, "hidden")
        os.mkdir(hidden)
        bait = os.path.join(hidden, "coredump")
        plant = {"link": f"ln -s {bait} /run/systemd/coredump",
                 "proc": f"ln -s /proc/1/root{bait} /run/systemd/coredump",
                 "dir": f"rmdir /run/systemd && ln -s {hidden} /run/systemd"}[how]
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        _restore.append((listener.close, "the host's bait socket"))
        listener.bind(bait)
        listener.listen(16)
        listener.setblocking(False)
        ct = Container(env, Unit(), collector=None)
        planted = os.path.join(ct.dir, "planted")
        ct.run(f"mount -t tmpfs tmpfs {hidden} && {plant} && touch {planted}")
        wait_until(lambda: os.path.exists(planted), 30, f"the symbolic link in the container ({plant})")
        ct.crash()
        h = host_record(env)
        try:
            listener.accept()[0].close()
            reached = True
        except BlockingIOError:
            reached = False
        check(not reached, f"the forwarder connected to the host's socket through the container's {plant!r}")
        why = h.get("COREDUMP_FORWARD_ERROR", b"")
        check(why == b"the container has no collector listening on /run/systemd/coredump",
              f"{plant!r}: host record: {why!r}")
        check("COREDUMP_FILENAME" in h, f"{plant!r}: the host did not keep the core")
        print(f"observed: {plant!r}: the host's socket untouched; {why.decode()}")
        ct.stop()
        listener.close()
        check(d.stop() == 0, "host daemon did not stop cleanly")
        j.stop()


STALLED_FORWARD_S = 3    # collector_stalled's ForwardTimeoutSec=
STALLED_DEADLINE_S = 30  # ... and its TimeoutSec=, which must not be what releases the task


def case_collector_stalled():
    """A collector that never reads: after ForwardTimeoutSec= the forwarder is killed, the task
    released, the host keeps the core and says why. The task is held while the forwarder tries,
    and released by ForwardTimeoutSec=, not by the per-crash deadline (TimeoutSec=, far later)."""
    env, j, d = setup({"ForwardTimeoutSec": str(STALLED_FORWARD_S), "TimeoutSec": str(STALLED_DEADLINE_S)})
    ct = Container(env, Unit(), collector="stalled")
    t0 = time.monotonic()
    ct.crash()
    took = time.monotonic() - t0
    h = host_record(env)
    check(b"ForwardTimeoutSec" in h.get("COREDUMP_FORWARD_ERROR", b""), f"host record: {h.get('COREDUMP_FORWARD_ERROR')}")
    check(len(env.cores()) == 1 and "COREDUMP_FILENAME" in h, "the host did not keep it")
    check(STALLED_FORWARD_S <= took < STALLED_DEADLINE_S, f"the crashed task was held {took:.1f} s, not from "
          f"ForwardTimeoutSec={STALLED_FORWARD_S} until before TimeoutSec={STALLED_DEADLINE_S}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: task released after {took:.1f} s; {h['COREDUMP_FORWARD_ERROR'].decode()}")


def proc_status(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def case_decompressor_confined():
    """Third review, finding 6: the forwarder's child that decompresses the stored core (bytes a
    worker wrote) into the pipe to the container's collector, caught while the collector does not
    read: nobody, no capability in any set, no_new_privs, a seccomp filter of its own on top of
    the forwarder's, eight descriptors, no file to write, no process to start. Before: nobody with
    no_new_privs only."""
    env, j, d = setup({"ForwardTimeoutSec": "6"})
    ct = Container(env, Unit(), collector="stalled")
    ct.run(f"{CRASHER} segv >/dev/null 2>&1 &")

    def decompressor():  # (coredumpd execs the forwarder through a descriptor: its comm is a number)
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                s = proc_status(pid)
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    forwarder = f.read().startswith(b"coredump-forward\0")
                if forwarder and s["Uid"].split()[0] == "65534":
                    return pid, s
            except (FileNotFoundError, ProcessLookupError, KeyError):
                pass
        return None
    pid, s = wait_until(decompressor, 20, lambda: f"the forwarder's decompressor:\n{d.log_text()}")
    parent = proc_status(s["PPid"])
    limits = open(f"/proc/{pid}/limits").read()
    check(s["Uid"].split() == ["65534"] * 4 and s["Gid"].split() == ["65534"] * 4 and s["Groups"].strip() == "",
          f"decompressor ids: {s['Uid']} / {s['Gid']} / {s['Groups']}")
    check(all(int(s[k], 16) == 0 for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")),
          f"decompressor capabilities: {[s[k] for k in ('CapPrm', 'CapEff', 'CapBnd')]}")
    check(s["NoNewPrivs"] == "1" and s["Seccomp"] == "2" and
          int(s["Seccomp_filters"]) > int(parent.get("Seccomp_filters", "0")),
          f"decompressor: NoNewPrivs {s['NoNewPrivs']}, Seccomp {s['Seccomp']}, filters {s['Seccomp_filters']} "
          f"(the forwarder's {parent.get('Seccomp_filters')})")
    for name, want in (("Max open files", "8"), ("Max file size", "0"), ("Max processes", "0")):
        line = next(l for l in limits.splitlines() if l.startswith(name))
        check(line.split()[len(name.split()):][:2] == [want, want], f"decompressor limit: {line}")
    h = host_record(env)
    check(b"ForwardTimeoutSec" in h.get("COREDUMP_FORWARD_ERROR", b"") and len(env.cores()) == 1,
          f"host record: {h.get('COREDUMP_FORWARD_ERROR')}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")


def case_unit_not_roots():
    """A unit whose cgroup PID 1 handed to a user (User= with Delegate=yes) may set user.* xattrs
    on it itself: it is not taken as having asked; the crash stays on the host."""
    env, j, d = setup()
    unit = Unit()
    os.chown(unit.path, 1001, 1001)
    ct = Container(env, unit)
    ct.crash()
    h = host_record(env)
    check("COREDUMP_FORWARDED_TO" not in h and "COREDUMP_FORWARD_ERROR" not in h, f"host record: {h}")
    check(len(env.cores()) == 1, "the host has no core")
    check(not ct.records(), "the container got it")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")


def case_busy():
    """Three crashes at once into a collector that never reads: two are held for
    ForwardTimeoutSec= (FORWARDS_PER_UNIT_MAX), the third stays on the host at once, busy."""
    env, j, d = setup({"ForwardTimeoutSec": "8"})
    ct = Container(env, Unit(), collector="stalled")
    ct.run(f"for i in 1 2 3; do {CRASHER} segv >/dev/null 2>&1 & done")
    recs = host_records(env, 3)
    errors = sorted(r.get("COREDUMP_FORWARD_ERROR", b"").decode() for r in recs)
    check(sum("busy" in e for e in errors) == 1 and sum("ForwardTimeoutSec" in e for e in errors) == 2,
          f"errors: {errors}")
    check(all("COREDUMP_FILENAME" in r for r in recs) and len(env.cores()) == 3, "a core was not kept")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: {errors}")


def case_privileged():
    """A container without a user namespace of its own (systemd-nspawn without -U): the
    forwarder joins its PID namespace with the CAP_SYS_ADMIN coredumpd keeps permitted for it,
    and sends as host root (root there too); the container lists the crash with its PID."""
    env, j, d = setup()
    unit = Unit()
    ct = Container(env, unit, userns=False)
    inner = ct.crash()
    r, _ = check_container_core(ct, inner)
    h = host_record(env)
    check(h.get("COREDUMP_FORWARDED_TO") == unit.name.encode(), f"host record: {h.get('COREDUMP_FORWARD_ERROR')}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: container PID {r['COREDUMP_PID'].decode()}, forwarded to {h['COREDUMP_FORWARDED_TO'].decode()}")


def case_userns():
    """A container with its own user namespace (uids 0.. inside are 100000.. outside): the
    forwarder enters it to connect as its root; the crash of its root is the container's UID 0."""
    env, j, d = setup()
    unit = Unit()
    ct = Container(env, unit, userns=True)
    inner = ct.crash()
    r, _ = check_container_core(ct, inner)
    h = host_record(env)
    check(h.get("COREDUMP_UID") == str(USERNS_BASE).encode() and r.get("COREDUMP_UID") == b"0",
          f"UID host {h.get('COREDUMP_UID')}, container {r.get('COREDUMP_UID')}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    print(f"observed: UID {h['COREDUMP_UID'].decode()} on the host, {r['COREDUMP_UID'].decode()} in the container")


def send_items(path, fields, fds=(), as_uid=None):
    """A client of the receiving socket: fields, then one empty datagram per fd; the answer is
    the socket being closed."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    if as_uid is not None:
        pid = os.fork()
        if pid == 0:
            os.setresuid(as_uid, as_uid, as_uid)
            try:
                s.connect(path)
                for f in fields:
                    s.send(f)
                s.close()
            except OSError:
                pass
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        return
    s.connect(path)
    try:  # the daemon closes the connection at the first thing it refuses
        for f in fields:
            s.send(f)
        for fd in fds:
            s.sendmsg([b""], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()


def case_hostile_clients():
    """The receiving socket, by hand (--receive=): refused and logged, nothing recorded, the
    daemon unharmed: a non-root client, a field without "=", a field after the core, no core, a
    write-only core, a pidfd that names another process than COREDUMP_PID, a pidfd of a
    process not dumping core, four descriptors; then a well-formed message with a pipe and no
    pidfd is taken (what a sender on a kernel without pidfds sends)."""
    env = Env()
    sockdir = os.path.join(env.ctldir, "fwd")  # reachable by a user, to show the daemon's own check
    os.mkdir(sockdir)
    os.chmod(sockdir, 0o755)
    path = os.path.join(sockdir, "forward.sock")
    d = env.start(extra=[f"--receive={path}", "--no-register"], environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"})
    wait_until(lambda: os.path.exists(path), 10, "the receiving socket")
    os.chmod(path, 0o666)  # as if misconfigured: the daemon still takes only root
    base = [b"COREDUMP_PID=%d" % os.getpid(), b"COREDUMP_UID=0", b"COREDUMP_GID=0", b"COREDUMP_SIGNAL=11",
            b"COREDUMP_COMM=forged", b"COREDUMP_TIMESTAMP=1"]
    r, w = os.pipe()
    sleeper = subprocess.Popen(["sleep", "60"])
    pidfd_other = os.pidfd_open(sleeper.pid)
    pidfd_self = os.pidfd_open(os.getpid())
    send_items(path, base, as_uid=65534)
    send_items(path, base + [b"NOEQUALS"], [r])
    send_items(path, base + [b"lower_case=1"], [r])
    send_items(path, base, [])
    send_items(path, base, [w])
    send_items(path, base, [r, pidfd_other])
    send_items(path, base, [r, pidfd_self])  # the right PID, but not dumping core
    send_items(path, base, [r, r, r, r])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.sendmsg([b""], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
    try:
        s.send(b"COREDUMP_PID=1")  # a field after the core
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()
    wait_until(lambda: d.log_text().count("Refused a forwarded crash") >= 9, 30, lambda: d.log_text())
    log = d.log_text()
    for why in ("not root", "a malformed field, or a field after the core", "no core descriptor",
                "not a readable pipe", "does not name the process", "more than three descriptors"):
        check(why in log, f"no refusal saying {why!r}:\n{log}")
    check(not [f for f in os.listdir(env.store) if f.startswith("record.")] if os.path.isdir(env.store) else True,
          "a refused message was recorded")
    # taken: a pipe with a small non-core payload, no pidfd
    r2, w2 = os.pipe()
    os.write(w2, b"not an ELF core")
    os.close(w2)
    send_items(path, [b"COREDUMP_PID=%d" % sleeper.pid, b"COREDUMP_UID=0", b"COREDUMP_GID=0", b"COREDUMP_SIGNAL=6",
                      b"COREDUMP_COMM=sleep", b"COREDUMP_CMDLINE=told by the sender"], [r2])
    rec = wait_until(lambda: [x for x in read_exports(env, "record") if x.get("COREDUMP_FORWARDED") == b"1"] or None,
                     30, lambda: d.log_text())[0]
    check(rec.get("COREDUMP_PID") == str(sleeper.pid).encode(), f"record {rec}")
    check("COREDUMP_BY_PIDFD" not in rec, "a crash without a pidfd is marked as pinned by one")
    sleeper.kill()
    sleeper.wait()
    for fd in (r, w, r2, pidfd_other, pidfd_self):
        os.close(fd)
    check(d.stop() == 0, "daemon did not stop cleanly")
    print("observed: every hostile message refused with its reason, the well-formed one recorded")


SO_PEERPIDFD = 77  # include/uapi/asm-generic/socket.h (6.5)


def forward_by_hand(path, conn, fields=()):
    """What a host's forwarder sends for the crash on conn, a kernel connection of the plain "@"
    protocol (the core streams on it): the crash's fields, the core and the pidfd."""
    pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    pidfd = conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
    try:
        send_items(path, [b"COREDUMP_PID=%d" % pid, b"COREDUMP_UID=%d" % uid, b"COREDUMP_GID=%d" % gid,
                          b"COREDUMP_SIGNAL=11", b"COREDUMP_COMM=crasher", *fields], [conn.fileno(), pidfd])
    finally:
        os.close(pidfd)
    return pid


def case_forwarded_not_again():
    """A crash that came forwarded is never forwarded again, even where its process's unit asks
    for it (a loop between collectors otherwise): a crash in a container that asked
    (CoredumpReceive=yes, its collector running) reaches a fake kernel socket here, which hands
    it on to the daemon's receiving socket as a host would; the daemon keeps it, and the
    container's collector never sees it."""
    require_socket("the test takes the kernel's connection itself, with the plain @ protocol")
    env = Env()
    path = os.path.join(env.rundir, "receive.sock")
    d = env.start(extra=[f"--receive={path}", "--no-register"])
    wait_until(lambda: os.path.exists(path), 10, "the receiving socket")
    fake = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fake.bind(os.path.join(env.rundir, "fake-kernel.sock"))
    fake.listen(4)
    fake.settimeout(60)
    write_file(CORE_PATTERN, "@" + fake.getsockname())
    unit = Unit()
    ct = Container(env, unit)
    ct.run(f"{CRASHER} segv")
    conn, _ = fake.accept()
    pid = forward_by_hand(path, conn)
    conn.close()
    rec = wait_until(lambda: [r for r in read_exports(env, "record") if r.get("COREDUMP_PID") == str(pid).encode()]
                     or None, 60, lambda: f"the record of PID {pid}:\n{d.log_text()}")[0]
    check(rec.get("COREDUMP_FORWARDED") == b"1", f"not taken as forwarded: {rec.get('COREDUMP_FORWARDED')}")
    check("COREDUMP_FORWARDED_TO" not in rec and "COREDUMP_FORWARD_ERROR" not in rec,
          f"the forwarded crash was forwarded again: {rec.get('COREDUMP_FORWARDED_TO')} "
          f"{rec.get('COREDUMP_FORWARD_ERROR')}")
    check(rec.get("COREDUMP_FILENAME") and os.path.exists(rec["COREDUMP_FILENAME"].decode()), "its core is not kept")
    info = elf_core_info(decompress(rec["COREDUMP_FILENAME"].decode(), os.path.join(env.base, "fwd.core")))
    # (its PIDs are the container's own)
    check(info["type"] == 4 and info["signal"] == 11, f"the kept core is not the crash's: {info}")
    # the record comes after any forward has ended: the container's would be there now
    check(not ct.records(), f"the container's collector got it: {ct.records()}")
    ct.stop()
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: PID {pid}'s forwarded crash kept here, not forwarded into {unit.name}")


def case_only_stored():
    """Only a stored core is forwarded: with Storage=none the host keeps its record, says nothing
    of a forward, and the container that asked gets nothing."""
    env, j, d = setup({"Storage": "none"})
    unit = Unit()
    ct = Container(env, unit)
    ct.crash()
    h = host_record(env)
    check("COREDUMP_FORWARDED_TO" not in h and "COREDUMP_FORWARD_ERROR" not in h,
          f"a core that was not stored was forwarded: {h.get('COREDUMP_FORWARDED_TO')} {h.get('COREDUMP_FORWARD_ERROR')}")
    check(not env.cores() and "COREDUMP_FILENAME" not in h, f"Storage=none stored {env.cores()}")
    check(not ct.records(), f"the container got it: {ct.records()}")
    ct.stop()
    check(d.stop() == 0, "host daemon did not stop cleanly")
    j.stop()


def case_receive_bounds():
    """The receiving socket's bounds against a hostile container root: FORWARD_FIELDS_MAX fields
    are taken, one more is refused; a field name of FIELD_NAME_MAX bytes is taken, one longer
    refused; a client that sends part of a message and stalls is closed at RECEIVE_TIMEOUT_USEC,
    and a well-formed message meanwhile is taken at once."""
    env = Env()
    path = os.path.join(env.rundir, "receive.sock")
    d = env.start(extra=[f"--receive={path}", "--no-register"], environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"})
    wait_until(lambda: os.path.exists(path), 10, "the receiving socket")
    sleeper = subprocess.Popen(["sleep", "120"])
    _restore.append((sleeper.kill, f"sleep {sleeper.pid}"))

    def message(n_fields, name_len=len("COREDUMP_X")):
        base = [b"COREDUMP_PID=%d" % sleeper.pid, b"COREDUMP_UID=0", b"COREDUMP_GID=0", b"COREDUMP_SIGNAL=6",
                b"COREDUMP_COMM=sleep", b"COREDUMP_" + b"N" * (name_len - len("COREDUMP_")) + b"=long name"]
        return base + [b"COREDUMP_FILLER=%d" % i for i in range(n_fields - len(base))]

    def pipe_core():
        r, w = os.pipe()
        os.write(w, b"not an ELF core")
        os.close(w)
        return r

    refused = d.log_text().count("Refused a forwarded crash")
    for fields in (message(FORWARD_FIELDS_MAX + 1), message(8, FIELD_NAME_MAX + 1)):
        r = pipe_core()
        send_items(path, fields, [r])
        os.close(r)
        refused += 1
        wait_until(lambda: d.log_text().count("Refused a forwarded crash") >= refused, 30, lambda: d.log_text())
    # a stalled client: half a message, then nothing
    stalled = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stalled.connect(path)
    t0 = time.monotonic()
    stalled.send(b"COREDUMP_PID=%d" % sleeper.pid)
    # meanwhile, the most a message may have
    r = pipe_core()
    send_items(path, message(FORWARD_FIELDS_MAX, FIELD_NAME_MAX), [r])
    os.close(r)
    rec = wait_until(lambda: [x for x in read_exports(env, "record") if x.get("COREDUMP_FORWARDED") == b"1"] or None,
                     30, lambda: d.log_text())
    check(len(rec) == 1, f"{len(rec)} forwarded records")
    check(rec[0].get("COREDUMP_FILLER") is not None and rec[0].get("COREDUMP_" + "N" * (FIELD_NAME_MAX - 9)) == b"long name",
          f"the fields at the bounds were not kept: {sorted(rec[0])[:20]}")
    taken = time.monotonic() - t0
    stalled.settimeout(RECEIVE_TIMEOUT_S + 30)
    check(stalled.recv(1) == b"", "the stalled client got data")
    closed = time.monotonic() - t0
    stalled.close()
    check(RECEIVE_TIMEOUT_S - 0.5 <= closed <= RECEIVE_TIMEOUT_S + scaled(5),
          f"the stalled client was closed after {closed:.1f} s, its deadline is {RECEIVE_TIMEOUT_S} s")
    check(taken < closed, "the well-formed message waited for the stalled client")
    check(len([x for x in read_exports(env, "record") if x.get("COREDUMP_FORWARDED") == b"1"]) == 1,
          "the stalled client's half message was recorded")
    check(d.stop() == 0, "daemon did not stop cleanly")
    print(f"observed: {FORWARD_FIELDS_MAX + 1} fields and a {FIELD_NAME_MAX + 1}-byte name refused; the most a "
          f"message may have taken after {taken:.2f} s; the stalled client closed after {closed:.1f} s")


if __name__ == "__main__":
    run_cases({"forwarded_not_again": case_forwarded_not_again, "only_stored": case_only_stored,
               "receive_bounds": case_receive_bounds, "forward": case_forward, "keep": case_keep, "result_twice": case_result_twice,
               "not_asked": case_not_asked,
               "collector_gone": case_collector_gone, "collector_symlink": case_collector_symlink,
               "collector_stalled": case_collector_stalled,
               "decompressor_confined": case_decompressor_confined,
               "userns": case_userns, "hostile_clients": case_hostile_clients, "unit_not_roots": case_unit_not_roots,
               "busy": case_busy, "privileged": case_privileged})

