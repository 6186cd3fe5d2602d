/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Keeps what unwinding needs as the core streams (notes, stack tops, modules' first pages) and
 * rebuilds a small ELF core from it. Worker (sandboxed), pure: memory only, bounded. */
#include <elf.h>
#include <string.h>

#include "capture.h"
#include "macro.h"

static uint64_t page_down(uint64_t v) {
        return v & ~(uint64_t) (CAPTURE_PAGE - 1);
}

static uint64_t page_up(uint64_t v) {
        return v > UINT64_MAX - CAPTURE_PAGE ? page_down(UINT64_MAX) : page_down(v + CAPTURE_PAGE - 1);
}

static const ElfLoad *load_of(const ElfStream *s, uint64_t vaddr) {
        for (size_t i = 0; i < s->n_loads; i++)
                if (vaddr >= s->loads[i].vaddr && vaddr - s->loads[i].vaddr < s->loads[i].filesz)
                        return &s->loads[i];
        return NULL;
}

/* Plans [lo, hi) of memory, clipped to the segment holding lo. */
static void want(Capture *c, const ElfStream *s, uint64_t lo, uint64_t hi) {
        const ElfLoad *l = load_of(s, lo);
        uint64_t end;

        if (!l || c->n_ranges >= CAPTURE_RANGES_MAX)
                return;
        lo = MAX(page_down(lo), l->vaddr);
        end = l->vaddr + l->filesz; /* the loads come from a parsed ELF header: no overflow */
        hi = MIN(page_up(hi), end);
        if (hi <= lo || c->total + (hi - lo) > CAPTURE_TOTAL_MAX)
                return;
        c->ranges[c->n_ranges++] = (CaptureRange) { .vaddr = lo, .offset = l->offset + (lo - l->vaddr), .len = hi - lo,
                                                    .flags = l->flags };
        c->total += hi - lo;
}

typedef struct PlanContext {
        Capture *c;
        const ElfStream *s;
        unsigned modules;
} PlanContext;

static bool plan_thread(const CoreThreadRegs *t, void *userdata) {
        PlanContext *p = userdata;
        uint64_t lo = t->sp > CAPTURE_STACK_BELOW ? t->sp - CAPTURE_STACK_BELOW : 0;

        want(p->c, p->s, lo, t->sp > UINT64_MAX - CAPTURE_STACK_ABOVE ? UINT64_MAX : t->sp + CAPTURE_STACK_ABOVE);
        return ++p->c->n_threads < CAPTURE_THREADS_MAX;
}

static bool plan_file(const CoreFileMapping *m, void *userdata) {
        PlanContext *p = userdata;

        if (m->file_offset != 0)
                return true;
        want(p->c, p->s, m->start, MIN(m->end, m->start + CAPTURE_PAGE));
        return ++p->modules < CAPTURE_MODULES_MAX;
}

static int cmp_range(const void *a, const void *b) {
        const CaptureRange *x = a, *y = b;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Overlapping ranges (two threads near each other) become one; the total shrinks with them. */
static void merge(Capture *c) {
        size_t k = 0;

        if (c->n_ranges == 0)
                return;
        qsort(c->ranges, c->n_ranges, sizeof *c->ranges, cmp_range);
        for (size_t i = 1; i < c->n_ranges; i++) {
                CaptureRange *last = &c->ranges[k], *r = &c->ranges[i];
                if (r->offset <= last->offset + last->len && r->vaddr - last->vaddr == r->offset - last->offset) {
                        uint64_t end = MAX(last->offset + last->len, r->offset + r->len);
                        c->total -= last->len + r->len - (end - last->offset);
                        last->len = end - last->offset;
                } else
                        c->ranges[++k] = *r;
        }
        c->n_ranges = k + 1;
}

int capture_plan(Capture *c, const ElfStream *s) {
        PlanContext p = { .c = c, .s = s };
        int r;

        *c = (Capture) { .planned = true };
        if (!s->is64 || !s->kept_notes || s->n_loads == 0) {
                c->why_not = "the core has no 64-bit notes and segments to unwind from";
                return -EOPNOTSUPP;
        }
        r = core_notes_threads(s->kept_notes, s->kept_notes_len, s->machine, plan_thread, &p);
        if (r < 0) {
                c->why_not = r == -EOPNOTSUPP ? "stack traces are not supported for this architecture"
                                              : "the thread notes are malformed";
                c->n_ranges = 0; /* nothing half-planned stays */
                c->total = 0;
                return r;
        }
        (void) core_notes_files(s->kept_notes, s->kept_notes_len, plan_file, &p);
        merge(c);
        for (size_t i = 0; i < c->n_ranges; i++)
                if (!(c->ranges[i].data = calloc(1, c->ranges[i].len))) {
                        capture_free(c);
                        c->why_not = "out of memory";
                        return -ENOMEM;
                }
        return 0;
}

void capture_feed(Capture *c, const uint8_t *p, size_t n, uint64_t offset) {
        for (size_t i = 0; i < c->n_ranges; i++) {
                CaptureRange *r = &c->ranges[i];
                uint64_t lo = MAX(r->offset, offset), hi = MIN(r->offset + r->len, offset + n);

                if (r->data && lo < hi)
                        memcpy(r->data + (lo - r->offset), p + (lo - offset), hi - lo);
        }
}

int capture_build_core(const Capture *c, const ElfStream *s, uint8_t **ret, size_t *ret_len) {
        size_t n_ph = 1 + c->n_ranges, head = sizeof(Elf64_Ehdr) + n_ph * sizeof(Elf64_Phdr), size, o;
        Elf64_Ehdr eh;
        Elf64_Phdr ph;
        uint8_t *b;

        if (!s->kept_notes)
                return -ENODATA;
        for (size_t i = 0; i < c->n_ranges; i++)
                if (!c->ranges[i].data)
                        return -ENODATA;
        /* each range at a page-aligned offset, as p_offset = p_vaddr modulo p_align wants */
        size = (size_t) page_up(head + s->kept_notes_len);
        for (size_t i = 0; i < c->n_ranges; i++)
                size += (size_t) page_up(c->ranges[i].len);
        b = calloc(1, size);
        if (!b)
                return -ENOMEM;
        memcpy(&eh, s->ehdr, sizeof eh);
        eh.e_phoff = sizeof eh;
        eh.e_phnum = (uint16_t) n_ph;
        eh.e_shoff = 0;
        eh.e_shnum = eh.e_shstrndx = 0;
        eh.e_shentsize = 0;
        memcpy(b, &eh, sizeof eh);
        ph = (Elf64_Phdr) { .p_type = PT_NOTE, .p_offset = head, .p_filesz = s->kept_notes_len, .p_align = 4 };
        memcpy(b + sizeof eh, &ph, sizeof ph);
        memcpy(b + head, s->kept_notes, s->kept_notes_len);
        o = (size_t) page_up(head + s->kept_notes_len);
        for (size_t i = 0; i < c->n_ranges; i++) {
                const CaptureRange *r = &c->ranges[i];
                ph = (Elf64_Phdr) { .p_type = PT_LOAD, .p_flags = r->flags, .p_offset = o, .p_vaddr = r->vaddr,
                                    .p_filesz = r->len, .p_memsz = r->len, .p_align = CAPTURE_PAGE };
                memcpy(b + sizeof eh + (1 + i) * sizeof ph, &ph, sizeof ph);
                memcpy(b + o, r->data, r->len);
                o += (size_t) page_up(r->len);
        }
        *ret = b;
        *ret_len = size;
        return 0;
}

void capture_free(Capture *c) {
        for (size_t i = 0; i < c->n_ranges; i++) {
                free(c->ranges[i].data);
                c->ranges[i].data = NULL;
        }
        c->n_ranges = 0;
        c->total = 0;
}
