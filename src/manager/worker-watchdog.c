/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker watchdog: kills a worker whose CPU account has not moved, or that was found stopped at
 * every sample, for WorkerStallTimeoutSec=.
 * Manager (root): reads /proc of its own unreaped workers only, signals only them. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fd-util.h"
#include "log.h"
#include "manager.h"
#include "pidfd-util.h"
#include "time-util.h"
#include "worker-pool.h"
#include "worker-watchdog.h"

int watchdog_parse_schedstat(const char *text, uint64_t *ret_cpu, uint64_t *ret_runs) {
        uint64_t cpu, wait, runs;

        if (sscanf(text, "%" SCNu64 " %" SCNu64 " %" SCNu64, &cpu, &wait, &runs) != 3)
                return -EBADMSG;
        *ret_cpu = cpu;
        *ret_runs = runs;
        return 0;
}

int watchdog_parse_stat(const char *text, uint64_t *ret_cpu) {
        ProcStat s;
        int r = proc_stat_parse(text, &s);

        if (r < 0)
                return r;
        *ret_cpu = s.utime + s.stime;
        return 0;
}

/* The worker's pid is its own until we reap it, and we have not: /proc/PID is that worker. */
static int sample(const Worker *w, uint64_t *ret_cpu, uint64_t *ret_runs) {
        char path[64], buf[WATCHDOG_PROC_READ_MAX];

        snprintf(path, sizeof path, "/proc/%d/schedstat", (int) w->pid);
        if (read_small_file_at(AT_FDCWD, path, buf, sizeof buf) >= 0 &&
            watchdog_parse_schedstat(buf, ret_cpu, ret_runs) >= 0)
                return 0;
        /* without CONFIG_SCHED_INFO: the CPU time alone, in clock ticks */
        *ret_runs = 0;
        snprintf(path, sizeof path, "/proc/%d/stat", (int) w->pid);
        if (read_small_file_at(AT_FDCWD, path, buf, sizeof buf) < 0)
                return -ESRCH;
        return watchdog_parse_stat(buf, ret_cpu);
}

static bool watched(const Worker *w) {
        /* a worker whose crash is being forwarded waits for its commit: the forwarding's deadline
         * (ForwardTimeoutSec=) bounds that; one given its job while /proc is read waits for its
         * DETAILS: the collector's deadline bounds that */
        if (w->ops && w->ops->waiting_elsewhere && w->ops->waiting_elsewhere(w->owner))
                return false;
        /* (a stuck one, stuck.h, is past what a kill does) */
        return w->state == WORKER_BUSY || w->state == WORKER_COMMITTING ||
               (w->state == WORKER_FINISHED && !w->watch.stuck);
}

/* Whether the worker is stopped (SIGSTOP, ptrace) right now: its state in /proc/PID/stat. */
static bool stopped(const Worker *w) {
        char path[64], buf[WATCHDOG_PROC_READ_MAX];
        char state;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) w->pid);
        if (read_small_file_at(AT_FDCWD, path, buf, sizeof buf) < 0)
                return false;
        state = proc_stat_state(buf);
        return state == 'T' || state == 't';
}

/* Whether the worker moved since the last sample (a sample that fails counts as movement: an
 * exiting worker is about to be reaped). A worker found stopped has not moved, whatever its CPU
 * account did in between: a user who continues the worker of their crash for a moment before
 * each sample (SIGCONT, SIGSTOP) would otherwise keep it alive and its slot taken. */
static bool moved(Worker *w) {
        WorkerProgress *p = &w->progress;
        uint64_t cpu, runs;
        bool r;

        if (sample(w, &cpu, &runs) < 0)
                return true;
        r = !stopped(w) && (cpu != p->cpu || runs != p->runs || (int) w->state != p->state);
        p->cpu = cpu;
        p->runs = runs;
        p->state = (int) w->state;
        return r;
}

static void stall_kill(Worker *w, uint64_t stall_usec) {
        const WorkerJobOps *ops = w->ops;
        void *owner = w->owner;
        char what[128], why[160];

        snprintf(what, sizeof what, "did not run for WorkerStallTimeoutSec=%" PRIu64 "s (stopped or stuck)",
                 stall_usec / USEC_PER_SEC);
        snprintf(why, sizeof why, "the worker %s and was killed", what);
        w->progress.killed = true;
        worker_kill(w, what);
        /* worker_kill() detached the job: it ends here, its record saying why */
        if (ops)
                ops->lost(owner, why);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t stall = m->config.worker_stall_usec, now = now_usec(CLOCK_MONOTONIC);
        unsigned n = 0;
        Worker *w, *next;

        LIST_FOREACH_SAFE(workers, w, next, m->workers) {
                if (!watched(w) || w->progress.killed || stall == WORKER_STALL_INFINITY)
                        continue;
                if (moved(w))
                        w->progress.since_usec = now;
                else if (now - w->progress.since_usec >= stall) {
                        stall_kill(w, stall);
                        continue;
                }
                n++;
        }
        if (n == 0)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        (void) sd_event_source_set_time(s, now + stall / WATCHDOG_SAMPLES_PER_TIMEOUT);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

void worker_watchdog_baseline(Worker *w) {
        w->progress = (WorkerProgress) {};
        (void) moved(w);
        w->progress.state = (int) WORKER_BUSY;
        w->progress.sampled = true;
}

void worker_watchdog_start(Worker *w) {
        Manager *m = w->manager;
        uint64_t stall = m->config.worker_stall_usec, when;
        int r;

        if (w->progress.sampled) {
                w->progress.sampled = false;
                w->progress.since_usec = now_usec(CLOCK_MONOTONIC);
        } else {
                w->progress = (WorkerProgress) { .since_usec = now_usec(CLOCK_MONOTONIC) };
                (void) moved(w);
        }
        if (stall == WORKER_STALL_INFINITY)
                return;
        when = w->progress.since_usec + stall / WATCHDOG_SAMPLES_PER_TIMEOUT;
        if (!m->watchdog_timer)
                r = sd_event_add_time(m->event, &m->watchdog_timer, CLOCK_MONOTONIC, when, 0, on_tick, m);
        else if (sd_event_source_get_enabled(m->watchdog_timer, NULL) > 0)
                return; /* ticking already */
        else {
                r = sd_event_source_set_time(m->watchdog_timer, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->watchdog_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to arm the worker watchdog (TimeoutSec= still applies): %m");
}

void worker_watchdog_free(Manager *m) {
        m->watchdog_timer = sd_event_source_disable_unref(m->watchdog_timer);
}
