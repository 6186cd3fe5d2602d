/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parses the core's PT_NOTE: siginfo, prstatus, prpsinfo, thread registers, NT_FILE. Worker
 * (sandboxed), pure: hostile bytes, every offset bounds-checked, no I/O. */
#include <elf.h>
#include <string.h>

#include "core-notes.h"
#include "macro.h"

/* Offsets into the kernel's note payloads (include/uapi/linux/elfcore.h), common to every
 * 64-bit architecture; for 32-bit, those of i386. */
#define PRSTATUS_CURSIG_OFF 12
#define PRSTATUS_PID_OFF64 32
#define PRSTATUS_PID_OFF32 24
#define PRPSINFO_FNAME_OFF64 40
#define PRPSINFO_FNAME_OFF32 28
#define PRPSINFO_FNAME_LEN 16
#define SIGINFO_MIN 12

static uint32_t load32(const uint8_t *p) {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        return v;
}

static size_t align4(size_t n) {
        return (n + 3) & ~(size_t) 3;
}

static void take_prstatus(CoreNotes *n, const uint8_t *d, size_t len, bool is64) {
        size_t pid_off = is64 ? PRSTATUS_PID_OFF64 : PRSTATUS_PID_OFF32;
        uint16_t cursig;

        n->n_threads++;
        if (n->has_prstatus || len < pid_off + 4)
                return;
        memcpy(&cursig, d + PRSTATUS_CURSIG_OFF, sizeof cursig);
        n->prstatus_signal = cursig;
        n->tid = (pid_t) load32(d + pid_off);
        n->has_prstatus = n->tid > 0;
}

static void take_psinfo(CoreNotes *n, const uint8_t *d, size_t len, bool is64) {
        size_t off = is64 ? PRPSINFO_FNAME_OFF64 : PRPSINFO_FNAME_OFF32;

        if (n->has_psinfo || len < off + PRPSINFO_FNAME_LEN)
                return;
        memcpy(n->fname, d + off, PRPSINFO_FNAME_LEN);
        n->fname[PRPSINFO_FNAME_LEN] = 0;
        n->has_psinfo = true;
}

static void take_siginfo(CoreNotes *n, const uint8_t *d, size_t len) {
        if (n->has_siginfo || len < SIGINFO_MIN)
                return;
        n->signo = (int) load32(d);
        n->code = (int) load32(d + 8); /* si_signo, si_errno, si_code */
        n->has_siginfo = true;
}

/* Walks the "CORE" notes: fn(type, desc, descsz, userdata) for each; false stops. */
static int walk_core_notes(const uint8_t *buf, size_t len,
                           bool (*fn)(uint32_t type, const uint8_t *d, size_t n, void *userdata), void *userdata) {
        size_t o = 0;

        while (len - o >= 12) {
                uint32_t namesz = load32(buf + o), descsz = load32(buf + o + 4), type = load32(buf + o + 8);
                size_t name_end, desc_end;

                if (namesz > len || descsz > len)
                        return -EBADMSG;
                name_end = o + 12 + align4(namesz);
                desc_end = name_end + align4(descsz);
                if (name_end > len || desc_end > len || name_end + descsz > len)
                        return -EBADMSG;
                if (namesz == 5 && memcmp(buf + o + 12, "CORE", 5) == 0 && !fn(type, buf + name_end, descsz, userdata))
                        return 0;
                o = desc_end;
        }
        return 0;
}

static uint64_t load64(const uint8_t *p) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return v;
}

/* elf_prstatus: pr_reg follows the common part, 112 bytes on every 64-bit architecture. */
#define PRSTATUS_REG_OFF64 112
#define X86_64_REG_PC 16 /* user_regs_struct: ... orig_rax, rip, cs, eflags, rsp */
#define X86_64_REG_SP 19
#define AARCH64_REG_SP 31 /* user_pt_regs: x0..x30, sp, pc, pstate */
#define AARCH64_REG_PC 32

typedef struct ThreadWalk {
        unsigned pc_index, sp_index;
        bool (*fn)(const CoreThreadRegs *t, void *userdata);
        void *userdata;
} ThreadWalk;

