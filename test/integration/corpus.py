# SPDX-License-Identifier: LGPL-2.1-or-later
"""The crash corpus (test/helpers/corpus): where each program is built and how it dies, and how
to compare the crashing thread's frames in our journal MESSAGE with eu-stack's on the same core.

Run directly, it checks the parsers and the comparison on literal samples; given a core (and
its executable) it also prints eu-stack's frames of the crashing thread:
    python3 corpus.py [CORE [EXE]]
"""
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import namedtuple

from cdtest import BUILD

CORPUS_DIR = os.path.join(BUILD, "test", "helpers", "corpus")
FRAMES_MAX = 64  # BT_FRAMES_MAX in src/worker/backtrace.h: our trace of a thread stops there
UNNAMED = "??"

# path; the signal it dies of; the function the crashing thread must show (as normalised by
# normalise()); extra environment; whether it is built only when its compiler is installed.
Program = namedtuple("Program", "path signal function env optional")


def _p(name, sig, function, env=None, optional=False):
    return Program(os.path.join(CORPUS_DIR, name), sig, function, env or {}, optional)


PROGRAMS = {
    "cxx-throw": _p("cxx-throw", signal.SIGABRT, "corpus_throw_here", optional=True),
    "dlopen-crash": _p("dlopen-crash", signal.SIGSEGV, "corpus_lib_crash_here"),
    "static-crash": _p("static-crash", signal.SIGSEGV, "corpus_crash_here"),
    "nopie-crash": _p("nopie-crash", signal.SIGSEGV, "corpus_crash_here"),
    "pie-crash": _p("pie-crash", signal.SIGSEGV, "corpus_crash_here"),
    "stripped-crash": _p("stripped-crash", signal.SIGSEGV, "corpus_crash_here"),
    "many-maps": _p("many-maps", signal.SIGSEGV, "corpus_crash_here"),
    # Go 1.19's runtime.crash() kills itself with SIGABRT after printing the goroutines, from its
    # signal handler: neither unwinder gets past Go's signal trampoline to main.corpusCrashHere
    "go-nil": _p("go-nil", signal.SIGABRT, "runtime.dieFromSignal", {"GOTRACEBACK": "crash"}, optional=True),
    "rust-panic": _p("rust-panic", signal.SIGABRT, "corpus_crash_here", optional=True),
}
DLOPEN_LIB = os.path.join(CORPUS_DIR, "corpus-dlopen-lib.so")


