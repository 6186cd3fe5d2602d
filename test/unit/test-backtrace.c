/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backtrace path over a real kernel core (fixture): streamed in pieces through the capture,
 * rebuilt into a small core and unwound with libdwfl; then the same for truncated cores and for
 * bit flips in the headers and notes. Never a crash (ASan/UBSan in CI), always a result or a
 * clear error; the worker's memory stays bounded by the capture limits. */
#include <elf.h>
#include <fcntl.h>
#include <zstd.h>

#include "backtrace.h"
#include "capture.h"
#include "elf-stream.h"
#include "fixture.h"
#include "tests.h"

#define STREAM_CHUNK 4096U

static uint8_t core[FIXTURE_MAX];


static int run(const uint8_t *c, size_t len, char **ret_text) {
        static Capture cap;
        ElfStream s;
        uint8_t *mini = NULL;
        size_t mini_len = 0;
        BtResult bt = {};
        int r;

        elf_stream_init(&s);
        s.keep = true;
        cap = (Capture) {};
        for (size_t o = 0; o < len; o += STREAM_CHUNK) {
                size_t n = MIN((size_t) STREAM_CHUNK, len - o);
                elf_stream_feed(&s, c + o, n, o);
                if (!cap.planned && s.notes_done)
                        (void) capture_plan(&cap, &s);
                capture_feed(&cap, c + o, n, o);
        }
        CHECK(cap.total <= CAPTURE_TOTAL_MAX);
        r = cap.planned && cap.n_ranges > 0 ? capture_build_core(&cap, &s, &mini, &mini_len) : -ENODATA;
        if (r >= 0) {
                r = backtrace_core(mini, mini_len, NULL, 0, "/nonexistent", &bt);
                if (r >= 0)
                        r = (int) bt.n_threads;
        }
        if (ret_text && bt.text)
                *ret_text = strdup(bt.text);
        bt_result_free(&bt);
        free(mini);
        capture_free(&cap);
        elf_stream_free_kept(&s);
        elf_stream_done(&s);
        return r;
}

static void test_real(size_t len) {
        char *text = NULL;

        CHECK_EQ(run(core, len, &text), 1);
        CHECK(text && strstr(text, "Stack trace of thread "));
        CHECK(text && strstr(text, "#0  0x"));
        if (text)
                fprintf(stderr, "%s", text);
        free(text);
}

static unsigned n_traced, n_refused;

static void count(int r) {
        CHECK(r >= 0 || r == -ENODATA || r == -EBADMSG || r == -ENOMEM || r == -EOPNOTSUPP);
        if (r > 0)
                n_traced++;
        else
                n_refused++;
}

static void test_truncated(size_t len) {
        static uint8_t copy[FIXTURE_MAX];

        /* every header and note boundary region densely, the rest sparsely */
        for (size_t cut = 0; cut < len; cut += cut < 16384 ? 61 : 4093) {
                memcpy(copy, core, cut);
                count(run(copy, cut, NULL));
        }
}

static void test_flipped(size_t len) {
        static uint8_t copy[FIXTURE_MAX];
        Elf64_Ehdr eh;
        size_t end;

        memcpy(&eh, core, sizeof eh);
        /* the ELF header, the program headers and the notes: what the capture and libdwfl parse */
        end = MIN(len, (size_t) 16384);
        for (size_t i = 0; i < end; i += i < eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr) ? 1 : 7) {
                memcpy(copy, core, len);
                copy[i] ^= (uint8_t) (0x5a + i);
                count(run(copy, len, NULL));
        }
}

int main(int argc, char **argv) {
        size_t len = argc > 1 ? load_fixture(argv[1], core, sizeof core) : 0;

        CHECK(len > 0);
        if (len > 0) {
                test_real(len);
                test_truncated(len);
                test_flipped(len);
                fprintf(stderr, "mutations: %u traced, %u refused with an error\n", n_traced, n_refused);
                /* both outcomes must occur, or the mutations did not reach the unwinder */
                CHECK(n_traced > 0 && n_refused > 0);
        }
        TESTS_DONE();
}
