/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: processes done with a crash that do not end, found stuck in the kernel (a close that
 * waits for a file system), and their count per uid. Manager: reads children's /proc/PID/stat. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "time-util.h"

/* A worker done with its job (FINISHED), or a collector let go, ends within milliseconds, unless
 * a close in its exit waits for a file system: a module file stacked over a FUSE server that does
 * not answer FLUSH (overlayfs and ecryptfs pass it down), a wait SIGKILL does not end. Such a
 * process is looked at from PROCESS_STUCK_AFTER_USEC after (a worker again at doubling intervals,
 * up to PROCESS_STUCK_CHECK_MAX_USEC; a collector at each crash's start). It is stuck once found
 * asleep in its exit past the release of its address space (child_asleep_in_exit()) at two looks
 * PROCESS_STUCK_AFTER_USEC apart or more (one look may catch an exit that sleeps for a moment),
 * or, killed, not ended PROCESS_KILLED_STUCK_USEC after the SIGKILL (a process killed ends at
 * once, unless the kernel holds it: a request its FUSE server read and never answers, before the
 * exit or in it, in any of its threads). */
#define PROCESS_STUCK_AFTER_USEC (50 * USEC_PER_MSEC)
#define PROCESS_STUCK_CHECK_MAX_USEC (5 * USEC_PER_SEC)
#define PROCESS_KILLED_STUCK_USEC (1 * USEC_PER_SEC)

/* While a uid has MODULES_STUCK_PER_UID_MAX stuck processes, its next crashes are read without
 * opening their mapped files, and say so: the traces go without symbols from them, and the uid
 * makes no more processes that wait for ever. While MODULES_STUCK_UIDS_MAX uids have, every crash
 * but root's is (collector.c). */
#define MODULES_STUCK_PER_UID_MAX 1U
#define MODULES_STUCK_UIDS_MAX 32U

/* What the looks at one process found. */
typedef struct ExitWatch {
        uint64_t asleep_since; /* CLOCK_MONOTONIC: the first of the looks that found it asleep in its exit, or 0 */
        bool stuck;            /* for good */
        bool in_exit;          /* ... found in its exit, its memory released (else it may hold it) */
} ExitWatch;

/* Looks at pid, a child of ours not reaped (so its pid is its own), now (CLOCK_MONOTONIC);
 * killed_usec: when it was sent SIGKILL, or 0. Whether it is stuck. */
bool exit_watch_look(ExitWatch *x, pid_t pid, uint64_t now, uint64_t killed_usec);

/* Stuck processes, as counted for a crash of uid: its own, and the uids that have any (up to
 * MODULES_STUCK_UIDS_MAX of them). */
typedef struct StuckCount {
        uid_t uid;
        unsigned mine;
        unsigned n_uids;
        uid_t uids[MODULES_STUCK_UIDS_MAX];
} StuckCount;

/* One more stuck process, of uid (UID_INVALID, a worker that had no job: counted for nobody). */
void stuck_count_add(StuckCount *s, uid_t uid);
