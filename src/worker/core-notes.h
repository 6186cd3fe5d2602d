/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
