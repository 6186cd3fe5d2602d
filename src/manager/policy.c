/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What to answer the kernel, before any core byte: MaxParallelPerUser=, rate limits, RLIMIT_CORE,
 * size, MaxParallel=. Manager (root): reads /proc only through peek.c; arms the summaries' timer. */
#include <stdio.h>
#include <unistd.h>

#include "crash.h"
#include "log.h"
#include "manager.h"
#include "peek.h"
#include "policy.h"
#include "time-util.h"

/* Whether the storage could leave a core of some size unused (then the process's size is read). */
static bool storage_may_refuse(const Config *c) {
        return c->storage != STORAGE_EXTERNAL || c->external_size_max == 0;
}

/* Whether no part of the work would use a core of at least size bytes. */
static bool core_useless(const Config *c, uint64_t size) {
        if (size <= c->process_size_max)
                return false; /* the stack traces need it */
        switch (c->storage) {
        case STORAGE_NONE:
                return true;
        case STORAGE_JOURNAL:
                return size > c->journal_size_max;
        default:
                return c->external_size_max == 0;
        }
}

/* Of MaxParallel=, the slots only root's crashes may take: as many as one user may hold
 * (MaxParallelPerUser=), so that users together (several, or one with subordinate uids, each a
 * uid of its own) never leave root's crashes without a slot; none without a per-user cap, or
 * where MaxParallel= is too small to share (below PARALLEL_PER_USER_SHARE). */
static unsigned root_reserved(const Config *cfg) {
        unsigned cap = config_max_parallel_per_user(cfg);

        if (cap == PARALLEL_PER_USER_INFINITY || cfg->max_parallel < PARALLEL_PER_USER_SHARE)
                return 0;
        return MIN(cap, cfg->max_parallel - 1);
}

static PolicyVerdict suppressed(Crash *c, LimitVerdict v, const LimitBucket *hit, const char **why) {
        const Config *cfg = &c->manager->config;

        if (!hit || hit->kind == LIMIT_CAP)
                snprintf(c->why_buf, sizeof c->why_buf, "MaxParallel=%u cores were already in flight (%u of them "
                         "only for root's crashes); core not dumped, further such crashes are counted in a summary",
                         cfg->max_parallel, root_reserved(cfg));
        else if (hit->kind == LIMIT_USER)
                snprintf(c->why_buf, sizeof c->why_buf, "MaxParallelPerUser=%u crashes of user %s were already in "
                         "flight; core not dumped, further such crashes are counted in a summary",
                         config_max_parallel_per_user(cfg), hit->key);
        else
                snprintf(c->why_buf, sizeof c->why_buf, "rate limit: more than RateLimitBurst=%u cores of %s %s in "
                         "RateLimitIntervalSec=%llus; core not dumped, further crashes in this window are counted "
                         "in a summary", cfg->rate_limit_burst, limit_kind_to_string(hit->kind), hit->key,
                         (unsigned long long) (cfg->rate_limit_interval_usec / USEC_PER_SEC));
        *why = c->why_buf;
        /* Only a window's first refusal gives it a summary to write: the timer may need to move.
         * Last: flushing the windows that ended compacts the table, so hit may point elsewhere. */
        if (v == LIMIT_SUPPRESS_FIRST)
                policy_schedule_summaries(c->manager);
        return v == LIMIT_SUPPRESS_FIRST ? POLICY_RECORD_ONLY : POLICY_COUNT_ONLY;
}

/* The process asked for no core (systemd's rule: a limit below one page means none). The crash
 * still counts against its rate limit: a crash loop under `ulimit -c 0` is bounded too. */
static bool rlimit_refuses(Crash *c, const CrashPeek *peek, const char **why) {
        uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);

        if (!c->rlimit_known && peek->rlimit_valid) {
                c->rlimit_core = peek->rlimit_core;
                c->rlimit_known = true;
        }
        if (!c->rlimit_known || c->rlimit_core >= page)
                return false;
        snprintf(c->why_buf, sizeof c->why_buf, "RLIMIT_CORE=%llu, below one page: the process asked for no core",
                 (unsigned long long) c->rlimit_core);
        *why = c->why_buf;
        return true;
}

/* The crashes of uid that got past this policy and hold a worker or wait for one (a crash still
 * in its handshake has no verdict yet), but self. */
static unsigned user_in_flight(const Manager *m, const Crash *self, uid_t uid) {
        unsigned n = 0;

        for (const Crash *c = m->crashes; c; c = c->crashes_next)
                n += c != self && c->state != CRASH_HANDSHAKE && c->info.ruid == uid;
        return n;
}

