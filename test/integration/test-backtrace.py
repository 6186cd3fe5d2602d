#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stack traces computed in the sandboxed worker while the core streams: read back from a real
journald, checked against the binaries (eu-readelf) and an independent unwinder (eu-stack on
the decompressed core)."""
import hashlib
import json
import os
import re
import shutil
import subprocess

from cdtest import (BUILD, CRASHER, PYTHON_SEGV, Env, Journal, check, crash, decompress, run_cases, test_user)

CRASHER_PKG = os.path.join(BUILD, "test", "crasher-pkg")
DEEP = ["cds_crash_inner", "cds_crash_middle", "cds_crash_outer"]


def entry_of(j, pid, timeout=30):
    return {k: v.decode(errors="replace") for k, v in j.entry(pid, timeout).items()}


def traces(message):
    """{tid: [(pc, symbol, module), ...]} in the order printed, from a MESSAGE."""
    out, cur = {}, None
    for line in message.splitlines():
        m = re.match(r"Stack trace of thread (\d+):$", line)
        if m:
            cur = out.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#(\d+)\s+0x([0-9a-f]{16}) (\S+) \((\S+) \+ 0x[0-9a-f]+\)$", line)
        if m and cur is not None:
            check(int(m.group(1)) == len(cur), f"frame numbers out of order: {line!r}")
            cur.append((int(m.group(2), 16), m.group(3), m.group(4)))
        elif line.strip() == "":
            cur = None
    return out


def setup(config=None, debug=False):
    env = Env(config or {})
    j = Journal(env)
    d = env.start(journal=j, environ={"COREDUMP_SOCKET_LOG_LEVEL": "debug"} if debug else None)
    return env, j, d


def check_deep(e, pid, exe_base):
    t = traces(e["MESSAGE"])
    check(len(t) == 4, f"{len(t)} threads traced, expected 4:\n{e['MESSAGE']}")
    tid = int(e["COREDUMP_TID"])
    check(tid != pid and tid in t, f"the crashing thread {tid} is not traced")
    check(list(t)[0] == tid, "the crashing thread is not listed first")
    check([f[1] for f in t[tid][:3]] == DEEP, f"crashing thread frames: {t[tid][:5]}")
    check(all(f[2] == exe_base for f in t[tid][:3]), f"module names: {t[tid][:3]}")
    return t


def case_deep():
    """Three calls deep in one of four threads, with debug info: the three functions in order
    for the crashing thread, all four threads traced; the record beside the core says the same."""
    env, j, d = setup()
    pid, _ = crash("deep")
    e = entry_of(j, pid)
    check_deep(e, pid, "crasher")
    check(e["MESSAGE"].startswith(f"Process {pid} (crasher) of user 0 dumped core.\n\nModule {CRASHER} with build-id "),
          f"MESSAGE head: {e['MESSAGE'][:300]!r}")
    rec = [f for f in os.listdir(env.store) if f.startswith("record.") and f".{pid}." in f]
    text = open(os.path.join(env.store, rec[0]), "rb").read()
    check(b"cds_crash_middle (crasher + 0x" in text and b"COREDUMP_PACKAGE_JSON=" in text, "the record lacks the traces")
    check(b"_CDS_" not in text, "internal fields in the record")
    d.stop()


def case_symtab():
    """Without debug info the symbol table still names the functions."""
    env, j, d = setup()
    exe = os.path.join(env.base, "crasher-nodebug")
    subprocess.run(["objcopy", "--strip-debug", CRASHER, exe], check=True)
    out = subprocess.run(["eu-readelf", "-S", exe], capture_output=True, text=True).stdout
    check(".debug_info" not in out and ".symtab" in out, "the stripped copy still has DWARF or lost its symtab")
    pid, _ = crash("deep", exe=exe)
    check_deep(entry_of(j, pid), pid, "crasher-nodebug")
    d.stop()


def readelf_build_id(path):
    out = subprocess.run(["eu-readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, f"no build-id in {path}")
    return m.group(1)


def case_build_ids():
    """COREDUMP_PACKAGE_JSON has every module with the build-id eu-readelf reads from the file."""
    env, j, d = setup()
    pid, _ = crash("segv")
    e = entry_of(j, pid)
    mods = json.loads(e["COREDUMP_PACKAGE_JSON"])
    check(CRASHER in mods and any("libc.so" in m for m in mods), f"modules: {list(mods)}")
    for path, meta in mods.items():
        check(meta["buildId"] == readelf_build_id(path), f"{path}: {meta['buildId']} != eu-readelf's")
        check(f"Module {path} with build-id {meta['buildId']}" in e["MESSAGE"], f"no Module line for {path}")
    d.stop()


def signature_of(e, exe_build_id):
    """COREDUMP_SIGNATURE by its definition in coredumpd(8), computed here from the entry's trace,
    with the executable's build-id as eu-readelf reads it from the file."""
    ids = {}
    for path, meta in json.loads(e.get("COREDUMP_PACKAGE_JSON", "{}")).items():
        ids.setdefault(os.path.basename(path), meta.get("buildId"))
    text = f"coredump-signature v1\nexe {exe_build_id}\nsignal {e['COREDUMP_SIGNAL']}\n"
    lines = e["MESSAGE"].split("Stack trace of thread ", 1)[1].splitlines()[1:]
    for line in lines[:5]:
        m = re.match(r"#\d+\s+0x([0-9a-f]+) .* \((\S+) \+ 0x([0-9a-f]+)\)$", line)
        check(m, f"frame line {line!r}")
        if m.group(2) == "n/a":
            pc = int(m.group(1), 16)
            text += f"frame none+{pc:#x}\n" if pc < 0x10000 else "frame none\n"
        else:
            ident = ids.get(m.group(2)) or f"file:{m.group(2)}"
            text += f"frame {ident}+0x{m.group(3)}\n"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def case_signature():
    """COREDUMP_SIGNATURE: the same crash at other addresses (ASLR) has the same one, as defined
    (recomputed here); another crash site another one; real programs (python3, bash) killed the
    same way twice have theirs each."""
    env, j, d = setup()
    runs = [crash("deep")[0] for _ in range(2)] + [crash("segv")[0]]
    es = [entry_of(j, pid) for pid in runs]
    deep = [traces(e["MESSAGE"])[int(e["COREDUMP_TID"])][0][0] for e in es[:2]]
    check(deep[0] != deep[1], f"the same crash at the same address twice ({deep[0]:#x}): ASLR is off, this proves less")
    sigs = [e.get("COREDUMP_SIGNATURE", "") for e in es]
    check(all(re.fullmatch(r"[0-9a-f]{32}", s) for s in sigs), f"signatures: {sigs}")
    exe_id = readelf_build_id(CRASHER)
    for e, s in zip(es, sigs):
        check(s == signature_of(e, exe_id), f"PID {e['COREDUMP_PID']}: {s} is not the defined signature "
              f"{signature_of(e, exe_id)}:\n{e['MESSAGE'][:2000]}")
    check(sigs[0] == sigs[1] and sigs[2] != sigs[0], f"deep, deep, segv: {sigs}")
    real = {}
    for name, cmd in (("python3", [shutil.which("python3"), "-c", PYTHON_SEGV]),
                      ("bash", ["/bin/bash", "-c", "kill -SEGV $$"])):
        got = []
        for _ in range(2):
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            check(p.wait(60) == -11, f"{name} did not die of SIGSEGV: {p.returncode}")
            got.append(entry_of(j, p.pid).get("COREDUMP_SIGNATURE", ""))
        check(len(got) == 2 and got[0] == got[1] and got[0], f"{name}: signatures {got}")
        real[name] = got[0]
    check(real["python3"] != real["bash"] and sigs[0] not in real.values(), f"distinct programs share: {real}")
    print(f"signatures: crasher deep {sigs[0]} (twice, frame 0 at {deep[0]:#x} and {deep[1]:#x}), segv {sigs[2]}, "
          f"python3 {real['python3']}, bash {real['bash']}")
    d.stop()


