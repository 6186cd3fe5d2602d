/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker's memory spool (see spool.h): the core's data packed into a memfd and the list of
 * where each run of it belongs in the stream. Worker (sandboxed): its own memfd only. */
#include <assert.h>
#include <string.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "spool.h"

#define SPOOL_EXTENTS_INITIAL 64U

int spool_open(Spool *s, int fd, uint64_t start, uint64_t granted) {
        *s = (Spool) { .fd = fd >= 0 ? fd : memfd_create("coredump-spool", MFD_CLOEXEC), .granted = granted,
                       .start = start, .end = start };
        return s->fd < 0 ? negative_errno() : 0;
}

void spool_close(Spool *s) {
        s->fd = safe_close(s->fd);
        free(s->extents);
        s->extents = NULL;
        s->n_extents = s->cap_extents = 0;
}

static bool all_zero(const uint8_t *p, size_t n) {
        return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* The length of the run of the same kind (zeros or data) at p, cut at page boundaries of the
 * stream so that only whole zero pages (or a chunk's zero ends) are left out. */
static size_t run_at(const uint8_t *p, size_t n, uint64_t offset, bool *zero) {
        size_t first = (size_t) MIN((uint64_t) n, SPOOL_ZERO_RUN_MIN - offset % SPOOL_ZERO_RUN_MIN), len = first;

        *zero = all_zero(p, first);
        while (len < n) {
                size_t piece = MIN(n - len, (size_t) SPOOL_ZERO_RUN_MIN);
                if (all_zero(p + len, piece) != *zero)
                        break;
                len += piece;
        }
        return len;
}

static int add_extent(Spool *s, uint64_t offset, uint64_t len) {
        SpoolExtent *last = s->n_extents > 0 ? &s->extents[s->n_extents - 1] : NULL;

        if (last && last->offset + last->len == offset) {
                last->len += len;
                return 0;
        }
        if (s->n_extents == s->cap_extents) {
                size_t cap = s->cap_extents ? s->cap_extents * 2 : SPOOL_EXTENTS_INITIAL;
                SpoolExtent *e;

                if (cap > SPOOL_EXTENTS_MAX)
                        return -ENOSPC;
                e = realloc(s->extents, cap * sizeof *e);
                if (!e)
                        return -ENOMEM;
                s->extents = e;
                s->cap_extents = cap;
        }
        s->extents[s->n_extents++] = (SpoolExtent) { offset, len };
        return 0;
}

/* Appends n bytes of data: written, not mapped, so that no page is faulted in one by one. */
static int spool_put(Spool *s, const uint8_t *p, size_t n) {
        int r = loop_pwrite(s->fd, p, n, (off_t) s->used);

        if (r < 0)
                return r; /* out of memory (or RLIMIT_FSIZE): let the caller go on without */
        s->used += n;
        return 0;
}

int spool_add(Spool *s, const uint8_t *p, size_t n) {
        uint64_t used = s->used, offset = s->end;
        size_t n_extents = s->n_extents, done = 0;
        uint64_t last_len = n_extents > 0 ? s->extents[n_extents - 1].len : 0;
        int r = 0;

        assert(s->fd >= 0);
        while (done < n && r == 0) {
                bool zero;
                size_t len = run_at(p + done, n - done, offset + done, &zero);

                if (!zero) {
                        if (len > s->granted - s->used)
                                r = -ENOSPC;
                        else
                                r = add_extent(s, offset + done, len);
                        if (r == 0)
                                r = spool_put(s, p + done, len);
                }
                done += len;
        }
        if (r < 0) { /* as if none of it had come (what was written past used is never read) */
                s->used = used;
                s->n_extents = n_extents;
                if (n_extents > 0)
                        s->extents[n_extents - 1].len = last_len;
                return r;
        }
        s->end += n;
        return 0;
}

static int replay_zeros(uint8_t *buf, size_t bufsize, uint64_t from, uint64_t to, spool_fn fn, void *userdata) {
        if (from < to)
                memset(buf, 0, (size_t) MIN((uint64_t) bufsize, to - from));
        while (from < to) {
                size_t n = (size_t) MIN((uint64_t) bufsize, to - from);
                int r = fn(userdata, buf, n, from);
                if (r < 0)
                        return r;
                from += n;
        }
        return 0;
}

static int replay_data(const Spool *s, uint8_t *buf, size_t bufsize, const SpoolExtent *e, uint64_t packed,
                       spool_fn fn, void *userdata) {
        for (uint64_t done = 0; done < e->len;) {
                size_t n = (size_t) MIN((uint64_t) bufsize, e->len - done);
                ssize_t k = pread(s->fd, buf, n, (off_t) (packed + done));
                int r;

                if (k < 0)
                        return negative_errno();
                if ((size_t) k != n)
                        return -EIO;
                r = fn(userdata, buf, n, e->offset + done);
                if (r < 0)
                        return r;
                done += n;
        }
        return 0;
}

int spool_replay(const Spool *s, uint8_t *buf, size_t bufsize, spool_fn fn, void *userdata) {
        uint64_t pos = s->start, packed = 0;
        int r;

        assert(bufsize > 0);
        for (size_t i = 0; i < s->n_extents; i++) {
                const SpoolExtent *e = &s->extents[i];

                r = replay_zeros(buf, bufsize, pos, e->offset, fn, userdata);
                if (r < 0)
                        return r;
                r = replay_data(s, buf, bufsize, e, packed, fn, userdata);
                if (r < 0)
                        return r;
                packed += e->len;
                pos = e->offset + e->len;
        }
        return replay_zeros(buf, bufsize, pos, s->end, fn, userdata);
}
