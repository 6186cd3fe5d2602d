/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the streaming ELF core sizer. Worker (sandboxed), pure: no I/O. */
#pragma once

/* Learns the size a core announces from its ELF and program headers while the core streams
 * past, so that a stream that ends early is recognised as truncated. Pure: no I/O, bounded
 * memory, every field of the hostile input checked. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core-notes.h"

/* At most this many program headers are read (PN_XNUM cores are "size unknown"). */
#define ELF_PHNUM_MAX 65535U
/* Headers further into the stream than this are not waited for. */
#define ELF_PHDR_END_MAX (UINT64_C(8) << 20)

typedef enum ElfStreamState {
        ELF_STREAM_COLLECTING,
        ELF_STREAM_KNOWN,   /* expected_size is valid */
        ELF_STREAM_INVALID, /* not an ELF core we can size */
} ElfStreamState;

/* A PT_LOAD segment, kept for the backtrace capture. */
typedef struct ElfLoad {
        uint64_t vaddr, offset, filesz;
        uint32_t flags;
} ElfLoad;

typedef struct ElfStream {
        ElfStreamState state;
        const char *why; /* for INVALID */
        uint8_t ehdr[64];
        uint8_t *phdrs; /* [ph_start, ph_end) of the stream, allocated once the ELF header is in */
        uint64_t ph_start, ph_end;
        bool is64;
        uint16_t machine;
        uint16_t phnum;
        uint64_t expected_size;
        /* the first PT_NOTE segment, captured as it passes, then parsed */
        uint8_t *notes;
        uint64_t note_start, note_end;
        bool notes_done;
        CoreNotes core_notes; /* valid if notes_done and notes_ok */
        bool notes_ok;
        /* with keep set before feeding: the PT_LOADs and the notes stay for the backtrace */
        bool keep;
        ElfLoad *loads;
        size_t n_loads;
        uint8_t *kept_notes;
        size_t kept_notes_len;
} ElfStream;

void elf_stream_init(ElfStream *s);
/* Feeds bytes at absolute stream offset `offset` (calls must be in order, without gaps). */
void elf_stream_feed(ElfStream *s, const uint8_t *p, size_t n, uint64_t offset);
void elf_stream_done(ElfStream *s);
/* Frees what keep retained. */
void elf_stream_free_kept(ElfStream *s);
