/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every sink round-trips: what goes in comes out of the real decompressor, zero runs of the
 * plain sink become holes, a failing write is reported, and sink_bound() holds: the finished
 * file is never longer than it said. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zstd.h>

#include "build-config.h"
#include "macro.h"
#include "sink.h"
#include "tests.h"

#if HAVE_LZ4
#include <lz4frame.h>
#endif

#define INPUT_SIZE (3U << 20)

static uint8_t input[INPUT_SIZE], output[2 * INPUT_SIZE], back[INPUT_SIZE + 4096];

static void make_input(void) {
        uint64_t x = 1;
        /* random, then a long zero run (not block aligned), then text */
        for (size_t i = 0; i < INPUT_SIZE / 3; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                input[i] = (uint8_t) x;
        }
        memset(input + INPUT_SIZE / 3, 0, INPUT_SIZE / 3 + 123);
        for (size_t i = 2 * INPUT_SIZE / 3 + 123; i < INPUT_SIZE; i++)
                input[i] = "hello world\n"[i % 12];
}

static size_t run_sink(Compression c, int level, size_t chunk, int *ret_fd) {
        int fd = memfd_create("sink", MFD_CLOEXEC);
        Sink *s = NULL;
        ssize_t n;

        CHECK_EQ(sink_new(c, level, fd, &s), 0);
        for (size_t o = 0; o < INPUT_SIZE; o += chunk)
                CHECK_EQ(sink_write(s, input + o, MIN(chunk, INPUT_SIZE - o)), 0);
        CHECK_EQ(sink_finish(s), 0);
        CHECK_EQ(s->bytes_in, INPUT_SIZE);
        sink_free(s);
        n = pread(fd, output, sizeof output, 0);
        CHECK(n > 0);
        *ret_fd = fd;
        return (size_t) n;
}

static void test_zstd(void) {
        int fd;
        size_t n = run_sink(COMPRESSION_ZSTD, 3, 100000, &fd);
        size_t d = ZSTD_decompress(back, sizeof back, output, n);

        CHECK(!ZSTD_isError(d));
        CHECK_EQ(d, INPUT_SIZE);
        CHECK(memcmp(back, input, INPUT_SIZE) == 0);
        CHECK(n < INPUT_SIZE / 2);
        close(fd);
}

/* A size hint that fits zstd's tables to a small core stores it about as small; one that lies (a
 * crafted core's headers) still gives back every byte. */
static size_t run_hinted(const uint8_t *in, size_t size, uint64_t hint, bool prepare, size_t *ret_memory) {
        int fd = memfd_create("sink", MFD_CLOEXEC);
        Sink *s = NULL;
        ssize_t n;

        if (prepare)
                CHECK_EQ(sink_zstd_prepare(3), 0);
        CHECK_EQ(sink_new(COMPRESSION_ZSTD, 3, fd, &s), 0);
        if (hint > 0)
                sink_size_hint(s, hint);
        for (size_t o = 0; o < size; o += 65536)
                CHECK_EQ(sink_write(s, in + o, MIN((size_t) 65536, size - o)), 0);
        CHECK_EQ(sink_finish(s), 0);
        if (ret_memory)
                *ret_memory = sink_zstd_memory(s);
        sink_free(s);
        n = pread(fd, output, sizeof output, 0);
        CHECK(n > 0);
        CHECK_EQ(ZSTD_decompress(back, sizeof back, output, (size_t) n), size);
        CHECK(memcmp(back, in, size) == 0);
        close(fd);
        return (size_t) n;
}

