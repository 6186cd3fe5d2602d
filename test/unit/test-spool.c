/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The spool gives back exactly the stream it took, from any offset and in any chunking; zero
 * pages are not held; past its grant (or its extent table) it refuses a chunk whole and what it
 * holds still replays. */
#include "macro.h"
#include "spool.h"
#include "tests.h"

#define STREAM_SIZE (6U << 20)
#define START 12345U

static uint8_t stream[STREAM_SIZE], back[STREAM_SIZE], buf[100000];
static size_t back_len;

static void make_stream(void) {
        uint64_t x = 7;
        /* data, a zero run of whole and partial pages, data, a long zero run, a lone data byte */
        for (size_t i = 0; i < STREAM_SIZE; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                stream[i] = (i > 1000000 && i < 3000000) || i > 4000000 ? 0 : (uint8_t) (x | 1);
        }
        stream[STREAM_SIZE - 5] = 0x42;
}

static int collect(void *userdata, const uint8_t *p, size_t n, uint64_t offset) {
        CHECK_EQ(offset, START + back_len); /* in order, no gap */
        CHECK(n <= sizeof buf);
        memcpy(back + back_len, p, n);
        back_len += n;
        return 0;
}

static void round_trip(size_t chunk) {
        Spool s;

        CHECK_EQ(spool_open(&s, -EBADF, START, STREAM_SIZE), 0);
        for (size_t o = 0; o < STREAM_SIZE; o += chunk)
                CHECK_EQ(spool_add(&s, stream + o, MIN(chunk, STREAM_SIZE - o)), 0);
        CHECK_EQ(s.end, START + STREAM_SIZE);
        /* the zero runs are not held (but for page ends next to data) */
        CHECK(s.used < STREAM_SIZE - 2900000);
        back_len = 0;
        CHECK_EQ(spool_replay(&s, buf, sizeof buf, collect, NULL), 0);
        CHECK_EQ(back_len, STREAM_SIZE);
        CHECK(memcmp(back, stream, STREAM_SIZE) == 0);
        spool_close(&s);
}

static void test_full(void) {
        Spool s;
        uint64_t used;
        int r = 0;
        size_t o;

        CHECK_EQ(spool_open(&s, -EBADF, START, 500000), 0);
        for (o = 0; o < STREAM_SIZE && r == 0; o += 65536)
                r = spool_add(&s, stream + o, 65536);
        CHECK_EQ(r, -ENOSPC);
        o -= 65536; /* the refused chunk left nothing behind */
        CHECK(s.used <= 500000);
        CHECK_EQ(s.end, START + o);
        used = s.used;
        back_len = 0;
        CHECK_EQ(spool_replay(&s, buf, sizeof buf, collect, NULL), 0);
        CHECK_EQ(back_len, o);
        CHECK(memcmp(back, stream, o) == 0);
        CHECK_EQ(s.used, used);
        spool_close(&s);
}

static void test_fragmented(void) {
        static uint8_t pages[2 * 4096];
        Spool s;
        int r = 0;

        /* a data page, a zero page, again and again: one extent per data page until the table is full */
        pages[0] = 1;
        CHECK_EQ(spool_open(&s, -EBADF, 0, UINT64_MAX / 2), 0);
        for (unsigned i = 0; i <= SPOOL_EXTENTS_MAX && r == 0; i++)
                r = spool_add(&s, pages, sizeof pages);
        CHECK_EQ(r, -ENOSPC);
        CHECK_EQ(s.n_extents, SPOOL_EXTENTS_MAX);
        spool_close(&s);
}

int main(void) {
        make_stream();
        round_trip(STREAM_SIZE);
        round_trip(65536);
        round_trip(4095);
        round_trip(100003);
        test_full();
        test_fragmented();
        TESTS_DONE();
}
