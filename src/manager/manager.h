/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredumpd's state (sockets, store, workers, crashes, limits) and its life cycle.
 * Manager (root). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "config.h"
#include "crash-limit.h"
#include "handshake.h"
#include "coredump-name.h"
#include "list.h"
#include "log.h"
#include "pattern.h"
#include "listen.h"
#include "store.h"
#include "request-server.h"
#include "zygote.h"

typedef struct Crash Crash;
typedef struct Worker Worker;
typedef struct Collector Collector;
typedef struct PoolOps PoolOps;

/* "/proc/self/fd/" and an int */
#define WORKER_EXEC_PATH_MAX 32

typedef struct Manager {
        sd_event *event;
        Config config;
        const char *config_file;
        const char *dropin_dir;

        int listen_fd;
        sd_event_source *listen_source;
        bool accepting;
        char socket_path[SOCKET_PATH_MAX];
        bool socket_bound_here;

        bool registered;
        bool pipe_mode;          /* registered as |coredump-pipe: crashes come on the handover socket */
        bool pipe_limit_raised;
        unsigned saved_pipe_limit;
        sd_event_source *handover_source; /* owns its fd */
        char handover_path[108];
        bool handover_bound_here;
        RequestServer handover_server;
        sd_event_source *receive_source; /* forwarded crashes (receive.c); owns its fd */
        char receive_path[108];          /* bound here (--receive=), else "" */
        RequestServer receive_server;
        char saved_pattern[CORE_PATTERN_MAX + 2];
        char our_pattern[CORE_PATTERN_MAX + 2];

        int storage_fd;
        StoreUsage store_usage;

        sd_event_source *control_source; /* owns its fd */
        char control_path[108];
        RequestServer control_server;

        char boot_id[BOOT_ID_STRING_MAX];
        char machine_id[BOOT_ID_STRING_MAX]; /* empty if the machine has none */
        char hostname[HOST_NAME_MAX + 1];

        char worker_path[PATH_MAX];   /* for messages */
        int worker_fd;                /* O_PATH: the worker binary found at start-up */
        char worker_exec[WORKER_EXEC_PATH_MAX]; /* /proc/self/fd/N of worker_fd: what is spawned */
        int forward_fd;               /* O_PATH: coredump-forward, found beside the worker (or -EBADF) */
        char forward_exec[WORKER_EXEC_PATH_MAX]; /* /proc/self/fd/N of forward_fd, "" without one */
        /* the forward launcher (forward-launch.h): coredump-forward --launcher, started at start-up */
        int launcher_sock;            /* -EBADF: none (no forwarding into containers) */
        pid_t launcher_pid;
        int launcher_pidfd;
        uint32_t launcher_seq;        /* the last request's number */
        sd_event_source *launcher_source;
        uid_t worker_uid;
        gid_t worker_gid;
        bool worker_user_shared;      /* "nobody": its other processes could stop a spare mapped ahead */
        HandshakeNews handshake_news; /* what newer kernels' requests offered, logged once */
        unsigned map_ahead_failures;  /* spares in a row that died mapped ahead, before READY again */
        Worker *workers;
        unsigned n_workers;
        unsigned n_workers_finished;  /* of those, FINISHED: only their exit is awaited */
        unsigned n_workers_stuck;     /* of those, found stuck (stuck.h) */
        unsigned n_workers_stuck_holding; /* of those, not in their exit: they may hold their memory */
        sd_event_source *finished_timer; /* looks at FINISHED workers not reaped (stuck.h) */
        Zygote zygote;            /* forks the workers (zygote.h) */
        const PoolOps *pool_ops;  /* the jobs' side of the pool (crash.c) */
        uint64_t physical_memory; /* bytes: SpoolMax='s default and cap are shares of it */
        uint64_t spool_held;      /* spool granted to workers now (SpoolMax= bounds it) */
        unsigned spawn_failures;
        sd_event_source *respawn_timer;
        sd_event_source *watchdog_timer; /* worker-watchdog.c: on while a worker is watched */

        Collector *collectors;         /* every collector child not reaped yet */
        Collector *collector_spare;    /* of those, the one forked ahead for the next crash */
        unsigned n_collectors_stalled; /* of those, the ones past their deadline */
        Crash *crashes; /* newest first */
        unsigned n_crashes;
        unsigned n_cores; /* crashes whose core was taken and is not done (bounded by MaxParallel=) */
        CrashLimits limits;
        sd_event_source *summary_timer;
        sd_event_source *vacuum_timer;
        uint64_t next_crash_id;

        RateLimit refuse_ratelimit;
        RateLimit record_ratelimit; /* crashes that could not be fully recorded */
        RateLimit user_cap_ratelimit; /* crashes refused by MaxParallelPerUser= */

        bool stopping; /* no new crashes; exit once those in flight are done */
        sd_event_source *stop_timer;
} Manager;

/* On stop, crashes in flight get this long to finish (the unit allows 60 s). */
#define STOP_DRAIN_TIMEOUT_USEC (45 * USEC_PER_SEC)

int manager_new(Manager **ret, const char *config_file, const char *dropin_dir);
Manager *manager_free(Manager *m);
/* Listening socket: systemd's, or bound at socket_path. */
int manager_setup_listen(Manager *m, const char *socket_path, const char *receive_path);
int manager_register_pattern(Manager *m);
int manager_run(Manager *m);
/* Re-reads the configuration; keeps the old one if the new one is invalid. */
int manager_reload(Manager *m);
/* Stops or resumes accepting, following how many crashes are in flight (and exits once
 * stopping and none is left). */
void manager_update_accepting(Manager *m);