def case_package():
    """A binary with a .note.package: its name and version in the entry, in the JSON and the
    Module line, as systemd-coredump writes them."""
    env, j, d = setup()
    pid, _ = crash("segv", exe=CRASHER_PKG)
    e = entry_of(j, pid)
    check(e.get("COREDUMP_PACKAGE_NAME") == "crasher-pkg" and e.get("COREDUMP_PACKAGE_VERSION") == "1.2-3",
          f"package fields: {e.get('COREDUMP_PACKAGE_NAME')} {e.get('COREDUMP_PACKAGE_VERSION')}")
    meta = json.loads(e["COREDUMP_PACKAGE_JSON"])[CRASHER_PKG]
    check(meta == {"buildId": readelf_build_id(CRASHER_PKG), "type": "deb", "name": "crasher-pkg", "version": "1.2-3",
                   "architecture": "amd64"}, f"package JSON: {meta}")
    check(f"Module {CRASHER_PKG} from deb crasher-pkg-1.2-3" in e["MESSAGE"], e["MESSAGE"][:400])
    d.stop()


def case_mount_ns():
    """A binary that exists only inside the crashed process's private mount namespace is found
    there (the manager opens it through the process's root) and symbolizes the trace, where
    EnterNamespace=yes asks for that (test-container.py: the default, no)."""
    env, j, d = setup({"EnterNamespace": "yes"})
    hidden = os.path.join(env.base, "hidden")
    os.mkdir(hidden)
    exe = os.path.join(hidden, "crasher-ns")
    script = f"mount -t tmpfs tmpfs {hidden} && cp {CRASHER} {exe} && exec {exe} deep"
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], capture_output=True)
    check(not os.path.exists(exe), "the binary leaked out of the namespace")
    env.wait_cores(1)
    pids = sorted(int(f.split(".")[4]) for f in os.listdir(env.store) if f.startswith("core.crasher-ns."))
    check(len(pids) == 1, f"cores: {os.listdir(env.store)} (unshare: {p.stderr.decode()})")
    e = entry_of(j, pids[0])
    check_deep(e, pids[0], "crasher-ns")
    check(f"Module {exe} with build-id {readelf_build_id(CRASHER)}" in e["MESSAGE"], e["MESSAGE"][:400])
    d.stop()


