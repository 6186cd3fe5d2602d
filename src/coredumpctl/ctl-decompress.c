/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Uncompresses a stored core (zstd, lz4 or plain) or a core kept in the journal to an fd, zero
 * runs left as holes. I/O only on the fds it is given, plus a progress line on stderr. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "build-config.h"
#include "ctl-decompress.h"
#include "ctl-format.h"
#include "fd-util.h"
#include "macro.h"
#include "time-util.h"

#if HAVE_LZ4
#include <lz4frame.h>
#endif

/* Zeros are skipped in blocks of this size (the file system's granularity for holes). */
#define HOLE_BLOCK 4096U

typedef struct Output {
        int fd;
        bool sparse;   /* a regular file: seek over zero blocks */
        uint64_t offset;
} Output;

typedef struct Progress {
        bool on;
        uint64_t total, done, last_usec;
} Progress;

static bool all_zero(const uint8_t *p, size_t n) {
        return n > 0 && p[0] == 0 && memcmp(p, p + 1, n - 1) == 0;
}

static int out_write(Output *o, const uint8_t *p, size_t n) {
        while (n > 0) {
                size_t k = o->sparse ? MIN(n, (size_t) HOLE_BLOCK) : n;
                int r = 0;

                if (o->sparse && k == HOLE_BLOCK && all_zero(p, k)) {
                        if (lseek(o->fd, (off_t) k, SEEK_CUR) < 0)
                                return negative_errno();
                } else if ((r = loop_write(o->fd, p, k)) < 0)
                        return r;
                o->offset += k;
                p += k;
                n -= k;
        }
        return 0;
}

static int out_finish(Output *o) {
        /* a trailing hole still has to count in the file's size */
        if (o->sparse && ftruncate(o->fd, (off_t) o->offset) < 0)
                return negative_errno();
        return 0;
}

static void out_init(Output *o, int fd) {
        struct stat st;

        *o = (Output) { .fd = fd };
        o->sparse = fstat(fd, &st) >= 0 && S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0;
}

static void progress_update(Progress *p, uint64_t more) {
        char done[FORMAT_BYTES_MAX], total[FORMAT_BYTES_MAX];
        uint64_t now;

        p->done += more;
        if (!p->on)
                return;
        now = now_usec(CLOCK_MONOTONIC);
        if (now - p->last_usec < PROGRESS_INTERVAL_USEC && p->done < p->total)
                return;
        p->last_usec = now;
        fprintf(stderr, "\rDecompressing core: %3u%% (%s of %s)\x1b[K", (unsigned) (p->done * 100 / MAX(p->total, (uint64_t) 1)),
                format_bytes(done, sizeof done, p->done), format_bytes(total, sizeof total, p->total));
}

static void progress_end(Progress *p) {
        if (p->on)
                fputs("\r\x1b[K", stderr);
}

static int copy_zstd(int in, Output *o, Progress *p, uint8_t *ibuf, uint8_t *obuf) {
        ZSTD_DCtx *z = ZSTD_createDCtx();
        size_t ret = 1;
        ssize_t n;
        int r = 0;

        if (!z)
                return -ENOMEM;
        while (r >= 0 && (n = read(in, ibuf, DECOMPRESS_CHUNK)) != 0) {
                ZSTD_inBuffer ib = { ibuf, (size_t) MAX(n, 0), 0 };
                if (n < 0) {
                        r = errno == EINTR ? 0 : negative_errno();
                        continue;
                }
                progress_update(p, (uint64_t) n);
                /* a full output buffer may leave more to flush even when the input is used up */
                for (bool full = true; r >= 0 && (ib.pos < ib.size || full);) {
                        ZSTD_outBuffer ob = { obuf, DECOMPRESS_CHUNK, 0 };
                        ret = ZSTD_decompressStream(z, &ob, &ib);
                        if (ZSTD_isError(ret))
                                r = -EBADMSG;
                        else
                                r = out_write(o, obuf, ob.pos);
                        full = ob.pos == ob.size;
                }
        }
        ZSTD_freeDCtx(z);
        /* ret != 0 at the end: the frame was cut short */
        return r < 0 ? r : ret != 0 ? -EBADMSG : 0;
}

#if HAVE_LZ4
static int copy_lz4(int in, Output *o, Progress *p, uint8_t *ibuf, uint8_t *obuf) {
        LZ4F_dctx *z = NULL;
        size_t ret = 1;
        ssize_t n;
        int r = 0;

        if (LZ4F_isError(LZ4F_createDecompressionContext(&z, LZ4F_VERSION)))
                return -ENOMEM;
        while (r >= 0 && (n = read(in, ibuf, DECOMPRESS_CHUNK)) != 0) {
                size_t pos = 0;
                if (n < 0) {
                        r = errno == EINTR ? 0 : negative_errno();
                        continue;
                }
                progress_update(p, (uint64_t) n);
                for (bool full = true; r >= 0 && (pos < (size_t) n || full);) {
                        size_t out_len = DECOMPRESS_CHUNK, in_len = (size_t) n - pos;
                        ret = LZ4F_decompress(z, obuf, &out_len, ibuf + pos, &in_len, NULL);
                        if (LZ4F_isError(ret))
                                r = -EBADMSG;
                        else
                                r = out_write(o, obuf, out_len);
                        pos += in_len;
                        full = out_len == DECOMPRESS_CHUNK;
                }
        }
        LZ4F_freeDecompressionContext(z);
        return r < 0 ? r : ret != 0 ? -EBADMSG : 0;
}
#else
static int copy_lz4(int in, Output *o, Progress *p, uint8_t *ibuf, uint8_t *obuf) {
        return -EOPNOTSUPP;
}
#endif

static int copy_plain(int in, Output *o, Progress *p, uint8_t *ibuf) {
        ssize_t n;
        int r = 0;

        while (r >= 0 && (n = read(in, ibuf, DECOMPRESS_CHUNK)) != 0) {
                if (n < 0) {
                        r = errno == EINTR ? 0 : negative_errno();
                        continue;
                }
                progress_update(p, (uint64_t) n);
                r = out_write(o, ibuf, (size_t) n);
        }
        return r;
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t l = strlen(s), k = strlen(suffix);
        return l >= k && strcmp(s + l - k, suffix) == 0;
}

bool decompress_supported(const char *path) {
        return HAVE_LZ4 || !has_suffix(path, ".lz4");
}

int decompress_core(const char *path, int in_fd, int out_fd, bool progress) {
        _cleanup_free_ uint8_t *ibuf = malloc(DECOMPRESS_CHUNK), *obuf = malloc(DECOMPRESS_CHUNK);
        Progress p = {};
        struct stat st;
        Output o;
        int r;

        if (!ibuf || !obuf)
                return -ENOMEM;
        if (fstat(in_fd, &st) < 0)
                return negative_errno();
        p.total = (uint64_t) st.st_size;
        p.on = progress && p.total >= PROGRESS_MIN_BYTES && isatty(STDERR_FILENO);
        out_init(&o, out_fd);
        if (has_suffix(path, ".zst"))
                r = copy_zstd(in_fd, &o, &p, ibuf, obuf);
        else if (has_suffix(path, ".lz4"))
                r = copy_lz4(in_fd, &o, &p, ibuf, obuf);
        else
                r = copy_plain(in_fd, &o, &p, ibuf);
        progress_end(&p);
        return r < 0 ? r : out_finish(&o);
}

int write_core_buffer(const void *buf, size_t len, int out_fd) {
        Output o;
        int r;

        out_init(&o, out_fd);
        r = out_write(&o, buf, len);
        return r < 0 ? r : out_finish(&o);
}
