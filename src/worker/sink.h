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
static inline void sink_freep(Sink **s) {
        if (*s)
                sink_free(*s);
}

int sink_new_plain(int fd, Sink **ret);
int sink_new_zstd(int fd, int level, Sink **ret);
/* Makes the zstd context sink_new_zstd() will use, with its tables in place (before the job). */
int sink_zstd_prepare(int level);
int sink_new_lz4(int fd, int level, Sink **ret);
/* Writes n bytes of compressed output, counting them. */
int sink_emit(Sink *s, const void *p, size_t n);
