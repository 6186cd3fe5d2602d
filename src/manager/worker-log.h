/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the pipe of a worker's stderr, re-logged by the manager (root), bounded. */
#pragma once

/* The worker's stderr is a pipe to the manager: its lines are re-logged with the crash they
 * belong to, bounded. The manager reads it at most WORKER_LOG_READ_MAX bytes per event; past
 * WORKER_LOG_LINES_MAX lines (and past WORKER_LOG_LINE_MAX in a line) bytes are dropped and
 * counted (Worker.log_dropped); once WORKER_LOG_DROPPED_MAX are, the pipe is closed and that is
 * logged once. So one crash's worker costs the manager at most about
 * LINES_MAX * (LINE_MAX + 1) + DROPPED_MAX + READ_MAX bytes read, in bounded steps. */

#include <systemd/sd-event.h>

typedef struct Worker Worker;

#define WORKER_LOG_LINE_MAX 512U  /* longer lines are cut */
#define WORKER_LOG_LINES_MAX 32U  /* per worker, i.e. per crash */
#define WORKER_LOG_DROPPED_MAX (64U << 10) /* bytes not logged before the pipe is closed */
#define WORKER_LOG_READ_MAX 4096U          /* one read per event */

int worker_log_watch(Worker *w, int fd);
/* Reads what is left (within the budget), flushes a partial line, reports dropped bytes once;
 * closes the channel. */
void worker_log_close(Worker *w);
