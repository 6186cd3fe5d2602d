/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rate-limit bookkeeping: per-executable and per-service windows, the MaxParallel= count and the
 * per-user ones, their summaries through a callback. Manager, pure: memory only, no I/O, the caller's clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash-limit.h"
#include "hash.h"
#include "macro.h"

/* A uid in decimal (the key of a user's bucket): ten digits and the NUL. */
#define UID_KEY_SIZE 11

const char *limit_kind_to_string(LimitKind k) {
        static const char *const t[] = { "executable", "service", "parallel cores", "user" };
        return (unsigned) k < ELEMENTSOF(t) ? t[k] : "?";
}

static uint64_t key_hash(LimitKind kind, const char *key) {
        return fnv1a_64(FNV1A_64_OFFSET ^ (uint64_t) kind, key);
}

void limits_init(CrashLimits *l, LimitFlush flush, void *userdata) {
        *l = (CrashLimits) { .flush = flush, .userdata = userdata };
}

static LimitBucket *cap_bucket(CrashLimits *l) {
        return &l->buckets[LIMIT_KEYS_MAX];
}

static int limits_alloc(CrashLimits *l) {
        if (l->buckets)
                return 0;
        l->buckets = calloc(LIMIT_KEYS_MAX + 1, sizeof *l->buckets);
        if (!l->buckets)
                return -ENOMEM;
        cap_bucket(l)->kind = LIMIT_CAP;
        return 0;
}

static void bucket_flush(CrashLimits *l, LimitBucket *b) {
        if (b->n_suppressed > 0 && l->flush)
                l->flush(b, l->userdata);
        b->n_suppressed = 0;
        b->n_pids = 0;
}

/* A window that ended is summarised and a new one starts now. */
static void bucket_roll(CrashLimits *l, LimitBucket *b, uint64_t interval_usec, uint64_t now) {
        if (b->begin_usec != 0 && now - b->begin_usec < interval_usec)
                return;
        bucket_flush(l, b);
        b->begin_usec = now;
        b->n_taken = 0;
}

static void bucket_forget(LimitBucket *b) {
        free(b->key);
        *b = (LimitBucket) {};
}

/* Frees a slot when all are used: the window that started first goes (never protect, the
 * other bucket the same crash counts against). */
static LimitBucket *bucket_evict(CrashLimits *l, const LimitBucket *protect) {
        LimitBucket *oldest = NULL;

        for (unsigned i = 0; i < l->n; i++)
                if (&l->buckets[i] != protect && (!oldest || l->buckets[i].begin_usec < oldest->begin_usec))
                        oldest = &l->buckets[i];
        bucket_flush(l, oldest);
        bucket_forget(oldest);
        return oldest;
}

static LimitBucket *bucket_get(CrashLimits *l, LimitKind kind, const char *key, const LimitBucket *protect) {
        uint64_t h = key_hash(kind, key);
        LimitBucket *b;
        char *copy;

        for (unsigned i = 0; i < l->n; i++) {
                b = &l->buckets[i];
                if (b->hash == h && b->kind == kind && strcmp(b->key, key) == 0)
                        return b;
        }
        copy = strdup(key);
        if (!copy)
                return NULL;
        b = l->n < LIMIT_KEYS_MAX ? &l->buckets[l->n++] : bucket_evict(l, protect);
        *b = (LimitBucket) { .kind = kind, .key = copy, .hash = h };
        return b;
}

static void bucket_note(LimitBucket *b, const LimitCrash *c) {
        if (b->n_suppressed++ == 0)
                b->first_realtime = c->realtime;
        b->last_pid = c->pid;
        b->last_uid = c->uid;
        b->last_realtime = c->realtime;
        snprintf(b->last_comm, sizeof b->last_comm, "%s", c->comm ? c->comm : "");
        if (b->n_pids < LIMIT_PIDS_LISTED)
                b->pids[b->n_pids++] = c->pid;
}

static LimitVerdict suppress(LimitBucket *b, const LimitCrash *c, LimitTicket *t) {
        bucket_note(b, c);
        t->hit = b;
        return b->n_suppressed == 1 ? LIMIT_SUPPRESS_FIRST : LIMIT_SUPPRESS;
}

static bool is_set(const char *s) {
        return s && s[0];
}

