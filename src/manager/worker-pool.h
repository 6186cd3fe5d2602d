/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker pool and the manager's side of the worker protocol. Manager (root):
 * signals only the workers it spawned. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>
#include <sys/types.h>

#include "list.h"
#include "proto.h"
#include "stuck.h"
#include "worker-log.h"
#include "worker-watchdog.h"

typedef struct Manager Manager;
typedef struct ModuleHandoff ModuleHandoff;
typedef struct Record Record;

/* After this many workers in a row die before saying READY, wait before starting more. */
#define WORKER_SPAWN_FAILURES_MAX 5
/* After this many spares in a row die mapped ahead, before they say READY again, none is (until
 * a reload). */
#define MAP_AHEAD_FAILURES_MAX 3U
#define WORKER_RESPAWN_DELAY_USEC (2 * USEC_PER_SEC)
/* A started worker must be READY within this time. */
#define WORKER_READY_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* A stuck worker (stuck.h) no longer counts against MaxParallel= + SpareWorkers= (a user's would
 * stop every crash's worker from starting; the pool is filled again when one is found): one in
 * its exit, its memory released, never again; one that may hold its memory (killed, held before
 * its exit), up to this many, past which they count again, bounding the memory they hold. For a
 * crash of root's none counts: whatever stuck workers users left (with many uids, past this
 * bound), root's crash gets a worker within MaxParallel= + SpareWorkers= of the others. */
#define WORKERS_STUCK_HOLDING_UNCOUNTED_MAX 128U

typedef enum WorkerState {
        WORKER_STARTING, /* exec'd, not READY yet */
        WORKER_MAPPING,  /* READY, mapped ahead (MAPPED): its second READY, sandboxed, is awaited */
        WORKER_IDLE,     /* READY, waiting for a job */
        WORKER_BUSY,       /* has a crash; RESULT is awaited (SPOOL, STORED before it) */
        WORKER_COMMITTING, /* got COMMIT; RECORDED is awaited */
        WORKER_FINISHED,   /* done, or failed: only its exit is awaited */
} WorkerState;

/* What the owner of a job hears of its worker; the pool knows nothing else of the job. result()
 * comes at most once, then (after the owner's worker_commit()) recorded(); lost() may come at any
 * point instead. After recorded() or lost() the worker is the owner's no more. */
typedef struct WorkerJobOps {
        /* RESULT, checked for its form only; analysis holds the worker's stack traces (unchecked,
         * the owner's now). The owner goes on with worker_commit(). */
        void (*result)(void *owner, const MsgResult *res, Record *analysis);
        /* STORED (NULL: ignored): the core is written and synced, RESULT's facts without the stack
         * traces (checked for form only): what the owner keeps if the worker dies before RESULT */
        void (*stored)(void *owner, const MsgResult *res);
        /* RECORDED: the journal entry written (0) or the worker's error */
        void (*recorded)(void *owner, int error);
        /* the worker died, broke the protocol or was killed (why says which): it is gone */
        void (*lost)(void *owner, const char *why);
        /* RETURNED (NULL: taken as a protocol violation): the worker could not start the job (error)
         * and gave back conn, the job's own connection with nothing of it read, and exits; the
         * owner's now, as are the module files again */
        void (*returned)(void *owner, int conn, int error);
        /* whether the job waits on something else (a forwarding, bounded by its own deadline):
         * then the watchdog leaves the worker alone (NULL: never) */
        bool (*waiting_elsewhere)(const void *owner);
} WorkerJobOps;

/* A job: the message (the pool fills in the header and the spool it may take), its descriptors
 * and the module files, whose queue the pool sends, and lets go once the worker has them for
 * good: at its first message but RETURNED, or its end. */
typedef struct WorkerJob {
        MsgJob msg;
        int conn_fd;
        int out_fd;
        int record_fd;
        ModuleHandoff *modules; /* or NULL */
        char label[64];     /* "crash of PID N", for the worker's log lines */
        uid_t account_uid;  /* whose job it is: a worker stuck after it counts against this uid */
} WorkerJob;

/* What the pool asks of the jobs' side (the crashes). */
typedef struct PoolOps {
        void (*worker_ready)(Manager *m);     /* a worker said READY: jobs waiting for one may go */
        /* started ahead for them, beyond the spares; *ret_root: how many of them are root's crashes
         * (their workers are started whatever stuck workers the pool holds) */
        unsigned (*jobs_waiting)(Manager *m, unsigned *ret_root);
} PoolOps;

/* A descriptor's file and how it is open (worker-pool.c: conn_id()). */
typedef struct ConnId {
        int flags; /* O_ACCMODE | O_PATH */
        mode_t type;
        dev_t dev;
        uint64_t ino;
} ConnId;

