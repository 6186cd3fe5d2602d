/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The zstd sink, its context prepared before the job. Worker (sandboxed): writes only the output
 * fd it is given. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameProgression() */
#include <assert.h>
#include <unistd.h>
#include <zstd.h>

#include "log.h"
#include "macro.h"

#include "sink.h"

/* What a frame adds besides its blocks: the header (18 bytes at most), the last block's header
 * and the checksum, with room to spare. */
#define ZSTD_FRAME_OVERHEAD_MAX 64U
#define ZSTD_BLOCK_MAX (UINT64_C(128) << 10) /* ZSTD_COMPRESSBOUND()'s margin is for inputs below a block */
#define ZSTD_BLOCK_HEADER 3U
/* Worker threads for large cores (SINK_ZSTD_THREADS_MIN_SIZE and up): as many as CPUs, at most
 * SINK_ZSTD_THREADS_MAX, in jobs of ZSTD_JOB_SIZE, each starting with the whole window of the one
 * before (overlap log 9): measured on a 269 MB text core, level 3, 46.48 MB stored against
 * 46.35 MB by one thread (+0.3 %; zstd's default jobs and overlap: +3.7 %). */
#define ZSTD_JOB_SIZE (2U << 20)
#define ZSTD_OVERLAP_LOG_FULL 9
/* A small core (SINK_ZSTD_SMALL_MAX and down, as its ELF headers say) gets match tables of one
 * entry per 2^ZSTD_SMALL_TABLE_SHIFT bytes, at least 2^ZSTD_SMALL_TABLE_LOG_MIN, at most what the
 * level has: at level 3 that is 128 KiB for a 320 KiB core instead of 768 KiB, each page of which
 * a worker faults in and clears (0.2 ms a crash on this project's machines), for 0.03 % more
 * bytes (bench's tiny core; +0.2 % on a 580 KiB one). zstd's own adaptation to a known size
 * shrinks only the window above 256 KiB. */
#define ZSTD_SMALL_TABLE_SHIFT 5
#define ZSTD_SMALL_TABLE_LOG_MIN 12

typedef struct ZstdSink {
        Sink base;
        ZSTD_CCtx *cctx;
        bool started;     /* the frame has begun: parameters are fixed */
        int level;
        unsigned threads; /* worker threads asked for (0: compressed by the caller) */
        size_t out_size;
        uint8_t *out;
} ZstdSink;

static unsigned cpus_online; /* read before the sandbox, which has no /sys */

static int zstd_step(ZstdSink *zs, ZSTD_inBuffer *in, ZSTD_EndDirective mode, size_t *ret_left) {
        ZSTD_outBuffer out = { zs->out, zs->out_size, 0 };
        size_t left = ZSTD_compressStream2(zs->cctx, &out, in, mode);

        int r;

        if (ZSTD_isError(left))
                return -EIO;
        zs->started = true;
        *ret_left = left;
        r = sink_emit(&zs->base, zs->out, out.pos);
        return r < 0 ? r : out.pos == out.size;
}

/* The frame's first call starts the worker threads: if they cannot be had (RLIMIT_NPROC, without
 * a user namespace of its own, counts the user's other processes), the sink goes on without. */
static int zstd_start(ZstdSink *zs, ZSTD_inBuffer *in, ZSTD_EndDirective mode, size_t *ret_left) {
        int r = zstd_step(zs, in, mode, ret_left);

        if (r != -EIO || zs->threads == 0 || in->pos != 0 || zs->base.bytes_out != 0)
                return r;
        log_debug("No zstd worker threads, compressing in one");
        zs->threads = 0;
        zs->started = false;
        if (ZSTD_isError(ZSTD_CCtx_reset(zs->cctx, ZSTD_reset_session_only)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_nbWorkers, 0)))
                return -EIO;
        return zstd_step(zs, in, mode, ret_left);
}

/* Until the input is taken (continue), or the frame is flushed or ended (left 0); a full output
 * buffer means there is more to take out. */
static int zstd_run(ZstdSink *zs, ZSTD_inBuffer *in, ZSTD_EndDirective mode) {
        for (;;) {
                size_t left;
                int full = zs->started ? zstd_step(zs, in, mode, &left) : zstd_start(zs, in, mode, &left);

                if (full < 0)
                        return full;
                if (full)
                        continue;
                if (mode == ZSTD_e_continue ? in->pos == in->size : left == 0)
                        return 0;
        }
}

static int zstd_write(Sink *s, const uint8_t *p, size_t n) {
        ZSTD_inBuffer in = { p, n, 0 };
        /* not flushed: zstd keeps what it has not compressed yet, and zstd_bound() counts it */
        return zstd_run((ZstdSink *) s, &in, ZSTD_e_continue);
}

