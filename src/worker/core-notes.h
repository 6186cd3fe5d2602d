/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the note parser for untrusted core bytes. Worker (sandboxed), pure: no I/O. */
#pragma once

/* What only the core tells: the notes of its PT_NOTE segment. Pure and bounds-checked: the
 * bytes come from the crashed process's kernel-written core, but are parsed as hostile. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Note segments larger than this are not parsed (a core of ~10 000 threads is smaller). */
#define CORE_NOTES_MAX (8U << 20)

typedef struct CoreNotes {
        bool has_siginfo;
        int signo;
        int code;
        bool has_prstatus;
        pid_t tid;            /* the first NT_PRSTATUS: the thread that dumped */
        unsigned n_threads;   /* NT_PRSTATUS count */
        int prstatus_signal;  /* pr_cursig of the first NT_PRSTATUS */
        bool has_psinfo;
        char fname[17];       /* NT_PRPSINFO pr_fname (the process's comm) */
} CoreNotes;

/* is64: ELFCLASS64; machine: e_machine (32-bit layouts are known for EM_386 only). */
int core_notes_parse(const uint8_t *buf, size_t len, bool is64, uint16_t machine, CoreNotes *ret);

/* For backtraces: the registers that locate each thread's stack, and the mapped files. */
typedef struct CoreThreadRegs {
        pid_t tid;
        uint64_t pc, sp;
} CoreThreadRegs;

typedef struct CoreFileMapping {
        uint64_t start, end, file_offset; /* file_offset in bytes */
        const char *path;                 /* into the notes buffer, NUL-terminated there */
} CoreFileMapping;

/* Calls fn for each NT_PRSTATUS (in order: the dumping thread first) with its pc and sp, on
 * the architectures whose register layout is known here (x86-64, AArch64); -EOPNOTSUPP on
 * others. fn returning false stops. */
int core_notes_threads(const uint8_t *buf, size_t len, uint16_t machine,
                       bool (*fn)(const CoreThreadRegs *t, void *userdata), void *userdata);
/* Calls fn for each entry of the (64-bit) NT_FILE note; -ENOENT if there is none, -EBADMSG if it
 * is malformed (entries already reported stay valid). */
int core_notes_files(const uint8_t *buf, size_t len, bool (*fn)(const CoreFileMapping *m, void *userdata),
                     void *userdata);
