/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the per-crash collector: a child of coredumpd, forked ahead of the crash, that does
 * the reads that can block on a user's file system, so that the event loop never does. Manager
 * (root). */
#pragma once

/* What a crashed process's owner controls can block a reader without end: its command line and
 * environment are read from its memory, its memory map under its address space's lock, which
 * a process sharing that address space may hold while it waits in a fault on a FUSE file whose
 * server never answers (a request the server has read is waited for even through SIGKILL), and
 * its mapped files may be on such a file system too. So these reads happen in a child of its
 * own per crash (collect-child.c), with a deadline: forked ahead of the crash as a spare that
 * keeps no descriptor but its socket, and given the crash's directories with GO. Everything else
 * the manager reads of the process comes from the kernel alone and stays on the event loop
 * (meta.c).
 *
 * The child reports through memory shared with the manager: each record field once complete,
 * and where it is (the step, the file being opened), so a stall is recorded precisely and what
 * was read before it is kept. The module descriptors come in one message on a socket pair. At
 * the deadline the child is killed; one stuck in an unkillable wait is left to exit whenever its
 * file system answers, and is reaped then. While a uid has COLLECTORS_STALLED_PER_UID_MAX of
 * those, its next crashes are recorded without these reads (and say so), so one user's hung
 * file system costs the daemon one deadline, not one per crash. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "list.h"
#include "macro.h"
#include "meta.h"
#include "proto.h"
#include "stuck.h"
#include "time-util.h"

typedef struct Crash Crash;
typedef struct Manager Manager;

#define COLLECT_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* The least a collector gets, even when its crash has used half of TimeoutSec= already. */
#define COLLECT_TIMEOUT_MIN_USEC (100 * USEC_PER_MSEC)
#define COLLECTORS_STALLED_PER_UID_MAX 1U
#define COLLECTORS_STALLED_MAX 64U /* all uids; past it only root's crashes get a collector */
/* room for the fields the child reads (their caps in meta.h) and their framing */
#define COLLECT_RECORD_MAX (2 * CMDLINE_MAX + ENVIRON_MAX + PROC_FILE_MAX + 4096U)
/* what the child is given of the manager's reads: status, mountinfo (PROC_FILE_MAX each), the root */
#define COLLECT_REQUEST_FIELDS { "COREDUMP_PROC_STATUS", "COREDUMP_PROC_MOUNTINFO", "COREDUMP_ROOT" }
#define COLLECT_REQUEST_MAX (2 * PROC_FILE_MAX + PATH_MAX + 4096U)

typedef enum CollectStep {
        COLLECT_STARTING,
        COLLECT_CMDLINE,
        COLLECT_ENVIRON,
        COLLECT_LEADER_CMDLINE,
        COLLECT_MAPS,
        COLLECT_CREDENTIALS,
        COLLECT_MODULES,
        COLLECT_DONE,
        _COLLECT_STEP_MAX,
} CollectStep;

/* Written by the child, read by the manager: record[0, record_len) are complete fields. */
typedef struct CollectShared {
        uint32_t step;        /* CollectStep */
        uint32_t record_len;  /* stored with release order once the bytes are in place */
        uint32_t n_modules;   /* files it opened and keeps for the worker, <= MODULES_MAX */
        uint32_t omitted;     /* files past MODULES_MAX */
        uint32_t refused;     /* files not opened (failed a check, or no permission) */
        int32_t first_refusal;
        int32_t error;        /* why the child could not go on, if it stopped early */
        uint32_t overflow;    /* a field was cut at its cap */
        char first_refused[MODULE_PATH_MAX];
        char current[MODULE_PATH_MAX]; /* the file being opened in COLLECT_MODULES */
        ModuleEntry entries[MODULES_MAX];
        uint8_t record[COLLECT_RECORD_MAX];
        /* written by the manager before COLLECT_GO, read by the child after it */
        char exe[PATH_MAX];
        uint32_t request_len;
        uint8_t request[COLLECT_REQUEST_MAX]; /* COLLECT_REQUEST_FIELDS, in record format */
} CollectShared;

/* The manager's word to a spare: go, with the crash's directories as SCM_RIGHTS (the crashed
 * process's /proc directory, then its container leader's and the files' root if flags say so). */