def _env_without_debuginfod():
    return {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD")}


def crashing_tid(core_path):
    """The pid field of the core's first NT_PRSTATUS note: the thread that took the signal."""
    out = subprocess.run(["eu-readelf", "--notes", core_path], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    in_prstatus = False
    for line in out.splitlines():
        m = re.match(r"\s+([A-Z][A-Za-z0-9]*)\s+(\d+)\s+(\S+)", line)  # "  CORE   336  PRSTATUS"
        if m:
            in_prstatus = m.group(1) == "CORE" and m.group(3) == "PRSTATUS"
            continue
        m = re.search(r"\bpid: (\d+)", line)
        if in_prstatus and m:
            return int(m.group(1))
    raise ValueError(f"{core_path}: no NT_PRSTATUS note")


def eu_stack_command(core_path, exe_path=None):
    """eu-stack on the core with what the worker has: the files themselves (no /usr/lib/debug,
    no debuginfod); -d names a frame like the worker does, by the innermost DWARF function
    (inlined or not) where there is debug info, else by the symbol table."""
    cmd = ["eu-stack", "-d", "--debuginfo-path=/nonexistent", "--core=" + core_path]
    return cmd + (["--executable=" + exe_path] if exe_path else [])


def parse_eu_stack(out):
    """{tid: [(pc, name)]} from eu-stack's output, in its order; name is UNNAMED where eu-stack
    found none. Names are the rest of the line: demangled C++ names hold spaces."""
    threads, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"TID (\d+):$", line)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#(\d+)\s+0x([0-9a-f]+)(?: - 1)?(?: (.*))?$", line)
        if m and cur is not None:
            cur.append((int(m.group(2), 16), (m.group(3) or "").strip() or UNNAMED))
    return threads


def eu_stack_threads(core_path, exe_path=None):
    """{tid: [(pc, name)]}: parse_eu_stack() of eu_stack_command()'s output."""
    out = subprocess.run(eu_stack_command(core_path, exe_path), capture_output=True, text=True,
                         timeout=300, env=_env_without_debuginfod()).stdout
    return parse_eu_stack(out)


def eu_stack_frames(core_path, exe_path=None):
    """The function names of the crashing thread's frames, innermost first, as eu-stack prints
    them (demangled, UNNAMED where it has none)."""
    return [name for _, name in eu_stack_threads(core_path, exe_path).get(crashing_tid(core_path), [])]


# "#0  0x00005636d0ee530c corpus_crash_here (pie-crash + 0x130c)", as src/worker/backtrace.c
# prints it; the module is a file's base name and may itself hold " (", e.g. "x (deleted)".
_OUR_FRAME = re.compile(r"#(\d+)\s+0x([0-9a-f]+) (.*?) \((.*) \+ 0x([0-9a-f]+)\)$")


def message_threads(message_text):
    """{tid: [(pc, name, module)]} from our MESSAGE, threads in the order printed (the crashing
    one first); name and module are UNNAMED where the worker printed "n/a"."""
    threads, cur = {}, None
    for line in message_text.splitlines():
        m = re.match(r"Stack trace of thread (\d+):$", line)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = _OUR_FRAME.match(line)
        if m and cur is not None:
            name, module = m.group(3), m.group(4)
            cur.append((int(m.group(2), 16), UNNAMED if name == "n/a" else name,
                        UNNAMED if module == "n/a" else module))
        elif not line.strip():
            cur = None
    return threads


def message_frames(message_text, tid=None):
    """The function names of the crashing thread's frames in our MESSAGE, innermost first: the
    thread tid (COREDUMP_TID) if given, else the first one printed, which is the crashing one."""
    threads = message_threads(message_text)
    if tid is None:
        tid = next(iter(threads), None)
    return [name for _, name, _ in threads.get(tid, [])]


_demangled = {}
_CLONE_SUFFIX = re.compile(r"(\.(?:cold|constprop|isra|part|lto_priv|llvm)(?:\.\d+)?| \[clone [^]]*\])+$")


def _demangle(names):
    """Itanium-mangled names (C++, Rust's legacy scheme) as c++filt prints them, in one call."""
    todo = sorted({n for n in names if n.startswith("_Z") and n not in _demangled})
    if todo and shutil.which("c++filt"):
        out = subprocess.run(["c++filt"], input="\n".join(todo) + "\n", capture_output=True, text=True,
                             timeout=60).stdout.splitlines()
        if len(out) == len(todo):
            _demangled.update(zip(todo, out))
    return [_demangled.get(n, n) for n in names]


def _strip_trailing_group(s, open_, close):
    """s without a balanced open_...close group at its end ("f(int) const" -> "f")."""
    s = s.strip()
    if s.endswith(" const"):
        s = s[:-len(" const")].rstrip()
    if not s.endswith(close):
        return s
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        depth += {close: 1, open_: -1}.get(s[i], 0)
        if depth == 0:
            return s[:i].rstrip()
    return s


def _last_component(s):
    """The part after the last "::" outside <...>, (...) and {...}."""
    depth, start = 0, 0
    for i, ch in enumerate(s):
        if ch in "<({":
            depth += 1
        elif ch in ">)}":
            depth -= 1
        elif depth == 0 and s.startswith("::", i):
            start = i + 2
    return s[start:]


def normalise(names):
    """Names reduced to what every unwinder agrees on: the bare function name. The worker prints
    a DWARF name ("corpus_throw_here") or a raw symbol ("_ZSt9terminatev"); eu-stack prints
    demangled linkage names ("corpus_throw_here(int)", "rust_panic::corpus_crash_here::h0123...").
    So: demangle; drop GCC clone suffixes (.cold, .isra.0, ...) and LLVM's .llvm.N; drop Rust's
    ::h<hash>, the parameter list and a trailing template argument list; keep the last ::
    component; every Rust closure is "{closure}"; unnamed is UNNAMED."""
    out = []
    for n in _demangle([_CLONE_SUFFIX.sub("", n or "") for n in names]):
        if n in ("", "n/a", UNNAMED):
            out.append(UNNAMED)
            continue
        n = _CLONE_SUFFIX.sub("", n)  # c++filt's "f() [clone .cold]"
        n = re.sub(r"::h[0-9a-f]{16}$", "", n)
        n = _strip_trailing_group(n, "(", ")")
        n = _last_component(n)
        n = _strip_trailing_group(n, "<", ">")
        out.append("{closure}" if "closure" in n else n)
    return out


def frames_agree(ours, eu, depth=5):
    """True when our crashing thread's top frames name the same functions as eu-stack's.

    The rule: compare the first n = min(depth, len(eu)) frames (depth=None: all of eu-stack's)
    by normalise()d name, position by position; an unnamed frame matches only an unnamed one.
    Our trace may be shorter than n only where it hit its own bound (FRAMES_MAX frames), and
    then its frames are compared. eu-stack finding no frame at all is never agreement. Frames
    below n are not compared: the unwinders may legitimately part ways deep in the stack (our
    worker unwinds a partial core; eu-stack stops at 256 frames)."""
    n = len(eu) if depth is None else min(depth, len(eu))
    if n == 0:
        return False
    if len(ours) < n:
        if len(ours) < FRAMES_MAX:
            return False
        n = len(ours)
    return normalise(ours[:n]) == normalise(eu[:n])


def _self_test():
    message = ("Module /usr/lib/x86_64-linux-gnu/libc.so.6 with build-id 2e8d1b\n"
               "\n"
               "Stack trace of thread 4242:\n"
               "#0  0x00007f0d3c0a9e3c __pthread_kill_implementation (libc.so.6 + 0x8ae3c)\n"
               "#1  0x00007f0d3c05afb2 raise (libc.so.6 + 0x3bfb2)\n"
               "#2  0x00007f0d3c045472 abort (libc.so.6 + 0x26472)\n"
               "#3  0x00007f0d3c29d919 _ZN9__gnu_cxx27__verbose_terminate_handlerEv (libstdc++.so.6 + 0x9d919)\n"
               "#4  0x00007f0d3c2a8e1a n/a (libstdc++.so.6 + 0xa8e1a)\n"
               "#5  0x00007f0d3c2a8e85 _ZSt9terminatev (libstdc++.so.6 + 0xa8e85)\n"
               "#6  0x00007f0d3c2a90d8 __cxa_throw (libstdc++.so.6 + 0xa90d8)\n"
               "#7  0x000055d0b1a0a2f1 corpus_throw_here (cxx-throw (deleted) + 0x22f1)\n"
               "#8  0x0000000000000000 n/a (n/a + 0x0)\n"
               "\n"
               "Stack trace of thread 4243:\n"
               "#0  0x00007f0d3c0a4156 n/a (libc.so.6 + 0x85156)\n")
    ours = message_frames(message)
    assert ours == ["__pthread_kill_implementation", "raise", "abort", "_ZN9__gnu_cxx27__verbose_terminate_handlerEv",
                    UNNAMED, "_ZSt9terminatev", "__cxa_throw", "corpus_throw_here", UNNAMED], ours
    assert message_frames(message, 4243) == [UNNAMED]
    assert message_threads(message)[4242][7][2] == "cxx-throw (deleted)"
    eu = ["__pthread_kill_implementation", "raise", "abort", "__gnu_cxx::__verbose_terminate_handler()", UNNAMED,
          "std::terminate()", "__cxa_throw", "corpus_throw_here(int)", "corpus_throw_middle(int)"]
    assert frames_agree(ours, eu), (normalise(ours), normalise(eu))
    assert frames_agree(ours, eu, depth=8)
    assert not frames_agree(ours, eu, depth=None)  # frame 8: unnamed against a name
    assert not frames_agree(ours[:3], eu)  # ours stopped early without reaching its bound
    assert not frames_agree(ours, [])
    assert not frames_agree(["raise"] + ours[1:], [UNNAMED] + eu[1:])
    assert normalise(["rust_panic::corpus_crash_here::h0123456789abcdef", "corpus_crash_here",
                      "std::panicking::begin_panic_handler::{{closure}}::h0123456789abcdef", "{closure#0}",
                      "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h74e5748cfd874377E.llvm.1327",
                      "main.corpusCrashHere", "std::vector<int, std::allocator<int> >::push_back(int const&)",
                      "foo.cold", "_Z3fooi.isra.0", "n/a", ""]) == \
        ["corpus_crash_here", "corpus_crash_here", "{closure}", "{closure}", "{closure}", "main.corpusCrashHere",
         "push_back", "foo", "foo", UNNAMED, UNNAMED], "normalise"
    print("corpus.py: self-test passed")


if __name__ == "__main__":
    _self_test()
    if len(sys.argv) > 1:
        core, exe = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
        print(" ".join(eu_stack_command(core, exe)))
        print(f"crashing thread {crashing_tid(core)}: {eu_stack_frames(core, exe)}")
