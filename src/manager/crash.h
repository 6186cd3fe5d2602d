/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of a crash's life in coredumpd, from the kernel's connection or a pipe handover to
 * the stored core, its record and the journal entry. Manager (root). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "coredump-name.h"
#include "forward.h"
#include "kernel-abi.h"
#include "list.h"
#include "meta.h"
#include "pidfd-util.h"
#include "proto.h"
#include "worker-pool.h"

typedef struct Manager Manager;
typedef struct Worker Worker;

/* The kernel sends the request right after connecting; a peer that is slower is not it. */
#define HANDSHAKE_TIMEOUT_USEC (5 * USEC_PER_SEC)

typedef enum CrashState {
        CRASH_HANDSHAKE,   /* waiting for the request (or the ELF magic with "@") */
        CRASH_COLLECTING,  /* the collector reads what may block (collector.h); then after_collect */
        CRASH_MARK,        /* ack sent, waiting for the kernel's mark */
        CRASH_WAIT_WORKER, /* ready to stream, no idle worker yet */
        CRASH_STREAMING,   /* a worker has the connection */
        CRASH_FORWARDING,  /* core stored; coredump-forward hands it to its container (the task held) */
        CRASH_RECORDING,   /* core stored; the worker writes the journal entry */
} CrashState;

/* What a crash does once its collector is done. */
typedef enum CrashAfterCollect {
        AFTER_STREAM,      /* crash_ready_to_stream(): on to a worker (with the core, or for the record) */
        AFTER_REJECT_ACK,  /* refused at the handshake: the REJECT ack, then the record */
        AFTER_RECORD_ONLY, /* refused otherwise: the record */
} CrashAfterCollect;

typedef struct Collector Collector;

/* Why a worker was lost, as kept until the record can say it (the pool's and crash.c's reasons) */
#define LOST_WHY_MAX 128U

