/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ELF size tracker over synthetic headers (every malformation) and over a real core from
 * the kernel, fed at every chunk size from 1 byte up. */
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <zstd.h>

#include "elf-stream.h"
#include "macro.h"
#include "fixture.h"
#include "tests.h"


static size_t make_core64(uint8_t *buf, size_t size, uint16_t phnum, uint64_t seg_off, uint64_t seg_size) {
        Elf64_Ehdr e = {
                .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
                .e_type = ET_CORE, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
                .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = phnum,
        };
        size_t len = sizeof e + (size_t) phnum * sizeof(Elf64_Phdr);

        memset(buf, 0, size);
        memcpy(buf, &e, sizeof e);
        for (uint16_t i = 0; i < phnum && len <= size; i++) {
                Elf64_Phdr ph = { .p_type = PT_LOAD, .p_offset = seg_off + i * seg_size, .p_filesz = seg_size };
                memcpy(buf + sizeof e + i * sizeof ph, &ph, sizeof ph);
        }
        return len;
}

static ElfStream feed_chunked(const uint8_t *p, size_t n, size_t chunk) {
        ElfStream s;

        elf_stream_init(&s);
        for (size_t o = 0; o < n; o += chunk)
                elf_stream_feed(&s, p + o, MIN(chunk, n - o), o);
        return s;
}

static void test_synthetic(void) {
        static uint8_t buf[4096];
        size_t len = make_core64(buf, sizeof buf, 3, 4096, 1000);
        ElfStream s;

        for (size_t chunk = 1; chunk <= len; chunk++) {
                s = feed_chunked(buf, len, chunk);
                CHECK_EQ(s.state, ELF_STREAM_KNOWN);
                CHECK_EQ(s.expected_size, 4096 + 3 * 1000);
                elf_stream_done(&s);
        }
        /* stream ends inside the program headers: still unknown */
        s = feed_chunked(buf, len - 1, 7);
        CHECK_EQ(s.state, ELF_STREAM_COLLECTING);
        elf_stream_done(&s);

        /* malformations */
        len = make_core64(buf, sizeof buf, 3, 4096, 1000);
        buf[0] = 'X';
        s = feed_chunked(buf, len, len);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
        len = make_core64(buf, sizeof buf, 3, 4096, 1000);
        buf[16] = ET_EXEC;
        s = feed_chunked(buf, len, len);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
        len = make_core64(buf, sizeof buf, 3, 4096, 1000);
        buf[EI_DATA] = ELFDATA2MSB;
        s = feed_chunked(buf, len, len);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
        len = make_core64(buf, sizeof buf, PN_XNUM, 4096, 1000);
        s = feed_chunked(buf, 64, 64);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
        len = make_core64(buf, sizeof buf, 1, UINT64_MAX - 10, 1000); /* offset + size overflows */
        s = feed_chunked(buf, len, len);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
        len = make_core64(buf, sizeof buf, 1, 4096, 1000);
        memcpy(buf + offsetof(Elf64_Ehdr, e_phoff), &(uint64_t) { UINT64_C(1) << 40 }, 8); /* far away */
        s = feed_chunked(buf, len, len);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
        len = make_core64(buf, sizeof buf, 1, 4096, 1000);
        memcpy(buf + offsetof(Elf64_Ehdr, e_phentsize), &(uint16_t) { 12 }, 2);
        s = feed_chunked(buf, len, len);
        CHECK_EQ(s.state, ELF_STREAM_INVALID);
}

static void test_elf32(void) {
        static uint8_t buf[1024];
        Elf32_Ehdr e = {
                .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS32, ELFDATA2LSB, EV_CURRENT },
                .e_type = ET_CORE, .e_phoff = sizeof(Elf32_Ehdr), .e_phentsize = sizeof(Elf32_Phdr), .e_phnum = 2,
        };
        Elf32_Phdr ph[2] = { { .p_offset = 200, .p_filesz = 50 }, { .p_offset = 4096, .p_filesz = 8192 } };
        ElfStream s;

        memcpy(buf, &e, sizeof e);
        memcpy(buf + sizeof e, ph, sizeof ph);
        for (size_t chunk = 1; chunk < 200; chunk += 3) {
                s = feed_chunked(buf, sizeof e + sizeof ph, chunk);
                CHECK_EQ(s.state, ELF_STREAM_KNOWN);
                CHECK_EQ(s.expected_size, 4096 + 8192);
                elf_stream_done(&s);
        }
}

static void test_real_core(const char *path) {
        static uint8_t core[FIXTURE_MAX];
        static const size_t chunks[] = { 1, 2, 3, 7, 63, 64, 65, 4095, 4096, 65536, 1 << 20 };
        size_t len = load_fixture(path, core, sizeof core);
        ElfStream s;

        CHECK(len > 0);
        if (len == 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(chunks); i++) {
                s = feed_chunked(core, len, chunks[i]);
                CHECK_EQ(s.state, ELF_STREAM_KNOWN);
                CHECK_EQ(s.expected_size, len); /* the kernel's stream is exactly what the headers say */
                elf_stream_done(&s);
        }
}

int main(int argc, char **argv) {
        test_synthetic();
        test_elf32();
        if (argc > 1)
                test_real_core(argv[1]);
        TESTS_DONE();
}
