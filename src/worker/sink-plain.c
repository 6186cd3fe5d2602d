/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The uncompressed sink (Compress=no): aligned zero blocks become holes. Worker (sandboxed):
 * writes, seeks and truncates only the output fd it is given. */
#include <string.h>

#include "macro.h"
#include "sink.h"

/* Blocks of zeros this large (aligned in the file) become holes instead of being written. */
#define SPARSE_BLOCK 4096U

typedef struct PlainSink {
        Sink base;
        uint64_t offset; /* file offset reached, holes included (always block aligned) */
        uint8_t pending[SPARSE_BLOCK]; /* a partial block, until it is complete or the end */
        size_t pending_len;
} PlainSink;

static bool is_zero(const uint8_t *p, size_t n) {
        return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Writes whole aligned blocks, turning runs of zero blocks into holes. */
static int emit_blocks(PlainSink *ps, const uint8_t *p, size_t n) {
        while (n > 0) {
                bool zero = is_zero(p, SPARSE_BLOCK);
                size_t run = SPARSE_BLOCK;
                int r;

                while (run < n && is_zero(p + run, SPARSE_BLOCK) == zero)
                        run += SPARSE_BLOCK;
                if (zero) {
                        if (lseek(ps->base.fd, (off_t) run, SEEK_CUR) < 0)
                                return negative_errno();
                        ps->base.end += run;
                } else if ((r = sink_emit(&ps->base, p, run)) < 0)
                        return r;
                ps->offset += run;
                p += run;
                n -= run;
        }
        return 0;
}

static int plain_write(Sink *s, const uint8_t *p, size_t n) {
        PlainSink *ps = (PlainSink *) s;
        size_t whole;
        int r;

        if (ps->pending_len > 0) {
                size_t take = MIN(n, SPARSE_BLOCK - ps->pending_len);
                memcpy(ps->pending + ps->pending_len, p, take);
                ps->pending_len += take;
                p += take;
                n -= take;
                if (ps->pending_len < SPARSE_BLOCK)
                        return 0;
                r = emit_blocks(ps, ps->pending, SPARSE_BLOCK);
                if (r < 0)
                        return r;
                ps->pending_len = 0;
        }
        whole = n - n % SPARSE_BLOCK;
        r = emit_blocks(ps, p, whole);
        if (r < 0)
                return r;
        memcpy(ps->pending, p + whole, n - whole);
        ps->pending_len = n - whole;
        return 0;
}

static int plain_finish(Sink *s) {
        PlainSink *ps = (PlainSink *) s;
        uint64_t end = ps->offset + ps->pending_len;
        int r;

        if (!is_zero(ps->pending, ps->pending_len) && (r = sink_emit(s, ps->pending, ps->pending_len)) < 0)
                return r;
        /* A trailing hole only moved the offset: give the file its full length. */
        if (ftruncate(s->fd, (off_t) end) < 0)
                return negative_errno();
        s->end = end;
        return 0;
}

static void plain_free(Sink *s) {
        free(s);
}

/* Uncompressed: what it holds (a partial block) and n bytes, nothing more. */
static uint64_t plain_bound(const Sink *s, uint64_t n) {
        return ((const PlainSink *) s)->pending_len + n;
}

static const SinkOps plain_ops = { plain_write, plain_finish, plain_free, plain_bound };

int sink_new_plain(int fd, Sink **ret) {
        PlainSink *ps = calloc(1, sizeof *ps);

        if (!ps)
                return -ENOMEM;
        ps->base = (Sink) { .ops = &plain_ops, .fd = fd };
        *ret = &ps->base;
        return 0;
}
