/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The zstd sink, its context prepared before the job. Worker (sandboxed): writes only the output
 * fd it is given. */
#include <zstd.h>

#include "macro.h"
#include "sink.h"

/* What a frame adds besides its blocks: the header (18 bytes at most), the last block's header
 * and the checksum, with room to spare. */
#define ZSTD_FRAME_OVERHEAD_MAX 64U
#define ZSTD_BLOCK_MAX (UINT64_C(128) << 10) /* ZSTD_COMPRESSBOUND()'s margin is for inputs below a block */

typedef struct ZstdSink {
        Sink base;
        ZSTD_CCtx *cctx;
        size_t out_size;
        uint8_t *out;
} ZstdSink;

static int zstd_run(ZstdSink *zs, ZSTD_inBuffer *in, ZSTD_EndDirective mode) {
        for (;;) {
                ZSTD_outBuffer out = { zs->out, zs->out_size, 0 };
                size_t left = ZSTD_compressStream2(zs->cctx, &out, in, mode);
                int r;

                if (ZSTD_isError(left))
                        return -EIO;
                r = sink_emit(&zs->base, zs->out, out.pos);
                if (r < 0)
                        return r;
                if (left == 0)
                        return 0;
        }
}

static int zstd_write(Sink *s, const uint8_t *p, size_t n) {
        ZSTD_inBuffer in = { p, n, 0 };
        /* flushed at once: nothing is held back, so sink_bound() knows what the file can become */
        return zstd_run((ZstdSink *) s, &in, ZSTD_e_flush);
}

static int zstd_finish(Sink *s) {
        ZSTD_inBuffer in = { NULL, 0, 0 };
        return zstd_run((ZstdSink *) s, &in, ZSTD_e_end);
}

static void zstd_free(Sink *s) {
        ZstdSink *zs = (ZstdSink *) s;

        ZSTD_freeCCtx(zs->cctx);
        free(zs->out);
        free(zs);
}

/* Each write is flushed: n bytes become blocks (raw ones where they do not compress) with their
 * headers, within ZSTD_COMPRESSBOUND(n) (its formula, in 64 bits), and the frame's end follows. */
static uint64_t zstd_bound(const Sink *s, uint64_t n) {
        uint64_t margin = n < ZSTD_BLOCK_MAX ? (ZSTD_BLOCK_MAX - n) >> 11 : 0;

        return n + (n >> 8) + margin + ZSTD_FRAME_OVERHEAD_MAX;
}

static const SinkOps zstd_ops = { zstd_write, zstd_finish, zstd_free, zstd_bound };

/* A context made and warmed before the job: creating it and faulting in its tables (megabytes at
 * the default level) is a good part of what a tiny core costs, and depends on nothing of it. */
static ZSTD_CCtx *prepared;

int sink_zstd_prepare(int level) {
        uint8_t scratch[ZSTD_COMPRESSBOUND(1) + 64];
        ZSTD_outBuffer out = { scratch, sizeof scratch, 0 };
        ZSTD_inBuffer in = { "", 1, 0 };

        if (prepared)
                return 0;
        prepared = ZSTD_createCCtx();
        if (!prepared)
                return -ENOMEM;
        /* a stream of unknown size, as a core is: the tables are sized as for the real one */
        if (ZSTD_isError(ZSTD_CCtx_setParameter(prepared, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_compressStream2(prepared, &out, &in, ZSTD_e_end)) ||
            ZSTD_isError(ZSTD_CCtx_reset(prepared, ZSTD_reset_session_and_parameters))) {
                ZSTD_freeCCtx(prepared);
                prepared = NULL;
                return -ENOMEM;
        }
        return 0;
}

int sink_new_zstd(int fd, int level, Sink **ret) {
        ZstdSink *zs = calloc(1, sizeof *zs);

        if (!zs)
                return -ENOMEM;
        zs->base = (Sink) { .ops = &zstd_ops, .fd = fd };
        zs->cctx = prepared ?: ZSTD_createCCtx();
        prepared = NULL;
        zs->out_size = ZSTD_CStreamOutSize();
        zs->out = malloc(zs->out_size);
        if (!zs->cctx || !zs->out ||
            ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_checksumFlag, 1))) {
                zstd_free(&zs->base);
                return -ENOMEM;
        }
        *ret = &zs->base;
        return 0;
}
