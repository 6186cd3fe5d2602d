/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker's memory spool. Worker (sandboxed): its own memfd and memory only. */
#pragma once

/* The core as received, held in a memfd (zero pages left out) until the kernel's connection is
 * closed: the crashed task goes at the kernel's pace, the compression follows. Bounded by the
 * room the manager granted (SpoolMax= over all workers); a core that outgrows it is replayed
 * into the sink at once and the rest compressed while received, as without a spool. Never on
 * disk: a memfd lives in memory (and swap) and dies with the worker. A memfd and not anonymous
 * memory: write() fills its pages without a fault each, measured 2-3x faster here (a
 * hypervisor that makes page faults dear). Being a file, it is bound by the worker's
 * RLIMIT_FSIZE, which is never raised for it: a spool holds at most that (receive.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs of data it keeps track of; a core more fragmented than this (alternate pages of zeros
 * and data over gigabytes) outgrows the spool however small its data is. */
#define SPOOL_EXTENTS_MAX 65536U
/* Zero runs shorter than this are kept as data: each run left out costs an extent. */
#define SPOOL_ZERO_RUN_MIN 4096U

typedef struct SpoolExtent {
        uint64_t offset; /* in the stream */
        uint64_t len;
} SpoolExtent;

typedef struct Spool {
        int fd;           /* the memfd */
        uint64_t granted; /* the most it may hold */
        uint64_t used;    /* what it holds, packed */
        uint64_t start;   /* the stream offset it begins at */
        uint64_t end;     /* the stream offset of its next byte */
        SpoolExtent *extents;
        size_t n_extents, cap_extents;
} Spool;

/* A spool for the stream from offset start, holding at most granted bytes, in the memfd fd
 * (taken; -EBADF: a new one). */
int spool_open(Spool *s, int fd, uint64_t start, uint64_t granted);
/* Appends the next n bytes of the stream. -ENOSPC if they do not fit (nothing of them is kept:
 * replay what is there, then go on without). */
int spool_add(Spool *s, const uint8_t *p, size_t n);
typedef int (*spool_fn)(void *userdata, const uint8_t *p, size_t n, uint64_t offset);
/* Gives the stream back from its start, in order, at most bufsize bytes at a time through buf:
 * the data read back, zeros where it left them out. Stops at fn's first error. */
int spool_replay(const Spool *s, uint8_t *buf, size_t bufsize, spool_fn fn, void *userdata);
void spool_close(Spool *s);
