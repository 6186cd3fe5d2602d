/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes a streamed ELF core from its headers and keeps its PT_NOTE (and PT_LOADs) as they pass.
 * Worker (sandboxed), pure: hostile input, bounded memory, no I/O. */
#include <elf.h>
#include <string.h>

#include "elf-stream.h"
#include "macro.h"

void elf_stream_init(ElfStream *s) {
        *s = (ElfStream) { .state = ELF_STREAM_COLLECTING };
}

void elf_stream_done(ElfStream *s) {
        free(s->phdrs);
        s->phdrs = NULL;
        free(s->notes);
        s->notes = NULL;
}

void elf_stream_free_kept(ElfStream *s) {
        free(s->loads);
        s->loads = NULL;
        s->n_loads = 0;
        free(s->kept_notes);
        s->kept_notes = NULL;
        s->kept_notes_len = 0;
}

static void invalid(ElfStream *s, const char *why) {
        s->state = ELF_STREAM_INVALID;
        s->why = why;
        elf_stream_done(s);
}

/* Copies the part of [p, p+n) at `offset` that falls into [start, end) of the stream into dst. */
static void copy_window(uint8_t *dst, uint64_t start, uint64_t end, const uint8_t *p, size_t n, uint64_t offset) {
        uint64_t lo = MAX(start, offset), hi = MIN(end, offset + n);

        if (lo < hi)
                memcpy(dst + (lo - start), p + (lo - offset), hi - lo);
}

static size_t ehdr_size(const ElfStream *s) {
        return s->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
}

static void parse_ehdr(ElfStream *s) {
        const uint8_t *e = s->ehdr;
        uint64_t phoff;
        uint16_t phentsize, type;

        if (memcmp(e, ELFMAG, SELFMAG) != 0)
                return invalid(s, "no ELF magic");
        if (e[EI_CLASS] != ELFCLASS64 && e[EI_CLASS] != ELFCLASS32)
                return invalid(s, "unknown ELF class");
        if (e[EI_DATA] != ELFDATA2LSB) /* only native little-endian cores come from this kernel */
                return invalid(s, "not little-endian");
        s->is64 = e[EI_CLASS] == ELFCLASS64;
        if (s->is64) {
                Elf64_Ehdr h;
                memcpy(&h, e, sizeof h);
                type = h.e_type, phoff = h.e_phoff, phentsize = h.e_phentsize, s->phnum = h.e_phnum;
                s->machine = h.e_machine;
        } else {
                Elf32_Ehdr h;
                memcpy(&h, e, sizeof h);
                type = h.e_type, phoff = h.e_phoff, phentsize = h.e_phentsize, s->phnum = h.e_phnum;
                s->machine = h.e_machine;
        }
        if (type != ET_CORE)
                return invalid(s, "not ET_CORE");
        if (phentsize != (s->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
                return invalid(s, "bad e_phentsize");
        if (s->phnum == 0 || s->phnum == PN_XNUM)
                return invalid(s, "program header count not in the ELF header");
        if (phoff < ehdr_size(s) || phoff > ELF_PHDR_END_MAX ||
            phoff + (uint64_t) s->phnum * phentsize > ELF_PHDR_END_MAX)
                return invalid(s, "program headers out of range");
        s->ph_start = phoff;
        s->ph_end = phoff + (uint64_t) s->phnum * phentsize;
        s->phdrs = calloc(1, s->ph_end - s->ph_start);
        if (!s->phdrs)
                return invalid(s, "out of memory");
}

/* Keeps a 64-bit PT_LOAD for the backtrace capture. */
static void keep_load(ElfStream *s, const Elf64_Phdr *ph) {
        if (!s->keep || ph->p_type != PT_LOAD || ph->p_filesz == 0)
                return;
        if (!s->loads && !(s->loads = calloc(s->phnum, sizeof *s->loads)))
                return;
        s->loads[s->n_loads++] = (ElfLoad) { ph->p_vaddr, ph->p_offset, ph->p_filesz, ph->p_flags };
}

/* Type, file offset and file size of program header i. */
static void segment(ElfStream *s, size_t i, uint32_t *type, uint64_t *off, uint64_t *size) {
        if (s->is64) {
                Elf64_Phdr ph;
                memcpy(&ph, s->phdrs + i * sizeof ph, sizeof ph);
                *type = ph.p_type, *off = ph.p_offset, *size = ph.p_filesz;
                keep_load(s, &ph);
        } else {
                Elf32_Phdr ph;
                memcpy(&ph, s->phdrs + i * sizeof ph, sizeof ph);
                *type = ph.p_type, *off = ph.p_offset, *size = ph.p_filesz;
        }
}

static void parse_phdrs(ElfStream *s) {
        uint64_t end = s->ph_end;

        for (size_t i = 0; i < s->phnum; i++) {
                uint32_t type;
                uint64_t off, size;

                segment(s, i, &type, &off, &size);
                if (off > UINT64_MAX - size)
                        return invalid(s, "segment end overflows");
                end = MAX(end, off + size);
                /* Notes already streamed past (before the headers) cannot be captured. */
                if (type == PT_NOTE && !s->notes && !s->notes_done && size > 0 && size <= CORE_NOTES_MAX &&
                    off >= s->ph_end) {
                        s->notes = calloc(1, size);
                        s->note_start = off;
                        s->note_end = off + size;
                }
        }
        s->expected_size = end;
        s->state = ELF_STREAM_KNOWN;
        free(s->phdrs);
        s->phdrs = NULL;
        if (!s->notes)
                s->notes_done = true;
}

static void feed_notes(ElfStream *s, const uint8_t *p, size_t n, uint64_t offset) {
        copy_window(s->notes, s->note_start, s->note_end, p, n, offset);
        if (offset + n < s->note_end)
                return;
        s->notes_ok = core_notes_parse(s->notes, s->note_end - s->note_start, s->is64, s->machine, &s->core_notes) >= 0;
        s->notes_done = true;
        if (s->keep && s->is64) {
                s->kept_notes = s->notes;
                s->kept_notes_len = s->note_end - s->note_start;
        } else
                free(s->notes);
        s->notes = NULL;
}

void elf_stream_feed(ElfStream *s, const uint8_t *p, size_t n, uint64_t offset) {
        if (n == 0)
                return;
        if (s->state == ELF_STREAM_KNOWN) {
                if (s->notes)
                        feed_notes(s, p, n, offset);
                return;
        }
        if (s->state != ELF_STREAM_COLLECTING)
                return;

        if (!s->phdrs) { /* still waiting for the ELF header */
                copy_window(s->ehdr, 0, sizeof s->ehdr, p, n, offset);
                if (offset + n < sizeof(Elf32_Ehdr))
                        return;
                /* The class byte decides the header size; a 64-bit header needs all 64 bytes. */
                if (s->ehdr[EI_CLASS] == ELFCLASS64 && offset + n < sizeof(Elf64_Ehdr))
                        return;
                parse_ehdr(s);
                if (s->state != ELF_STREAM_COLLECTING)
                        return;
        }
        copy_window(s->phdrs, s->ph_start, s->ph_end, p, n, offset);
        if (offset + n >= s->ph_end) {
                parse_phdrs(s);
                if (s->state == ELF_STREAM_KNOWN && s->notes)
                        feed_notes(s, p, n, offset);
        }
}
