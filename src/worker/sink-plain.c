/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "macro.h"
#include "sink.h"

/* Blocks of zeros this large (aligned in the file) become holes instead of being written. */
#define SPARSE_BLOCK 4096U

typedef struct PlainSink {
        Sink base;
        uint64_t offset; /* file offset reached, holes included */
} PlainSink;

static bool is_zero(const uint8_t *p, size_t n) {
        return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static int plain_write(Sink *s, const uint8_t *p, size_t n) {
        PlainSink *ps = (PlainSink *) s;

        while (n > 0) {
                size_t chunk = SPARSE_BLOCK - (size_t) (ps->offset % SPARSE_BLOCK);
                size_t run = 0;
                int r;

                chunk = MIN(chunk, n);
                /* Gather a run of whole zero blocks, or a run of data, to keep syscalls few. */
                if (chunk == SPARSE_BLOCK && is_zero(p, chunk)) {
                        while (run + SPARSE_BLOCK <= n && is_zero(p + run, SPARSE_BLOCK))
                                run += SPARSE_BLOCK;
                        if (lseek(s->fd, (off_t) run, SEEK_CUR) < 0)
                                return negative_errno();
                } else {
                        run = chunk;
                        while (run + SPARSE_BLOCK <= n && !is_zero(p + run, SPARSE_BLOCK))
                                run += SPARSE_BLOCK;
                        r = sink_emit(s, p, run);
                        if (r < 0)
                                return r;
                }
                ps->offset += run;
                p += run;
                n -= run;
        }
        return 0;
}

static int plain_finish(Sink *s) {
        PlainSink *ps = (PlainSink *) s;

        /* A trailing hole only moved the offset: give the file its full length. */
        if (ftruncate(s->fd, (off_t) ps->offset) < 0)
                return negative_errno();
        return 0;
}

static void plain_free(Sink *s) {
        free(s);
}

static const SinkOps plain_ops = { plain_write, plain_finish, plain_free };

int sink_new_plain(int fd, Sink **ret) {
        PlainSink *ps = calloc(1, sizeof *ps);

        if (!ps)
                return -ENOMEM;
        ps->base = (Sink) { .ops = &plain_ops, .fd = fd };
        *ret = &ps->base;
        return 0;
}
