/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker watchdog (WorkerStallTimeoutSec=). Manager (root): reads only the
 * /proc/PID/schedstat (or stat) of its own unreaped workers, and kills only them. */
#pragma once

/* A worker runs as the crashing user for that user's own crashes, so the user may SIGSTOP it
 * (Landlock scopes signals going out of the sandbox, not coming in). Without a watchdog a
 * stopped worker keeps its slot until TimeoutSec= (30 min by default). The manager watches
 * every worker that has a job or is finishing, from its own side: the kernel's account of the
 * worker's time on a CPU and of how often it was scheduled, and the worker's state in the pool.
 * A worker whose account does not move for WorkerStallTimeoutSec= is killed, and its crash ends
 * with a record saying why (crash_worker_lost()). */

#include <stdbool.h>
#include <stdint.h>

typedef struct Manager Manager;
typedef struct Worker Worker;

/* Samples per WorkerStallTimeoutSec=: a stalled worker is killed at most a quarter late. */
#define WATCHDOG_SAMPLES_PER_TIMEOUT 4U
/* /proc/PID/schedstat is three numbers; /proc/PID/stat about 300 bytes. */
#define WATCHDOG_PROC_READ_MAX 1024U

typedef struct WorkerProgress {
        uint64_t cpu;        /* the kernel's count of the worker's time on a CPU (ns, or ticks) */
        uint64_t runs;       /* times it was scheduled (0 where schedstat is missing) */
        int state;           /* the pool's WorkerState at the last sample */
        uint64_t since_usec; /* CLOCK_MONOTONIC: the last time any of them moved */
        bool killed;
        bool sampled;        /* worker_watchdog_baseline() came before the job */
} WorkerProgress;

/* The sample the first tick after the job compares with, taken when the worker is ready (it
 * waits for its job), as if it were busy already (the state the job gives it): read when the
 * job is given, /proc would keep the manager busy while the crashed task is held, or on the CPU
 * where the worker it just woke waits to run. As before, whatever the worker ran from then on
 * (on its way into its wait, taking its job) is movement at the first tick, from which a worker
 * that then stalls is timed; a stopped one is caught at the first tick (stopped() does not
 * compare). */
void worker_watchdog_baseline(Worker *w);
/* The worker got its job: watched from now on (until it is reaped). */
void worker_watchdog_start(Worker *w);
void worker_watchdog_free(Manager *m);

/* Pure, for tests: a /proc/PID/schedstat text ("runtime_ns wait_ns runs") or, failing that, a
 * /proc/PID/stat text (utime + stime, in ticks), into cpu and runs. */
int watchdog_parse_schedstat(const char *text, uint64_t *ret_cpu, uint64_t *ret_runs);
int watchdog_parse_stat(const char *text, uint64_t *ret_cpu);