typedef struct Crash {
        Manager *manager;
        uint64_t id;
        CrashState state;
        int conn_fd;
        int pidfd;
        int out_fd;
        bool storing;
        uint64_t store_granted;  /* the room its core was granted (its reservation; the job's store_size_max) */
        PidfdInfo info;
        CrashMeta meta;
        uint64_t timestamp_usec; /* CLOCK_REALTIME at accept */
        uint64_t accept_usec;    /* CLOCK_MONOTONIC at accept */
        Record record;           /* the base record, once the crash is ready to stream */
        Record analysis;         /* the worker's stack traces and packages (unchecked until merged) */
        char name_stem[COREDUMP_NAME_MAX]; /* core.COMM.UID.BOOTID.PID.USEC */
        bool plain;              /* "@" protocol: no request, the core starts at once */
        bool pipe;               /* pipe mode: conn_fd is the kernel's pipe, handed over by coredump-pipe */
        pid_t pipe_tid;          /* pipe mode: %I, the dumping thread */
        int pipe_signal;         /* pipe mode: %s */
        char pipe_hostname[HANDOVER_HOSTNAME_MAX + 1]; /* pipe mode: %h, the task's own UTS name ("" if none) */
        uint64_t rlimit_core;    /* the process's RLIMIT_CORE (soft; UINT64_MAX unlimited), if rlimit_known */
        bool rlimit_known;       /* from %c in pipe mode, from /proc/PID/limits before the ack otherwise */
        bool collected;          /* metadata and base record taken */
        bool kernel_read;        /* meta_collect() done (the collector may still run) */
        int proc_dir;            /* the verified /proc directory, while collecting */
        int leader_dir;          /* its container leader's, while collecting (or -EBADF) */
        int files_root;          /* what its mapped files are opened beneath, if not its own root (EnterNamespace=) */
        Collector *collector;
        ForwardTarget *forward;  /* its container's collector asked for it (forward.h), or NULL */
        Forwarder *forwarder;    /* coredump-forward sending it there, while CRASH_FORWARDING */
        int forward_signal;      /* the core's signal, where the record has none */
        CoreFacts forward_facts; /* what the journal entry gets once the forwarding is over */
        char forward_core[COREDUMP_NAME_MAX]; /* the stored core's name, while forwarding */
        CrashState state_before; /* the state to go back to after CRASH_COLLECTING */
        CrashAfterCollect after_collect;
        char incomplete[MODULE_PATH_MAX + 256]; /* why the collector's fields are missing, or "" */
        char log_comm[COMM_MAX]; /* comm as the daemon's own log lines show it (sanitised) */
        const char *no_core_why; /* set when only a record will come of this crash */
        bool record_only;        /* no core comes at all (crash_record_only()): no traces either */
        char why_buf[PATH_MAX + 256]; /* no_core_why when it is made up */
        bool core_counted;       /* counts in Manager.n_cores */
        bool counted_only;       /* suppressed: counted for a summary, nothing else to do */
        bool deadline_extended;  /* its task was gone at the deadline: TimeoutSec= once more (crash.c) */
        bool stored_seen;        /* its worker said STORED: the core is written and synced */
        bool job_returned;       /* a worker gave its job back: the next one is its last */
        /* The connection to a worker while /proc is read (JOB_FLAG_DETAILS): its DETAILS is due
         * once collected; its output was opened for it; whether its worker became the user (or
         * would have, had its ids not been refused). */
        bool job_early;
        bool output_ready;
        bool job_users_own;
        char lost_early[LOST_WHY_MAX]; /* its worker was lost before DETAILS: why, said once collected */
        int early_error;         /* its job could not go early, nor can it later (its ids refused) */
        MsgResult stored;        /* what it said then (untrusted, checked when used) */
        bool forwarded;          /* the host's collector forwarded it here (receive.c) */
        Record forwarded_fields; /* what it sent: kept where this machine's /proc says nothing */
#ifdef MANAGER_TEST_FAULTS
        bool fault_fired;        /* test builds: the injected fault happened to this crash */
#endif
        uint8_t req_buf[COREDUMP_REQ_SIZE_MAX];
        size_t req_len, req_size;
        uint8_t mark[COREDUMP_MARK_SIZE];
        size_t mark_len;
        sd_event_source *io_source;
        sd_event_source *timer_source;
        Worker *worker;
        LIST_FIELDS(struct Crash, crashes);
} Crash;

/* Takes a freshly accepted connection (ownership of conn passes). */
void crash_accept(Manager *m, int conn);
/* Pipe mode: takes the pipe and the pidfd (or -EBADF) coredump-pipe handed over, with the
 * kernel's arguments (ownership of the fds passes). */
void crash_accept_pipe(Manager *m, int pipe_fd, int pidfd, const MsgHandover *h);
/* A crash forwarded by the host's collector (receive.c): like a handover, the core on core_fd
 * (read to its end), the fields it sent in *forwarded (taken). */
void crash_accept_forwarded(Manager *m, int core_fd, int pidfd, const MsgHandover *h, Record *forwarded);
/* The collector is done (or was stopped at its deadline): the crash goes on. */
void crash_collected(Crash *c);
/* The crashes' side of the worker pool (pool_init()): a READY worker takes the crash that waited
 * longest; crashes waiting for a worker start more. What a crash's worker does comes back through
 * the WorkerJobOps of its job: its result (untrusted, checked here: the core is linked, the record
 * written beside it, the worker told to write the journal entry), the entry written, or the worker
 * lost. */
extern const PoolOps crash_pool_ops;
/* coredump-forward is done (error 0), failed or timed out (why says which): the task is released,
 * the core kept or not (KeepForwarded=), the journal entry written. */
void crash_forwarded(Crash *c, int error, const char *why);
void crash_free(Crash *c);
/* Logs what happened to the crash (level, what) and frees it. */
void crash_drop(Crash *c, int level, const char *what);
/* What the cores being written now may take on disk, but self's: each one's granted room, or what
 * it holds if more (a core that starts together with others must not count on their room); a
 * core of another owner that self may displace (store_may_displace) only what it holds. */
uint64_t crash_store_in_flight(Manager *m, const Crash *self);
