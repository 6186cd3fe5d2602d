/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker pool and the manager's side of the worker protocol. Manager (root):
 * signals only the workers it spawned. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>
#include <sys/types.h>

#include "list.h"
#include "proto.h"
#include "worker-log.h"
#include "worker-watchdog.h"

typedef struct Manager Manager;
typedef struct Crash Crash;

/* After this many workers in a row die before saying READY, wait before starting more. */
#define WORKER_SPAWN_FAILURES_MAX 5
#define WORKER_RESPAWN_DELAY_USEC (2 * USEC_PER_SEC)
/* A started worker must be READY within this time. */
#define WORKER_READY_TIMEOUT_USEC (10 * USEC_PER_SEC)

typedef enum WorkerState {
        WORKER_STARTING, /* exec'd, not READY yet */
        WORKER_IDLE,     /* READY, waiting for a job */
        WORKER_BUSY,       /* has a crash; RESULT is awaited */
        WORKER_COMMITTING, /* got COMMIT; RECORDED is awaited */
        WORKER_FINISHED,   /* done, or failed: only its exit is awaited */
} WorkerState;

typedef struct Worker {
        Manager *manager;
        WorkerState state;
        bool ready_seen;
        bool retired; /* let go by pool_retire_idle() (reload, stop): its exit is no failure */
        bool userns;  /* READY said it made its user namespace: worker_start_job() maps the job's ids */
        pid_t pid;
        int pidfd;
        int control_fd;
        sd_event_source *control_source;
        sd_event_source *child_source;
        sd_event_source *ready_timer; /* WORKER_READY_TIMEOUT_USEC to say READY */
        Crash *crash;
        /* its stderr, re-logged (worker-log.c) */
        int log_fd;
        sd_event_source *log_source;
        char log_buf[WORKER_LOG_LINE_MAX];
        size_t log_len;
        unsigned log_lines;   /* lines logged for this crash (WORKER_LOG_LINES_MAX) */
        unsigned log_dropped; /* bytes not logged (the pipe is closed at WORKER_LOG_DROPPED_MAX) */
        WorkerProgress progress; /* worker-watchdog.c, once it has a job */
        uint64_t spool_ceiling;  /* the most its SPOOL may be granted (its job's spool_max) */
        uint64_t spool_granted;  /* held in Manager.spool_held until RESULT or its end */
        bool spool_asked;        /* SPOOL comes once */
        LIST_FIELDS(struct Worker, workers);
} Worker;

/* Starts the worker binary (posix_spawn: vfork and exec) with the control socket sock on
 * WORKER_CONTROL_FD and log on stderr; as the zygote if zygote. */
int worker_exec(Manager *m, int sock, int log, bool zygote, pid_t *ret);
/* Starts workers until the configured number of spares is idle or starting. */
void pool_fill(Manager *m);
/* An idle worker, the one that waited longest, or NULL (then one is being started). */
Worker *pool_take_idle(Manager *m);
/* After a worker took its crash (the crash no longer waits): a new spare at once if that was the
 * last one; otherwise the pool is filled again when the worker exits, so that a worker being made
 * does not take a CPU from the crash whose task is held. */
void pool_replace_taken(Manager *m);
/* Hands a crash to an idle worker: connection, output and record fds, and the user to become
 * (the crashing user for a plain user crash, so the journal entry is theirs; else ours).
 * -EAGAIN: that worker could not take it (killed); the crash may go to another. */
int worker_start_job(Worker *w, Crash *c, int conn_fd, int out_fd, int record_fd);
/* Tells the worker the final facts; it writes the journal entry and answers RECORDED. */
int worker_commit(Worker *w, const CoreFacts *facts);
/* Kills the worker (deadline, protocol violation); its crash is detached first. */
void worker_kill(Worker *w, const char *why);
/* Lets idle spares go (config reload: new user or path). */
void pool_retire_idle(Manager *m);
void pool_free_all(Manager *m);
int pool_resolve_user(Manager *m);