#define COLLECT_GO_MAGIC UINT32_C(0x434f4c47) /* "COLG" */
#define COLLECT_GO_LEADER 1U
#define COLLECT_GO_FILES_ROOT 2U
#define COLLECT_GO_NO_MODULES 4U /* its mapped files are not opened (stuck.h) */
#define COLLECT_GO_FDS_MAX 3
typedef struct CollectGo {
        uint32_t magic;
        uint32_t flags;
} CollectGo;

/* The manager's word to a collector done with its crash, which keeps the files it opened: queue
 * them (one message: a uint32_t count, the files as SCM_RIGHTS) on the socket this carries, the
 * queue the crash's worker takes them from. The manager never holds them (modules.h). */
#define COLLECT_QUEUE_MAGIC UINT32_C(0x434f4c51) /* "COLQ" */
typedef struct CollectQueue {
        uint32_t magic;
        uint32_t spare;
} CollectQueue;

typedef struct Collector {
        Manager *manager;
        Crash *crash;       /* NULL once detached: killed at its deadline, not exited yet */
        pid_t pid;
        int pidfd;
        int sock;           /* until harvested: then the crash's (ModuleHandoff) if it keeps files */
        uid_t uid;
        CollectShared *shared;
        bool eof;           /* the child's end of the socket is shut down: it is done */
        bool reaped;
        bool stalled;       /* detached before it finished: counts against its uid until it exits */
        unsigned stuck_seen; /* GO said COLLECT_GO_NO_MODULES for this many stuck processes */
        bool stuck_all;      /* ... or uids (MODULES_STUCK_UIDS_MAX), not its own */
        uint64_t harvested_usec; /* CLOCK_MONOTONIC: its crash let it go (collector_harvest()), or 0 */
        uint64_t killed_usec;    /* CLOCK_MONOTONIC: sent SIGKILL, or 0 */
        ExitWatch watch;         /* looked at from PROCESS_STUCK_AFTER_USEC after its harvest (stuck.h) */
        sd_event_source *io_source;
        sd_event_source *child_source;
        LIST_FIELDS(struct Collector, collectors);
} Collector;

/* Starts the collector of a crash whose kernel-side metadata is read (c->meta.dir open). 1 when
 * started (crash_collected() follows), 0 when this crash gets none (why says why), <0 error. */
int collector_start(Crash *c, char *why, size_t size);
/* Takes what the collector delivered into c->meta (fields, modules) and lets it go: a finished
 * one is freed, one still running is killed and kept until it exits. why gets where a stalled
 * child was ("" if it had finished). */
void collector_harvest(Crash *c, char *why, size_t size);
/* Frees every collector (the manager exits; children still stuck are left to exit). */
void collector_free_all(Manager *m);
/* Forks the spare collector if there is none, ahead of the next crash (a fork while a task is
 * held was most of its collection's time): called when a crash ends and at the start. */
void collector_prefork(Manager *m);
/* The queue of the crash's module files (h may be NULL: none), made for the worker a job is sent
 * to, if it was not yet (for one that gave the job back): 0, or a negative errno (then the
 * worker gets none). */
int collector_queue_make(ModuleHandoff *h);
/* The collector that keeps them asked to queue them, once the job is sent and its task let go
 * (the worker waits for them before it reads the core; the crash's manager, never): 0 (also if
 * asked already), or a negative errno. */
int collector_queue_ask(ModuleHandoff *h);

/* The child's side (collect-child.c). */
typedef struct CollectInput {
        int procdir;    /* the crashed process's verified /proc directory */
        int leader_dir; /* its container leader's, or -EBADF */
        int files_root; /* where its mapped files are opened, if not beneath its root (or -EBADF) */
        int sock;
        pid_t parent;             /* the manager: the child dies with it */
        const char *exe;          /* its executable, as the manager read it */
        const uint8_t *request;   /* COLLECT_REQUEST_FIELDS the manager read, in record format */
        size_t request_len;
        bool no_modules;          /* COLLECT_GO_NO_MODULES */
} CollectInput;
/* A spare, forked ahead of any crash: keeps nothing of the manager's but sock and stdio, waits on
 * sock for COLLECT_GO (exits at EOF: the manager let it go), then collects that one crash, says
 * so with its end's shutdown for writing, and keeps the module files it opened until EOF,
 * queueing them wherever a COLLECT_QUEUE says. */
_noreturn_ void collect_spare_main(int sock, CollectShared *sh, pid_t parent);
/* Pure: what the child was doing at step, for the record ("reading its environment"). */
const char *collect_step_to_string(CollectStep step);