LimitVerdict limits_check(CrashLimits *l, uint64_t interval_usec, unsigned burst, const LimitCrash *c,
                          uint64_t now, LimitTicket *ret) {
        *ret = (LimitTicket) {};
        /* without memory for the books, a crash is taken rather than lost */
        if (interval_usec == 0 || burst == 0 || limits_alloc(l) < 0)
                return LIMIT_TAKE;
        if (is_set(c->exe) && (ret->exe = bucket_get(l, LIMIT_EXE, c->exe, NULL)))
                bucket_roll(l, ret->exe, interval_usec, now);
        if (is_set(c->unit) && (ret->unit = bucket_get(l, LIMIT_UNIT, c->unit, ret->exe)))
                bucket_roll(l, ret->unit, interval_usec, now);
        if (ret->exe && ret->exe->n_taken >= burst)
                return suppress(ret->exe, c, ret);
        if (ret->unit && ret->unit->n_taken >= burst)
                return suppress(ret->unit, c, ret);
        return LIMIT_TAKE;
}

void limits_take(const LimitTicket *t) {
        if (t->exe)
                t->exe->n_taken++;
        if (t->unit)
                t->unit->n_taken++;
}

static uint64_t cap_window(uint64_t interval_usec) {
        return interval_usec ?: LIMIT_CAP_WINDOW_USEC;
}

LimitVerdict limits_over_cap(CrashLimits *l, const LimitCrash *c, uint64_t now, LimitTicket *ret) {
        LimitBucket *b;

        *ret = (LimitTicket) {};
        if (limits_alloc(l) < 0)
                return LIMIT_SUPPRESS; /* refused all the same: counted nowhere */
        b = cap_bucket(l);
        if (b->n_suppressed == 0)
                b->begin_usec = now; /* the cap's window starts with its first refusal */
        return suppress(b, c, ret);
}

LimitVerdict limits_over_user_cap(CrashLimits *l, const LimitCrash *c, uint64_t now, LimitTicket *ret) {
        char key[UID_KEY_SIZE];
        LimitBucket *b;

        *ret = (LimitTicket) {};
        snprintf(key, sizeof key, "%u", (unsigned) c->uid);
        if (limits_alloc(l) < 0 || !(b = bucket_get(l, LIMIT_USER, key, NULL)))
                return LIMIT_SUPPRESS; /* refused all the same: counted nowhere */
        if (b->n_suppressed == 0)
                b->begin_usec = now;
        return suppress(b, c, ret);
}

static uint64_t bucket_end(const LimitBucket *b, uint64_t window) {
        return b->begin_usec + window;
}

/* How long a keyed bucket's window lasts: a user's refusals are summarised like MaxParallel='s,
 * even with rate limiting off. */
static uint64_t bucket_window(const LimitBucket *b, uint64_t interval_usec) {
        return b->kind == LIMIT_USER ? cap_window(interval_usec) : interval_usec;
}

uint64_t limits_flush_expired(CrashLimits *l, uint64_t interval_usec, uint64_t now) {
        uint64_t next = UINT64_MAX;
        LimitBucket *cap;

        if (!l->buckets)
                return next;
        for (unsigned i = 0; i < l->n;) {
                LimitBucket *b = &l->buckets[i];
                uint64_t window = bucket_window(b, interval_usec);
                bool ended = window == 0 || now >= bucket_end(b, window);

                if (ended) {
                        /* summarised and forgotten: the slot goes to the last bucket */
                        bucket_flush(l, b);
                        bucket_forget(b);
                        *b = l->buckets[--l->n];
                        l->buckets[l->n] = (LimitBucket) {};
                        continue;
                }
                if (b->n_suppressed > 0)
                        next = MIN(next, bucket_end(b, window));
                i++;
        }
        cap = cap_bucket(l);
        if (cap->n_suppressed > 0) {
                if (now >= bucket_end(cap, cap_window(interval_usec)))
                        bucket_flush(l, cap);
                else
                        next = MIN(next, bucket_end(cap, cap_window(interval_usec)));
        }
        return next;
}

void limits_done(CrashLimits *l) {
        if (!l->buckets)
                return;
        for (unsigned i = 0; i < l->n; i++) {
                bucket_flush(l, &l->buckets[i]);
                bucket_forget(&l->buckets[i]);
        }
        bucket_flush(l, cap_bucket(l));
        free(l->buckets);
        *l = (CrashLimits) {};
}
