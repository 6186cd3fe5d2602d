/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker's output sinks. Worker (sandboxed): writes only the output fd given. */
#pragma once

/* Where received core bytes go: compressed (zstd, lz4) or plain with zero runs left as holes.
 * The uncompressed core never reaches the disk except with Compress=no. */

#include <stddef.h>
#include <stdint.h>

#include "config.h"

typedef struct Sink Sink;

typedef struct SinkOps {
        int (*write)(Sink *s, const uint8_t *p, size_t n);
        int (*finish)(Sink *s);
        void (*free)(Sink *s);
        /* the most n more input bytes and the finish can add to the file, whatever it holds now */
        uint64_t (*bound)(const Sink *s, uint64_t n);
        /* optional: the input's expected size, before its first byte */
        void (*size_hint)(Sink *s, uint64_t size);
        /* optional: writes out what it holds back (the frame goes on) */
        int (*flush)(Sink *s);
} SinkOps;

struct Sink {
        const SinkOps *ops;
        int fd;
        uint64_t bytes_in;
        uint64_t bytes_out;
        uint64_t end; /* the file's length so far (holes included) */
};

int sink_new(Compression c, int level, int fd, Sink **ret);
int sink_write(Sink *s, const uint8_t *p, size_t n);
int sink_finish(Sink *s);
/* The most the file can be long once n more input bytes are written and the sink finished: a
 * caller that stops while this fits a cap leaves a complete, decodable file within it. */
uint64_t sink_bound(const Sink *s, uint64_t n);
void sink_free(Sink *s);
/* Says how large the input will be (the core's ELF headers), before the first write: a large
 * core gets zstd's worker threads. */
void sink_size_hint(Sink *s, uint64_t size);
/* Writes out what the sink holds back, so that sink_bound() is as tight as it gets (near a cap). */
int sink_flush(Sink *s);
static inline void sink_freep(Sink **s) {
        if (*s)
                sink_free(*s);
}

int sink_new_plain(int fd, Sink **ret);
int sink_new_zstd(int fd, int level, Sink **ret);
/* Makes the zstd context sink_new_zstd() will use, with its tables in place, and counts the CPUs
 * (before the job, outside the sandbox). */
int sink_zstd_prepare(int level);
/* Cores up to this size get zstd tables sized to them (sink-zstd.c). */
#define SINK_ZSTD_SMALL_MAX (UINT64_C(1) << 20)
/* The memory a zstd sink's context holds (its tables and buffers), for the tests. */
size_t sink_zstd_memory(const Sink *s);
/* Cores this large and up are compressed by zstd's worker threads... */
#define SINK_ZSTD_THREADS_MIN_SIZE (UINT64_C(16) << 20)
/* ...as many as CPUs, at most this many, at levels up to SINK_ZSTD_THREADS_LEVEL_MAX (above it
 * each thread's context and window grow past what the worker's address space is sized for). */
#define SINK_ZSTD_THREADS_MAX 4U
#define SINK_ZSTD_THREADS_LEVEL_MAX 6
/* Counts the CPUs (outside the sandbox, which has no /sys), once. */
void sink_zstd_count_cpus(void);
/* The worker threads a large core gets here (0: none, one CPU): the sandbox's RLIMIT_NPROC. */
unsigned sink_zstd_threads(void);
int sink_new_lz4(int fd, int level, Sink **ret);
/* Writes n bytes of compressed output, counting them. */
int sink_emit(Sink *s, const void *p, size_t n);
