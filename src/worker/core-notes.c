/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