static void test_small_hint(void) {
        static uint8_t text[320U << 10];
        size_t small = sizeof text, plain, fitted, unprepared, plain_mem, fitted_mem, unprepared_mem;
        uint64_t x = 1;

        for (size_t i = 0; i + 64 <= small; i += 64) { /* records of a few kinds, numbers differing */
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                snprintf((char *) text + i, 64, "%s %08llx %u\n", (const char *[]) { "load", "store", "call", "ret" }[x % 4],
                         (unsigned long long) (x & 0xffff0fff), (unsigned) (x >> 60));
        }
        plain = run_hinted(text, small, 0, false, &plain_mem);
        fitted = run_hinted(text, small, small, true, &fitted_mem);
        unprepared = run_hinted(text, small, small, false, &unprepared_mem);

        fprintf(stderr, "320 KiB, level 3: %zu bytes in a context of %zu KiB; fitted: %zu bytes in %zu KiB (%zu KiB "
                "prepared for any small core)\n", plain, plain_mem >> 10, fitted, unprepared_mem >> 10, fitted_mem >> 10);
        CHECK(fitted <= plain + plain / 100);
        CHECK(unprepared_mem < plain_mem / 2);
        CHECK(fitted_mem < plain_mem);
        CHECK_EQ(unprepared, fitted);
        (void) run_hinted(input, INPUT_SIZE, 64U << 10, true, NULL); /* three times the largest small core */
        (void) run_hinted(input, INPUT_SIZE, SINK_ZSTD_SMALL_MAX + 1, true, NULL);
}

#if HAVE_LZ4
static void test_lz4(void) {
        LZ4F_dctx *dctx;
        size_t n, src, dst = sizeof back;
        int fd;

        n = run_sink(COMPRESSION_LZ4, 0, 77777, &fd);
        src = n;
        CHECK(!LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)));
        CHECK_EQ(LZ4F_decompress(dctx, back, &dst, output, &src, NULL), 0); /* 0: frame complete */
        CHECK_EQ(dst, INPUT_SIZE);
        CHECK(memcmp(back, input, INPUT_SIZE) == 0);
        LZ4F_freeDecompressionContext(dctx);
        close(fd);
}
#else
/* without lz4 the sink is refused, as the configuration refuses Compress=lz4 */
static void test_lz4(void) {
        Sink *s = NULL;

        CHECK_EQ(sink_new(COMPRESSION_LZ4, 0, STDOUT_FILENO, &s), -EOPNOTSUPP);
        CHECK(s == NULL);
}
#endif

static void test_plain(void) {
        struct stat st;
        int fd;
        size_t n = run_sink(COMPRESSION_NONE, 0, 5000, &fd);

        CHECK_EQ(n, INPUT_SIZE);
        CHECK(memcmp(output, input, INPUT_SIZE) == 0);
        CHECK_EQ(fstat(fd, &st), 0);
        CHECK((uint64_t) st.st_blocks * 512 < INPUT_SIZE - INPUT_SIZE / 4); /* the zero run is a hole */
        close(fd);

        /* a trailing zero run still gives the file its full length */
        memset(input + INPUT_SIZE - 100000, 0, 100000);
        n = run_sink(COMPRESSION_NONE, 0, INPUT_SIZE, &fd);
        CHECK_EQ(n, INPUT_SIZE);
        close(fd);
}

static void test_write_error(void) {
        int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
        Sink *s = NULL;

        CHECK_EQ(sink_new(COMPRESSION_ZSTD, 1, fd, &s), 0);
        int r = 0;
        for (size_t o = 0; o < INPUT_SIZE && r == 0; o += 65536)
                r = sink_write(s, input + o, 65536);
        if (r == 0)
                r = sink_finish(s);
        CHECK_EQ(r, -ENOSPC);
        sink_free(s);
        close(fd);
}

/* Incompressible input, in chunks: the bound asked before the last chunk covers the file once
 * that chunk is written and the sink finished, and end follows the file's length. */