def eu_stack(core, exe, tid):
    """eu-stack's frames of thread tid: [(pc, symbol)], with the same information as the worker:
    the files themselves, no separate debug info (/usr/lib/debug, debuginfod)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD")}
    out = subprocess.run(["eu-stack", "--core", core, "--executable", exe, "--debuginfo-path=/nonexistent"],
                         capture_output=True, text=True, timeout=120, env=env).stdout
    frames, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"TID (\d+):", line)
        if m:
            cur = frames.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+)(?: - 1)?\s*(\S*)", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2) or "n/a"))
    return frames.get(tid, [])


def case_eu_stack():
    """Frame for frame on the crashing thread, our trace agrees with eu-stack on the full core."""
    env, j, d = setup()
    pid, _ = crash("deep")
    e = entry_of(j, pid)
    tid = int(e["COREDUMP_TID"])
    ours = traces(e["MESSAGE"])[tid]
    core = decompress(env.cores()[0], os.path.join(env.base, "core"))
    theirs = eu_stack(core, CRASHER, tid)
    check(len(theirs) >= 4, f"eu-stack found {theirs}")
    check(len(ours) == len(theirs), f"frame counts differ: ours {ours}, eu-stack {theirs}")
    for n, ((pc, sym, _), (tpc, tsym)) in enumerate(zip(ours, theirs)):
        check(pc == tpc, f"frame {n}: pc {pc:#x} != eu-stack's {tpc:#x}")
        check(sym == tsym or (sym == "n/a" and tsym in ("", "n/a")) or tsym.startswith(sym),
              f"frame {n}: {sym} != eu-stack's {tsym}")
    d.stop()


def case_process_size_max():
    """A core larger than ProcessSizeMax= is stored without a backtrace, and the entry says so."""
    env, j, d = setup({"ProcessSizeMax": "1M", "ExternalSizeMax": "1G"})
    pid, _ = crash("mem", 32)
    e = entry_of(j, pid)
    check("No stack trace: the core (" in e["MESSAGE"] and "larger than ProcessSizeMax= (1048576 bytes)" in e["MESSAGE"],
          f"MESSAGE: {e['MESSAGE']!r}")
    check("Stack trace of thread" not in e["MESSAGE"], "a trace despite ProcessSizeMax")
    check(len(env.cores()) == 1, "the core was not stored")
    d.stop()


def case_memory():
    """The worker's peak memory for a 1 GiB core stays under the bound (32 MiB) however large
    the core: it keeps only the notes, stacks and module headers."""
    env, j, d = setup(debug=True)
    pid, _ = crash("mem", 1024)
    e = entry_of(j, pid, timeout=120)
    check("cds_crash" not in e["MESSAGE"] and "Stack trace of thread" in e["MESSAGE"], "no trace for the large core")
    m = re.search(rf"Crash of PID {pid}: worker peak memory (\d+) KiB", d.log_text())
    check(m, "the daemon did not log the worker's peak memory")
    kib = int(m.group(1))
    print(f"worker peak RSS for a 1 GiB core: {kib} KiB")
    check(kib < 32 << 10, f"worker peak RSS {kib} KiB exceeds 32 MiB")
    d.stop()


def case_user():
    """A plain user's crash is traced by a worker running as that user."""
    user = test_user()
    env, j, d = setup()
    exe = os.path.join(env.base, "crasher")
    shutil.copy(CRASHER, exe)
    os.chmod(exe, 0o755)
    pid, _ = crash("deep", user=user, exe=exe)
    check_deep(entry_of(j, pid), pid, "crasher")
    d.stop()


if __name__ == "__main__":
    run_cases({"deep": case_deep, "symtab": case_symtab, "build_ids": case_build_ids, "signature": case_signature, "package": case_package,
               "mount_ns": case_mount_ns, "eu_stack": case_eu_stack, "process_size_max": case_process_size_max,
               "memory": case_memory, "user": case_user})