typedef struct Worker {
        Manager *manager;
        WorkerState state;
        bool ready_seen;
        bool retired; /* let go by pool_retire_idle() (reload, stop), or killed after RETURNED: its
                       * exit is no failure */
        bool userns;  /* READY said it made its user namespace: ids are mapped into it */
        bool mapped;  /* WorkerUser= mapped ahead (MAPPED sent): it takes jobs of that user only;
                       * else worker_start_job() maps the job's */
        uid_t mapped_uid;
        gid_t mapped_gid;
        pid_t pid;
        int pidfd;
        int control_fd;
        sd_event_source *control_source;
        sd_event_source *child_source;
        sd_event_source *ready_timer; /* WORKER_READY_TIMEOUT_USEC to say READY */
        const WorkerJobOps *ops; /* its job's owner, NULL while it has none (or was detached) */
        void *owner;
        char label[64];
        /* its stderr, re-logged (worker-log.c) */
        int log_fd;
        sd_event_source *log_source;
        char log_buf[WORKER_LOG_LINE_MAX];
        size_t log_len;
        unsigned log_lines;   /* lines logged for this crash (WORKER_LOG_LINES_MAX) */
        unsigned log_dropped; /* bytes not logged (the pipe is closed at WORKER_LOG_DROPPED_MAX) */
        WorkerProgress progress; /* worker-watchdog.c, once it has a job */
        uint64_t spool_ceiling;  /* the most its SPOOL may be granted (its job's spool_max) */
        uint64_t spool_granted;  /* given and granted, held in Manager.spool_held until its end */
        bool spool_asked;        /* SPOOL comes once */
        bool stored_seen;        /* STORED comes once, after SPOOL and before RESULT */
        bool result_seen;        /* RESULT came: nothing more until COMMIT */
        bool details_due;        /* a JOB_FLAG_DETAILS job's DETAILS not sent yet: no STORED, no RESULT */
#ifdef MANAGER_TEST_FAULTS
        bool fault_grant_held;   /* test builds: its GRANT held until DETAILS (grant-after-details) */
        MsgSpool fault_grant;
        bool fault_events_held;  /* test builds: its messages and end unread until DETAILS (early-unread) */
        int fault_child_enabled; /* its end's event source as it was before */
#endif
        ModuleHandoff *modules;  /* its job's (the owner's), until worker_release_modules() */
        ConnId conn;             /* its job's connection at the send, which only RETURNED may */
        bool conn_known;         /* bring back (unknown: nothing may) */
        uid_t account_uid;       /* its job's WorkerJob.account_uid (UID_INVALID before a job) */
        uint64_t check_usec;     /* FINISHED: when it is looked at next (CLOCK_MONOTONIC) */
        uint64_t check_interval; /* ... and the time to the one after */
        uint64_t killed_usec;    /* CLOCK_MONOTONIC: sent SIGKILL, or 0 */
        ExitWatch watch;         /* FINISHED: what the looks found (stuck.h) */
        LIST_FIELDS(struct Worker, workers);
} Worker;

/* Starts the worker binary (posix_spawn: vfork and exec) with the control socket sock on
 * WORKER_CONTROL_FD and log on stderr; as the zygote if zygote. */
int worker_exec(Manager *m, int sock, int log, bool zygote, pid_t *ret);
/* The jobs' side of the pool (set once, before the first pool_fill()). */
void pool_init(Manager *m, const PoolOps *ops);
/* Starts workers until the configured number of spares is idle or starting. */
void pool_fill(Manager *m);
/* An idle worker for a job of uid and gid, the one that waited longest, or NULL (then one is
 * being started): one mapped ahead to that user if there is one, else one not mapped yet. */
Worker *pool_take_idle(Manager *m, uid_t uid, gid_t gid);
/* Whether pool_take_idle() would find one now (nothing is started if not). */
bool pool_has_idle(Manager *m, uid_t uid, gid_t gid);
/* After a worker took its job (the job no longer waits): a new spare at once if no spare that any
 * user's crash may take (one not mapped ahead) is idle; otherwise the pool is filled again when
 * the worker exits, so that a worker being made does not take a CPU from the job whose task is
 * held. */
void pool_replace_taken(Manager *m);
/* Hands a job to an idle worker (its uid and gid mapped into the worker's user namespace) and
 * watches it; ops tell owner what becomes of it. The descriptors stay the caller's; the module
 * descriptors are closed once the worker has them. -EAGAIN: that worker was gone (its ids could
 * not be mapped for that reason, or the job not sent; killed), the module descriptors are still
 * open and the job may go to another. Any other error: killed too, and no worker could take the
 * job (its ids refused, the manager's own failure). */
int worker_start_job(Worker *w, WorkerJob *job, const WorkerJobOps *ops, void *owner);
/* DETAILS, to a busy worker whose job was sent with JOB_FLAG_DETAILS: the crash's whole record
 * and its module files (the caller's; closed as a job's are, once the worker has them for good).
 * -EAGAIN: the worker had given the job back and gone (its RETURNED unread: the owner is not told,
 * the connection queued with it not taken); -ECONNRESET: it is gone (died) otherwise. On any
 * failure but -EAGAIN the caller kills the worker. */
int worker_send_details(Worker *w, int record_fd, ModuleHandoff *modules);
/* Tells the worker the final facts; it writes the journal entry and answers RECORDED. */
int worker_commit(Worker *w, const CoreFacts *facts);
/* Kills the worker (deadline, protocol violation); its job is detached first, its owner not told. */
void worker_kill(Worker *w, const char *why);
/* The stuck workers (stuck.h), each as its job's uid's, into s. */
void pool_count_stuck(const Manager *m, StuckCount *s);
/* Lets idle spares go (config reload: new user or path). */
void pool_retire_idle(Manager *m);
/* Kills and reaps every worker; the owners of their jobs are told (lost). */
void pool_free_all(Manager *m);
int pool_resolve_user(Manager *m);