/* MaxParallelPerUser=: every verdict but "count only" gives the crash a worker, which runs as the
 * crashing user for their own crashes (and so can be stopped by them), so every crash of theirs
 * in flight counts, with or without its core. Root's crashes are bounded by MaxParallel= only:
 * they are what the cap keeps slots for. */
static bool user_over_cap(const Crash *c) {
        unsigned cap = config_max_parallel_per_user(&c->manager->config);

        return c->info.ruid != 0 && cap != PARALLEL_PER_USER_INFINITY &&
               user_in_flight(c->manager, c, c->info.ruid) >= cap;
}

static PolicyVerdict refuse_over_user_cap(Crash *c, const LimitCrash *lc, uint64_t now, const char **why) {
        Manager *m = c->manager;
        LimitTicket t;
        LimitVerdict v;

        /* all cores in flight as well: that is the reason given, as without a per-user cap */
        if (m->n_cores >= m->config.max_parallel)
                v = limits_over_cap(&m->limits, lc, now, &t);
        else {
                v = limits_over_user_cap(&m->limits, lc, now, &t);
                if (ratelimit_below(&m->user_cap_ratelimit))
                        log_warning("Crash of PID %d (%s, uid %u) refused: MaxParallelPerUser=%u of the user's crashes "
                                    "are in flight; counted in a summary", (int) c->info.pid,
                                    lc->comm && lc->comm[0] ? lc->comm : "n/a", (unsigned) c->info.ruid,
                                    config_max_parallel_per_user(&m->config));
        }
        return suppressed(c, v, t.hit, why);
}

PolicyVerdict policy_decide(Crash *c, const char **why) {
        Manager *m = c->manager;
        const Config *cfg = &m->config;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool nothing_useful = cfg->storage == STORAGE_NONE && cfg->process_size_max == 0;
        CrashPeek peek = {};
        LimitTicket t;
        LimitCrash lc;
        LimitVerdict v;

        if (!c->info.reaped)
                (void) peek_collect(c->pidfd, c->info.pid, c->pipe ? c->pipe_tid : c->info.pid,
                                    nothing_useful ? 0 : (storage_may_refuse(cfg) ? PEEK_SIZE : 0) |
                                                         (c->rlimit_known ? 0 : PEEK_RLIMIT),
                                    &peek);
        lc = (LimitCrash) { .exe = peek.exe, .unit = peek.service, .comm = peek.comm,
                            .pid = c->info.pid, .uid = c->info.ruid, .realtime = c->timestamp_usec };
        /* first: every other verdict takes a worker */
        if (user_over_cap(c))
                return refuse_over_user_cap(c, &lc, now, why);
        if (nothing_useful) {
                *why = "Storage=none and ProcessSizeMax=0: nothing would use the core";
                return POLICY_RECORD_ONLY;
        }
        v = limits_check(&m->limits, cfg->rate_limit_interval_usec, cfg->rate_limit_burst, &lc, now, &t);
        if (v != LIMIT_TAKE)
                return suppressed(c, v, t.hit, why);
        if (rlimit_refuses(c, &peek, why)) {
                limits_take(&t);
                return POLICY_RECORD_ONLY;
        }
        if (peek.size_valid && core_useless(cfg, peek.size_min)) {
                snprintf(c->why_buf, sizeof c->why_buf,
                         "the process has %llu bytes of anonymous memory, more than ProcessSizeMax=%llu, and Storage=%s "
                         "would not keep such a core",
                         (unsigned long long) peek.size_min, (unsigned long long) cfg->process_size_max,
                         storage_to_string(cfg->storage));
                *why = c->why_buf;
                return POLICY_RECORD_ONLY;
        }
        if (m->n_cores >= cfg->max_parallel - (c->info.ruid != 0 ? root_reserved(cfg) : 0)) {
                v = limits_over_cap(&m->limits, &lc, now, &t);
                return suppressed(c, v, t.hit, why);
        }
        limits_take(&t);
        c->core_counted = true;
        m->n_cores++;
        return POLICY_TAKE;
}

static int on_summary_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        policy_schedule_summaries(userdata);
        return 0;
}

void policy_schedule_summaries(Manager *m) {
        uint64_t next = limits_flush_expired(&m->limits, m->config.rate_limit_interval_usec, now_usec(CLOCK_MONOTONIC));
        int r;

        if (next == UINT64_MAX) {
                if (m->summary_timer)
                        (void) sd_event_source_set_enabled(m->summary_timer, SD_EVENT_OFF);
                return;
        }
        if (!m->summary_timer)
                r = sd_event_add_time(m->event, &m->summary_timer, CLOCK_MONOTONIC, next, 0, on_summary_timer, m);
        else {
                r = sd_event_source_set_time(m->summary_timer, next);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->summary_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to arm the timer of the suppressed crashes' summaries: %m");
}
