/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lz4 frame sink: core bytes compressed in bounded chunks. Worker (sandboxed): writes only
 * the output fd it is given. */
#include <lz4frame.h>

#include "macro.h"
#include "sink.h"

/* Input is fed to LZ4F in pieces of at most this size, so the output buffer stays bounded. */
#define LZ4_CHUNK (256U * 1024U)
#define LZ4_BLOCK_HEADER 4U
#define LZ4_END_MAX 8U /* the end mark and the content checksum */

typedef struct Lz4Sink {
        Sink base;
        LZ4F_cctx *cctx;
        LZ4F_preferences_t prefs;
        bool begun;
        size_t out_size;
        uint8_t *out;
} Lz4Sink;

static int lz4_begin(Lz4Sink *ls) {
        size_t k = LZ4F_compressBegin(ls->cctx, ls->out, ls->out_size, &ls->prefs);

        if (LZ4F_isError(k))
                return -EIO;
        ls->begun = true;
        return sink_emit(&ls->base, ls->out, k);
}

static int lz4_write(Sink *s, const uint8_t *p, size_t n) {
        Lz4Sink *ls = (Lz4Sink *) s;
        int r;

        if (!ls->begun && (r = lz4_begin(ls)) < 0)
                return r;
        while (n > 0) {
                size_t c = MIN(n, (size_t) LZ4_CHUNK);
                size_t k = LZ4F_compressUpdate(ls->cctx, ls->out, ls->out_size, p, c, NULL);
                if (LZ4F_isError(k))
                        return -EIO;
                r = sink_emit(s, ls->out, k);
                if (r < 0)
                        return r;
                p += c;
                n -= c;
        }
        return 0;
}

static int lz4_finish(Sink *s) {
        Lz4Sink *ls = (Lz4Sink *) s;
        size_t k;
        int r;

        if (!ls->begun && (r = lz4_begin(ls)) < 0)
                return r;
        k = LZ4F_compressEnd(ls->cctx, ls->out, ls->out_size, NULL);
        if (LZ4F_isError(k))
                return -EIO;
        return sink_emit(s, ls->out, k);
}

static void lz4_free(Sink *s) {
        Lz4Sink *ls = (Lz4Sink *) s;

        LZ4F_freeCompressionContext(ls->cctx);
        free(ls->out);
        free(ls);
}

/* With autoFlush nothing is held back: each piece of n becomes blocks no larger than their input
 * (an incompressible one is stored raw) with a 4-byte header each; then the frame's end (end
 * mark, content checksum). The header comes first if nothing was written yet. */
static uint64_t lz4_bound(const Sink *s, uint64_t n) {
        const Lz4Sink *ls = (const Lz4Sink *) s;

        return (ls->begun ? 0 : LZ4F_HEADER_SIZE_MAX) + n + LZ4_BLOCK_HEADER * (n / LZ4_CHUNK + 1) + LZ4_END_MAX;
}

static const SinkOps lz4_ops = { lz4_write, lz4_finish, lz4_free, lz4_bound };

int sink_new_lz4(int fd, int level, Sink **ret) {
        Lz4Sink *ls = calloc(1, sizeof *ls);

        if (!ls)
                return -ENOMEM;
        ls->base = (Sink) { .ops = &lz4_ops, .fd = fd };
        ls->prefs = (LZ4F_preferences_t) {
                .frameInfo = { .blockSizeID = LZ4F_max4MB, .contentChecksumFlag = LZ4F_contentChecksumEnabled },
                .compressionLevel = level,
                .autoFlush = 1, /* nothing held back between writes (lz4_bound) */
        };
        ls->out_size = LZ4F_compressBound(LZ4_CHUNK, &ls->prefs);
        ls->out = malloc(ls->out_size);
        if (LZ4F_isError(LZ4F_createCompressionContext(&ls->cctx, LZ4F_VERSION)) || !ls->out) {
                lz4_free(&ls->base);
                return -ENOMEM;
        }
        *ret = &ls->base;
        return 0;
}