static void test_bound(Compression c, size_t chunk) {
        static uint8_t noise[INPUT_SIZE];
        uint64_t x = 7;

        for (size_t i = 0; i < INPUT_SIZE; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                noise[i] = (uint8_t) x;
        }
        for (size_t k = 1; k * chunk <= INPUT_SIZE; k++) {
                int fd = memfd_create("bound", MFD_CLOEXEC);
                struct stat st;
                uint64_t bound;
                Sink *s = NULL;

                CHECK_EQ(sink_new(c, 0, fd, &s), 0);
                for (size_t i = 0; i + 1 < k; i++)
                        CHECK_EQ(sink_write(s, noise + i * chunk, chunk), 0);
                bound = sink_bound(s, chunk);
                CHECK_EQ(sink_write(s, noise + (k - 1) * chunk, chunk), 0);
                CHECK_EQ(sink_finish(s), 0);
                CHECK_EQ(fstat(fd, &st), 0);
                CHECK((uint64_t) st.st_size <= bound);
                CHECK_EQ(s->end, (uint64_t) st.st_size);
                CHECK(bound - (uint64_t) st.st_size < chunk / 64 + 4096); /* tight: a bound, not a guess */
                sink_free(s);
                close(fd);
        }
}

#define BIG_SIZE (24U << 20)

/* A large core gets worker threads (sink_size_hint()): the file decodes to the input, every
 * bound held, and it is within 5 % of what one thread stores. */
static size_t run_big(const uint8_t *big, bool hint, uint8_t *into, size_t into_size) {
        int fd = memfd_create("big", MFD_CLOEXEC);
        Sink *s = NULL;
        struct stat st;
        uint64_t bound = 0;

        CHECK_EQ(sink_new(COMPRESSION_ZSTD, 3, fd, &s), 0);
        if (hint)
                sink_size_hint(s, BIG_SIZE);
        for (size_t o = 0; o < BIG_SIZE; o += 1U << 20) {
                bound = sink_bound(s, 1U << 20);
                CHECK_EQ(sink_write(s, big + o, 1U << 20), 0);
                CHECK(s->end <= bound);
        }
        CHECK_EQ(sink_finish(s), 0);
        CHECK_EQ(fstat(fd, &st), 0);
        CHECK((uint64_t) st.st_size <= bound);
        CHECK((size_t) st.st_size <= into_size);
        CHECK_EQ(pread(fd, into, (size_t) st.st_size, 0), st.st_size);
        sink_free(s);
        close(fd);
        return (size_t) st.st_size;
}

static void test_threads(void) {
        uint8_t *big = malloc(BIG_SIZE), *one = malloc(BIG_SIZE), *many = malloc(BIG_SIZE), *back_big = malloc(BIG_SIZE);
        size_t n_one, n_many;

        CHECK(big && one && many && back_big);
        CHECK_EQ(sink_zstd_prepare(3), 0);
        for (size_t o = 0; o < BIG_SIZE; o += INPUT_SIZE) /* text, noise and zeros, 8 times over */
                memcpy(big + o, input, MIN((size_t) INPUT_SIZE, BIG_SIZE - o));
        for (size_t i = 0; i < BIG_SIZE; i += 4096) /* not quite the same 8 times */
                big[i] = (uint8_t) (i >> 12);
        n_one = run_big(big, false, one, BIG_SIZE);
        n_many = run_big(big, true, many, BIG_SIZE);
        fprintf(stderr, "24 MiB, level 3: one thread %zu bytes, %u threads %zu bytes\n", n_one, sink_zstd_threads(), n_many);
        CHECK(n_many <= n_one + n_one / 20);
        CHECK_EQ(ZSTD_decompress(back_big, BIG_SIZE, many, n_many), BIG_SIZE);
        CHECK(memcmp(back_big, big, BIG_SIZE) == 0);
        free(big);
        free(one);
        free(many);
        free(back_big);
}

int main(void) {
        make_input();
        for (Compression c = COMPRESSION_NONE; c <= (HAVE_LZ4 ? COMPRESSION_LZ4 : COMPRESSION_ZSTD); c++) {
                test_bound(c, 1U << 20);
                test_bound(c, 100000);
        }
        test_zstd();
        test_small_hint();
        test_lz4();
        test_plain();
        test_write_error();
        test_threads();
        TESTS_DONE();
}
