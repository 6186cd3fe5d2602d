/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the crash limits (RateLimitIntervalSec=, RateLimitBurst=, MaxParallel=,
 * MaxParallelPerUser=). Manager, pure bookkeeping: no I/O. */
#pragma once

/* Rate limits on crashes, decided before the kernel sends a byte of the core. Each executable
 * and each service has a window of RateLimitIntervalSec= in which RateLimitBurst= cores are
 * taken; past that its crashes are suppressed (COREDUMP_REJECT). A separate count covers the
 * crashes refused because MaxParallel= cores were already in flight, and one per user for the
 * crashes refused because MaxParallelPerUser= of theirs were. Nothing is silently lost:
 * the first suppressed crash of a window is recorded with its metadata by the caller, and when
 * the window ends, a summary ("N crashes of X not dumped") goes out through the flush callback.
 *
 * Pure bookkeeping (no I/O, the clock is the caller's), so it is tested on its own. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "meta.h"

/* Executables and services tracked at once; past it the least recently started window goes
 * (its summary flushed first). */
#define LIMIT_KEYS_MAX 1024U
/* Suppressed PIDs a summary lists by number (the count is always complete). */
#define LIMIT_PIDS_LISTED 32U
/* The window of the MaxParallel= count when RateLimitIntervalSec=0 turns rate limiting off. */
#define LIMIT_CAP_WINDOW_USEC (60 * USEC_PER_SEC)

typedef enum LimitKind {
        LIMIT_EXE,    /* key: the executable's path */
        LIMIT_UNIT,   /* key: the service unit's name */
        LIMIT_CAP,    /* no key: MaxParallel= cores were in flight */
        LIMIT_USER,   /* key: the uid, MaxParallelPerUser= of its crashes were in flight */
} LimitKind;

typedef struct LimitBucket {
        LimitKind kind;
        char *key;
        uint64_t hash;
        uint64_t begin_usec;     /* CLOCK_MONOTONIC: the window's start */
        uint64_t first_realtime; /* CLOCK_REALTIME of the first suppressed crash */
        unsigned n_taken;
        unsigned n_suppressed;
        /* the last suppressed crash */
        pid_t last_pid;
        uid_t last_uid;
        uint64_t last_realtime;
        char last_comm[COMM_MAX];
        pid_t pids[LIMIT_PIDS_LISTED];
        unsigned n_pids;
} LimitBucket;

typedef void (*LimitFlush)(const LimitBucket *b, void *userdata);

typedef struct CrashLimits {
        LimitBucket *buckets; /* LIMIT_KEYS_MAX + 1, allocated on first use; the last is LIMIT_CAP */
        unsigned n;
        LimitFlush flush;
        void *userdata;
} CrashLimits;

/* What the limits know of a crash before its core comes. */
typedef struct LimitCrash {
        const char *exe;  /* NULL or "" if unknown: not limited per executable */
        const char *unit; /* NULL or "" unless it is a service's */
        const char *comm;
        pid_t pid;
        uid_t uid;
        uint64_t realtime;
} LimitCrash;

typedef enum LimitVerdict {
        LIMIT_TAKE,             /* within the limits: take the core */
        LIMIT_SUPPRESS_FIRST,   /* over: the first of this window, record it in full */
        LIMIT_SUPPRESS,         /* over: counted for the window's summary */
} LimitVerdict;

/* The buckets a crash would count against, found (or made) by limits_check(). */
typedef struct LimitTicket {
        LimitBucket *exe, *unit;
        LimitBucket *hit; /* the bucket that suppressed it */
} LimitTicket;

void limits_init(CrashLimits *l, LimitFlush flush, void *userdata);
/* Flushes every pending summary and frees everything. */
void limits_done(CrashLimits *l);

/* The per-program limits (interval or burst 0: none). A crash within them is not counted yet:
 * limits_take() does that once the core is really taken. */
LimitVerdict limits_check(CrashLimits *l, uint64_t interval_usec, unsigned burst, const LimitCrash *c,
                          uint64_t now, LimitTicket *ret);
void limits_take(const LimitTicket *t);
/* Counts a crash refused because too many cores were in flight. */
LimitVerdict limits_over_cap(CrashLimits *l, const LimitCrash *c, uint64_t now, LimitTicket *ret);
/* Counts a crash refused because too many crashes of its uid (c->uid) were in flight; like the
 * MaxParallel= count, the window starts with the first refusal. */
LimitVerdict limits_over_user_cap(CrashLimits *l, const LimitCrash *c, uint64_t now, LimitTicket *ret);
/* Flushes the summaries of windows ended by now; returns when the next one ends (UINT64_MAX:
 * none pending). */
uint64_t limits_flush_expired(CrashLimits *l, uint64_t interval_usec, uint64_t now);

const char *limit_kind_to_string(LimitKind k);
