/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the stream capture for stack traces. Worker (sandboxed), pure: no I/O. */
#pragma once

/* What the backtrace needs of a core, kept while the core streams past: the notes, the top of
 * every thread's stack and the first page of every mapped file (its ELF headers and build-id
 * note). From them a small ELF core is rebuilt in memory for libdwfl, so the backtrace needs
 * neither an uncompressed copy on disk nor memory proportional to the core.
 * Pure: no I/O; bounded whatever the core says. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf-stream.h"

#define CAPTURE_PAGE 4096U
#define CAPTURE_THREADS_MAX 64U
#define CAPTURE_STACK_BELOW 512U        /* below sp: the red zone */
#define CAPTURE_STACK_ABOVE (128U << 10) /* above sp: the frames */
#define CAPTURE_MODULES_MAX 256U
#define CAPTURE_RANGES_MAX (CAPTURE_THREADS_MAX + CAPTURE_MODULES_MAX)
#define CAPTURE_TOTAL_MAX (16U << 20)

typedef struct CaptureRange {
        uint64_t vaddr, offset, len;
        uint32_t flags;
        uint8_t *data;
} CaptureRange;

typedef struct Capture {
        CaptureRange ranges[CAPTURE_RANGES_MAX];
        size_t n_ranges;
        uint64_t total;
        unsigned n_threads;
        bool planned;
        const char *why_not; /* why there is no capture (unsupported core, no notes) */
} Capture;

/* Decides what to keep, once the stream has its PT_LOADs and notes (s->keep was set). */
int capture_plan(Capture *c, const ElfStream *s);
/* Copies what falls into the planned ranges from stream bytes at offset. */
void capture_feed(Capture *c, const uint8_t *p, size_t n, uint64_t offset);
/* The small core: the ELF header, a PT_NOTE with the notes, a PT_LOAD per captured range. */
int capture_build_core(const Capture *c, const ElfStream *s, uint8_t **ret, size_t *ret_len);
void capture_free(Capture *c);
