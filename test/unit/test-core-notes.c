/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The note parser over a real kernel core (fixture), over hand-made notes, and over every
 * single-byte corruption and truncation of the real notes: never a crash, never a read out of
 * bounds (run under ASan in CI). */
#include <elf.h>
#include <fcntl.h>
#include <zstd.h>

#include "core-notes.h"
#include "elf-stream.h"
#include "fixture.h"
#include "tests.h"


static uint8_t core[FIXTURE_MAX];


static void note_segment(const uint8_t *c, size_t len, size_t *ret_off, size_t *ret_size) {
        Elf64_Ehdr e;

        *ret_off = *ret_size = 0;
        memcpy(&e, c, sizeof e);
        for (size_t i = 0; i < e.e_phnum; i++) {
                Elf64_Phdr ph;
                memcpy(&ph, c + e.e_phoff + i * sizeof ph, sizeof ph);
                if (ph.p_type == PT_NOTE && ph.p_offset + ph.p_filesz <= len) {
                        *ret_off = ph.p_offset;
                        *ret_size = ph.p_filesz;
                        return;
                }
        }
}

static void test_real(const char *fixture) {
        size_t len = load_fixture(fixture, core, sizeof core), off, size;
        CoreNotes n;
        ElfStream s;

        CHECK(len > 0);
        if (len == 0)
                return;
        note_segment(core, len, &off, &size);
        CHECK(size > 0);
        CHECK_EQ(core_notes_parse(core + off, size, true, EM_X86_64, &n), 0);
        CHECK(n.has_siginfo && n.signo == 11 && n.code == 1 /* SEGV_MAPERR */);
        CHECK(n.has_prstatus && n.tid > 0 && n.n_threads == 1 && n.prstatus_signal == 11);
        CHECK(n.has_psinfo);
        CHECK_STREQ(n.fname, "crasher");

        /* the stream tracker finds the same, whatever the read sizes */
        for (size_t chunk = 1; chunk <= 8192; chunk = chunk * 3 + 1) {
                elf_stream_init(&s);
                for (size_t o = 0; o < len; o += chunk)
                        elf_stream_feed(&s, core + o, MIN(chunk, len - o), o);
                CHECK(s.notes_done && s.notes_ok);
                CHECK_EQ(s.core_notes.tid, n.tid);
                CHECK_EQ(s.core_notes.signo, 11);
                elf_stream_done(&s);
        }

        /* every single-byte corruption and every truncation: bounded, no crash */
        {
                uint8_t *m = malloc(size);
                for (size_t i = 0; i < size; i++) {
                        memcpy(m, core + off, size);
                        m[i] ^= 0xff;
                        (void) core_notes_parse(m, size, true, EM_X86_64, &n);
                        (void) core_notes_parse(m, i, true, EM_X86_64, &n);
                }
                free(m);
        }
}

static bool count_thread(const CoreThreadRegs *t, void *userdata) {
        unsigned *n = userdata;
        CHECK(t->tid > 0 && t->sp != 0 && t->pc != 0);
        (*n)++;
        return true;
}

static bool count_file(const CoreFileMapping *m, void *userdata) {
        unsigned *n = userdata;
        CHECK(m->end > m->start && m->path[0] == '/');
        (*n)++;
        return true;
}

static bool any_thread(const CoreThreadRegs *t, void *userdata) {
        return true;
}

static bool any_file(const CoreFileMapping *m, void *userdata) {
        /* the name must be inside the buffer and terminated there: reading it must be safe */
        (void) strlen(m->path);
        return true;
}

/* The walkers the backtrace capture uses, over the real notes and every corruption of them. */
static void test_walkers(const char *fixture) {
        size_t len = load_fixture(fixture, core, sizeof core), off, size;
        unsigned threads = 0, files = 0;
        uint8_t *m;

        if (len == 0)
                return;
        note_segment(core, len, &off, &size);
        CHECK_EQ(core_notes_threads(core + off, size, EM_X86_64, count_thread, &threads), 0);
        CHECK_EQ(threads, 1);
        CHECK_EQ(core_notes_files(core + off, size, count_file, &files), 0);
        CHECK(files >= 4); /* the crasher, libc, ld.so, vdso-less mappings */
        CHECK_EQ(core_notes_threads(core + off, size, EM_ARM, count_thread, &threads), -EOPNOTSUPP);
        m = malloc(size);
        for (size_t i = 0; i < size; i++) {
                memcpy(m, core + off, size);
                m[i] ^= 0xff;
                (void) core_notes_threads(m, size, EM_X86_64, any_thread, NULL);
                (void) core_notes_files(m, size, any_file, NULL);
                (void) core_notes_files(m, i, any_file, NULL);
        }
        free(m);
}

static void test_handmade(void) {
        uint8_t buf[256] = {};
        uint32_t hdr[3] = { 5, 12, NT_SIGINFO };
        CoreNotes n;

        memcpy(buf, hdr, 12);
        memcpy(buf + 12, "CORE\0\0\0", 8);
        memcpy(buf + 20, &(int32_t[3]) { 6, 0, -6 /* SI_TKILL */ }, 12);
        CHECK_EQ(core_notes_parse(buf, 32, true, EM_X86_64, &n), 0);
        CHECK(n.has_siginfo && n.signo == 6 && n.code == -6);
        /* a note from someone else ("LINUX") is not read */
        memcpy(buf + 12, "LINUX\0\0", 8);
        hdr[0] = 6;
        memcpy(buf, hdr, 12);
        CHECK_EQ(core_notes_parse(buf, 32, true, EM_X86_64, &n), 0);
        CHECK(!n.has_siginfo);
        /* sizes beyond the buffer */
        hdr[0] = 5;
        hdr[1] = 0xfffffff0;
        memcpy(buf, hdr, 12);
        CHECK_EQ(core_notes_parse(buf, 32, true, EM_X86_64, &n), -EBADMSG);
        /* 32-bit cores of unknown layout are not guessed at */
        CHECK_EQ(core_notes_parse(buf, 32, false, EM_ARM, &n), -EOPNOTSUPP);
        CHECK_EQ(core_notes_parse(buf, 0, true, EM_X86_64, &n), 0);
}

int main(int argc, char **argv) {
        test_handmade();
        if (argc > 1) {
                test_real(argv[1]);
                test_walkers(argv[1]);
        }
        TESTS_DONE();
}