static bool thread_note(uint32_t type, const uint8_t *d, size_t n, void *userdata) {
        ThreadWalk *w = userdata;
        CoreThreadRegs t;

        if (type != NT_PRSTATUS || n < PRSTATUS_REG_OFF64 + 8 * (size_t) (MAX(w->pc_index, w->sp_index) + 1))
                return true;
        t = (CoreThreadRegs) {
                .tid = (pid_t) load32(d + PRSTATUS_PID_OFF64),
                .pc = load64(d + PRSTATUS_REG_OFF64 + 8 * w->pc_index),
                .sp = load64(d + PRSTATUS_REG_OFF64 + 8 * w->sp_index),
        };
        return w->fn(&t, w->userdata);
}

int core_notes_threads(const uint8_t *buf, size_t len, uint16_t machine,
                       bool (*fn)(const CoreThreadRegs *t, void *userdata), void *userdata) {
        ThreadWalk w = { .fn = fn, .userdata = userdata };

        if (machine == EM_X86_64)
                w.pc_index = X86_64_REG_PC, w.sp_index = X86_64_REG_SP;
        else if (machine == EM_AARCH64)
                w.pc_index = AARCH64_REG_PC, w.sp_index = AARCH64_REG_SP;
        else
                return -EOPNOTSUPP;
        return walk_core_notes(buf, len, thread_note, &w);
}

typedef struct FileWalk {
        bool (*fn)(const CoreFileMapping *m, void *userdata);
        void *userdata;
        int result;
} FileWalk;

/* NT_FILE: count, page size, count x {start, end, page offset}, then count NUL-ended names. */
static bool file_note(uint32_t type, const uint8_t *d, size_t n, void *userdata) {
        FileWalk *w = userdata;
        uint64_t count, page;
        size_t names;

        if (type != NT_FILE)
                return true;
        w->result = -EBADMSG;
        if (n < 16)
                return false;
        count = load64(d);
        page = load64(d + 8);
        if (count > (n - 16) / 24 || page == 0 || page > (UINT64_C(1) << 30))
                return false;
        names = 16 + (size_t) count * 24;
        for (uint64_t i = 0; i < count; i++) {
                const uint8_t *e = d + 16 + i * 24, *nul = names < n ? memchr(d + names, 0, n - names) : NULL;
                CoreFileMapping m;

                if (!nul)
                        return false;
                m = (CoreFileMapping) { load64(e), load64(e + 8), 0, (const char *) d + names };
                if (load64(e + 16) > UINT64_MAX / page || m.end < m.start)
                        return false;
                m.file_offset = load64(e + 16) * page;
                names = (size_t) (nul - d) + 1;
                if (!w->fn(&m, w->userdata))
                        break;
        }
        w->result = 0;
        return false;
}

int core_notes_files(const uint8_t *buf, size_t len, bool (*fn)(const CoreFileMapping *m, void *userdata),
                     void *userdata) {
        FileWalk w = { fn, userdata, -ENOENT };
        int r = walk_core_notes(buf, len, file_note, &w);

        return r < 0 ? r : w.result;
}

int core_notes_parse(const uint8_t *buf, size_t len, bool is64, uint16_t machine, CoreNotes *ret) {
        size_t o = 0;

        *ret = (CoreNotes) {};
        if (!is64 && machine != EM_386)
                return -EOPNOTSUPP;
        while (len - o >= 12) {
                uint32_t namesz = load32(buf + o), descsz = load32(buf + o + 4), type = load32(buf + o + 8);
                size_t name_end, desc_end;
                const uint8_t *name = buf + o + 12;

                if (namesz > len || descsz > len) /* also keeps the sums below from overflowing */
                        return -EBADMSG;
                name_end = o + 12 + align4(namesz);
                desc_end = name_end + align4(descsz);
                if (name_end > len || desc_end > len || name_end + descsz > len)
                        return -EBADMSG;
                /* Only the kernel's own "CORE" notes are read (the name includes its NUL). */
                if (namesz == 5 && memcmp(name, "CORE", 5) == 0) {
                        const uint8_t *d = buf + name_end;
                        if (type == NT_PRSTATUS)
                                take_prstatus(ret, d, descsz, is64);
                        else if (type == NT_PRPSINFO)
                                take_psinfo(ret, d, descsz, is64);
                        else if (type == NT_SIGINFO)
                                take_siginfo(ret, d, descsz);
                }
                o = desc_end;
        }
        return 0;
}
