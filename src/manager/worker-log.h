/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the pipe of a worker's stderr, re-logged by the manager (root), bounded. */
#pragma once

/* The worker's stderr is a pipe to the manager: its lines are re-logged with the crash they
 * belong to, bounded (a worker that floods is cut off, the count of dropped lines reported). */

#include <systemd/sd-event.h>

typedef struct Worker Worker;

#define WORKER_LOG_LINE_MAX 512U  /* longer lines are cut */
#define WORKER_LOG_LINES_MAX 32U  /* per worker, i.e. per crash */

int worker_log_watch(Worker *w, int fd);
/* Reads what is left, flushes a partial line, reports dropped lines; closes the channel. */
void worker_log_close(Worker *w);
