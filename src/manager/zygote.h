/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of coredumpd's side of the zygote (src/worker/zygote.h): starting it, asking it for
 * a worker, noticing its end. Manager (root): signals and reaps only the zygote it started. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "time-util.h"

typedef struct Manager Manager;

/* The zygote must say READY, and answer each FORK, within these. */
#define ZYGOTE_READY_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define ZYGOTE_FORK_TIMEOUT_USEC (1 * USEC_PER_SEC)
/* After this many zygotes in a row failed (to start, to fork, or died), workers are started one
 * by one (posix_spawn, exec) for the rest of the daemon's life. */
#define ZYGOTE_FAILURES_MAX 3U
/* Only with WorkerZygote=yes: workers forked from one zygote share its address layout, stack
 * canary and pointer guard (no exec in between), so that a user who took over the worker of
 * their own crash would know them in a sibling that reads another user's crash. By default
 * every worker is exec'd (each its own, from the kernel's AT_RANDOM and ASLR), which costs about
 * 1 to 1.6 ms more CPU a crash on a two-CPU machine and no time the task is held (the spares are
 * started ahead; bench/worker-start.py measures both). With it, a zygote is replaced after this many forks, and after any worker that died
 * abnormally, so that a crafted core cannot learn the layout by trial and error. */
#define ZYGOTE_FORKS_MAX 64U

typedef struct Zygote {
        pid_t pid;
        int pidfd;
        int fd;          /* its control socket */
        bool ready;
        unsigned failures; /* in a row: a fork resets it */
        unsigned forks;
        sd_event_source *child_source;
} Zygote;

void zygote_init(Zygote *z);
/* Starts the zygote unless it runs or has failed too often; 0 once it is READY. */
int zygote_start(Manager *m);
/* A new worker, a child of ours, with control socket control and log pipe log (both still ours to
 * close): its PID in *ret. -ENOTCONN without a zygote or if it could not fork (start the worker
 * another way, with these descriptors); -EIO if something may hold them now (start none). */
int zygote_fork(Manager *m, int control, int log, pid_t *ret);
/* Kills and reaps it (the daemon stops, or it misbehaved). */
void zygote_stop(Manager *m);
/* A worker died abnormally: a new zygote (new layout) for the next ones. */
void zygote_renew(Manager *m);