static int zstd_flush(Sink *s) {
        ZSTD_inBuffer in = { NULL, 0, 0 };
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

/* What the file can still grow by with n more bytes and the end of the frame: what zstd has
 * compressed but not handed out, and for everything it has not compressed yet (held, in its
 * worker threads' jobs, or the n bytes) raw blocks with their headers, one more per job. */
static uint64_t zstd_bound(const Sink *s, uint64_t n) {
        const ZstdSink *zs = (const ZstdSink *) s;
        ZSTD_frameProgression p = ZSTD_getFrameProgression(zs->cctx);
        uint64_t held = p.produced > p.flushed ? p.produced - p.flushed : 0;
        uint64_t raw = (p.ingested > p.consumed ? p.ingested - p.consumed : 0) + n;
        uint64_t blocks = raw / ZSTD_BLOCK_MAX + 1 + (zs->threads > 0 ? raw / ZSTD_JOB_SIZE + zs->threads + 1 : 0);

        /* (raw >> 8: ZSTD_COMPRESSBOUND()'s own allowance, far above what block headers take) */
        return held + raw + (raw >> 8) + blocks * ZSTD_BLOCK_HEADER + ZSTD_FRAME_OVERHEAD_MAX;
}

static unsigned log2_ceil(uint64_t n) {
        unsigned l = 0;

        while (l < 63 && (UINT64_C(1) << l) < n)
                l++;
        return l;
}

/* Tables and window for a core of about this size: a hint, not a promise (it comes from the
 * core's own headers), so a core that is larger after all is compressed whole, only less well. */
static int zstd_fit_small(ZSTD_CCtx *cctx, int level, uint64_t size) {
        ZSTD_compressionParameters cp = ZSTD_getCParams(level, size, 0);
        unsigned want = MAX(log2_ceil(size), ZSTD_SMALL_TABLE_LOG_MIN + ZSTD_SMALL_TABLE_SHIFT) - ZSTD_SMALL_TABLE_SHIFT;

        assert(size > 0 && size <= SINK_ZSTD_SMALL_MAX);
        if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_srcSizeHint, (int) size)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, (int) MIN(cp.hashLog, want))) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog, (int) MIN(cp.chainLog, want))))
                return -EIO;
        return 0;
}

/* A small core's tables, or a large one's worker threads, if the frame has not begun. */
static void zstd_size_hint(Sink *s, uint64_t size) {
        ZstdSink *zs = (ZstdSink *) s;
        unsigned threads = sink_zstd_threads();

        if (!zs->started && size > 0 && size <= SINK_ZSTD_SMALL_MAX) {
                if (zstd_fit_small(zs->cctx, zs->level, size) < 0)
                        log_debug("Could not fit zstd's tables to a core of %llu bytes", (unsigned long long) size);
                return;
        }
        if (zs->started || zs->threads > 0 || size < SINK_ZSTD_THREADS_MIN_SIZE || threads < 2 ||
            zs->level > SINK_ZSTD_THREADS_LEVEL_MAX)
                return;
        if (ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_nbWorkers, (int) threads)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_jobSize, ZSTD_JOB_SIZE)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_overlapLog, ZSTD_OVERLAP_LOG_FULL))) {
                (void) ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_nbWorkers, 0); /* a libzstd without threads */
                return;
        }
        zs->threads = threads;
        log_debug("A core of %llu bytes: %u zstd worker threads", (unsigned long long) size, threads);
}

void sink_zstd_count_cpus(void) {
        long n;

        if (cpus_online > 0)
                return;
        n = sysconf(_SC_NPROCESSORS_ONLN);
        cpus_online = n > 0 ? (unsigned) MIN(n, 1024L) : 1;
}

unsigned sink_zstd_threads(void) {
#ifdef SANITIZED
        return 0; /* (macro.h) */
#else
        unsigned threads = MIN(cpus_online, (unsigned) SINK_ZSTD_THREADS_MAX);
        return threads < 2 ? 0 : threads;
#endif
}

size_t sink_zstd_memory(const Sink *s) {
        return ZSTD_sizeof_CCtx(((const ZstdSink *) s)->cctx);
}

static const SinkOps zstd_ops = { zstd_write, zstd_finish, zstd_free, zstd_bound, zstd_size_hint, zstd_flush };

/* A context made and warmed before the job, for the largest small core: creating it and faulting
 * in its tables is a good part of what a tiny core costs, and depends on nothing of it. A larger
 * core's tables are made when it comes (on the held path only where it is not spooled). */
static ZSTD_CCtx *prepared;

int sink_zstd_prepare(int level) {
        uint8_t scratch[ZSTD_COMPRESSBOUND(1) + 64];
        ZSTD_outBuffer out = { scratch, sizeof scratch, 0 };
        ZSTD_inBuffer in = { "", 1, 0 };

        sink_zstd_count_cpus();
        if (prepared)
                return 0;
        prepared = ZSTD_createCCtx();
        if (!prepared)
                return -ENOMEM;
        /* a stream of unknown size, as a core is, with a small core's tables (a first call that
         * ends the frame would make it one of known size, and smaller ones) */
        if (ZSTD_isError(ZSTD_CCtx_setParameter(prepared, ZSTD_c_compressionLevel, level)) ||
            zstd_fit_small(prepared, level, SINK_ZSTD_SMALL_MAX) < 0 ||
            ZSTD_isError(ZSTD_compressStream2(prepared, &out, &in, ZSTD_e_continue)) ||
            ZSTD_isError(ZSTD_compressStream2(prepared, &out, &(ZSTD_inBuffer) {}, ZSTD_e_end)) ||
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
        zs->level = level;
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
