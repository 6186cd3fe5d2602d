/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the manager<->worker messages (and pipe mode's handover) and their send and receive.
 * Shared by coredumpd, coredump-worker and coredump-pipe: I/O only on the given socket. */
#pragma once

/* The manager <-> worker boundary: fixed-size, typed messages over a SOCK_SEQPACKET pair.
 * Every message is checked for its exact length and for being allowed in the current phase;
 * anything else is fatal for the worker. The worker is untrusted once it has seen core bytes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record-fields.h"
#include "record.h"

#define PROTO_MAGIC UINT32_C(0x43445331) /* "CDS1" */
#define WORKER_CONTROL_FD 3

/* The phases, in order; each message is allowed in its phase only, once:
 *   worker  READY     started, waiting for a job
 *   manager MAPPED    (optional) WorkerUser= is mapped into the worker's user namespace ahead
 *                     of any crash: it enters its whole sandbox as that user now, and takes
 *                     only a job of that user
 *   worker  READY     (after MAPPED only) again, with READY_FLAG_SANDBOXED: sandboxed
 *   manager JOB       a crash: [connection, output, record memfd, module table memfd], the uid
 *                     to become
 *   manager MODULES   (if the table lists any) [the queue of the crashed process's mapped
 *                     files]: a socket where the collector that opened them (in the process's
 *                     mount namespace) queues one message once the job is sent, a uint32_t
 *                     count and the files as SCM_RIGHTS, as many as the table lists; the worker
 *                     takes them out once it can no longer give the job back (a job given back
 *                     has them still, for the next worker)
 *   manager DETAILS   (a JOB_FLAG_DETAILS job only, sent as soon as /proc is read, at any point
 *                     until RESULT: before, during or after SPOOL and GRANT) [record memfd,
 *                     module table memfd] in place of the job's provisional record and empty
 *                     table, then their MODULES; the worker takes them when they come (between
 *                     two chunks of the core, between its SPOOL and the GRANT, or after the
 *                     core); STORED and RESULT only after them
 *   worker  RETURNED  (instead of all that follows, before a byte of the core is read) the job
 *                     could not be started here: [connection] back, for another worker (the
 *                     worker exits)
 *   worker  SPOOL     (at most once, before RESULT, when the room given with the job is too
 *                     small) the core's size as its ELF headers say: room asked in the memory
 *                     spool, so that the task goes before the compression
 *   manager GRANT     the answer: the room granted (0: compress while receiving)
 *   worker  STORED    (a job that stores the core, once it is written and synced, before the
 *                     stack traces) RESULT's facts without them: a worker that dies making
 *                     them loses only them, its core is kept
 *   worker  RESULT    the core is received and written; what its notes say; [analysis memfd]:
 *                     the stack traces and packages (a record, checked by the manager)
 *   manager COMMIT    the core is linked (or not): the final facts for the record
 *   worker  RECORDED  the journal entry is written (or why not); the worker exits */
typedef enum MsgType {
        MSG_READY = 1,
        MSG_JOB = 2,
        MSG_RESULT = 3,
        MSG_COMMIT = 4,
        MSG_RECORDED = 5,
        MSG_MODULES = 6,
        MSG_HANDOVER = 7, /* coredump-pipe → coredumpd, on the handover socket */
        MSG_SPOOL = 8,
        MSG_SPOOL_GRANT = 9,
        MSG_FORK = 10,   /* coredumpd → the zygote: [control socket end, log pipe end] */
        MSG_FORKED = 11, /* the zygote → coredumpd: the new worker's PID */
        MSG_MAPPED = 12,
        MSG_STORED = 13, /* a MsgResult, before the stack traces */
        MSG_RETURNED = 14,
        MSG_DETAILS = 15,
} MsgType;

typedef struct MsgHeader {
        uint32_t magic;
        uint32_t type;
} MsgHeader;

/* Module files handed to the worker for stack traces. */
#define MODULES_MAX 128U
#define MODULE_PATH_MAX 512U

/* One entry of the module table memfd, in the order the descriptors follow. */
typedef struct ModuleEntry {
        char path[MODULE_PATH_MAX]; /* NUL-terminated, as the crashed process saw it */
} ModuleEntry;

/* MODULES: carries [the queue]; count is the table's, and the queue's message must say it too. */
typedef struct MsgModules {
        MsgHeader hdr;
        uint32_t count; /* module files queued, 1 to MODULES_MAX */
        uint32_t spare;
} MsgModules;

/* Pipe mode: the usermode helper hands the kernel's pipe (and the pidfd of %F) to coredumpd,
 * with what the kernel put on its command line. Carries [pipe] or [pipe, pidfd]. */
#define HANDOVER_HOSTNAME_MAX 64
typedef struct MsgHandover {
        MsgHeader hdr;
        int32_t pid, tid;     /* %P %I */
        uint32_t uid, gid;    /* %u %g */
        int32_t signal;       /* %s */
        uint32_t dumpable;    /* %d */
        uint64_t timestamp;   /* %t, seconds */
        uint64_t rlimit;      /* %c */
        uint32_t has_pidfd;   /* %F expanded: the pidfd follows the pipe */
        uint32_t spare;
        char hostname[HANDOVER_HOSTNAME_MAX + 1]; /* %h */
        char pad[7];
} MsgHandover;

/* READY: the worker made its user namespace; the manager maps a uid and gid into it
 * (/proc/PID/uid_map, gid_map: one id each, the same inside and out), the job's before the job,
 * or WorkerUser='s ahead (MAPPED). */
#define READY_FLAG_USERNS (UINT32_C(1) << 0)
#define READY_FLAG_ZYGOTE (UINT32_C(1) << 1) /* the zygote's READY: it takes FORKs, no job */
/* the second READY of a worker sent MAPPED: it is in its whole sandbox, waiting for its job */
#define READY_FLAG_SANDBOXED (UINT32_C(1) << 2)
#define READY_FLAGS_ALL (READY_FLAG_USERNS | READY_FLAG_ZYGOTE | READY_FLAG_SANDBOXED)

typedef struct MsgReady {
        MsgHeader hdr;
        uint32_t pid;
        uint32_t flags;
} MsgReady;

/* MAPPED: the ids written into the worker's maps, and the largest journal_size_max a job of
 * Storage=journal may come with (0 otherwise): RLIMIT_AS is set for it, and lowered for the job. */
typedef struct MsgMapped {
        MsgHeader hdr;
        uint32_t uid;
        uint32_t gid;
        uint64_t journal_size_max;
} MsgMapped;

#define JOB_FLAG_STORE (UINT32_C(1) << 0)        /* write the core to the output fd */
#define JOB_FLAG_JOURNAL_CORE (UINT32_C(1) << 1) /* Storage=journal: the core goes into the entry */
#define JOB_FLAG_RETURNED (UINT32_C(1) << 2)     /* a worker before this one gave the job back (the
                                                   * worker logs it; test builds' faults ask it) */
/* The job comes before the crashed process's /proc is read (its task held meanwhile): its record
 * is what the kernel's part of /proc said, its module table empty; the rest comes in DETAILS */
#define JOB_FLAG_DETAILS (UINT32_C(1) << 3)
#define JOB_FLAGS_ALL (JOB_FLAG_STORE | JOB_FLAG_JOURNAL_CORE | JOB_FLAG_RETURNED | JOB_FLAG_DETAILS)

typedef struct MsgJob {
        MsgHeader hdr;
        uint32_t flags;
        uint32_t compression; /* Compression */
        int32_t compress_level;
        uint32_t uid; /* the worker becomes this user before touching the core */
        uint32_t gid;
        uint32_t spare;
        uint64_t external_size_max; /* bytes of core to store; the rest is cut */
        uint64_t process_size_max;  /* bytes of core to process */
        uint64_t journal_size_max;  /* Storage=journal: larger cores stay out of the entry */
        uint32_t n_modules;         /* entries in the module table, <= MODULES_MAX */
        uint32_t spare2;
        /* JOB_FLAG_STORE: the stored file may be this large at most (MaxUse= and KeepFree= as the
         * job starts, the cores then in flight counted); the worker's RLIMIT_FSIZE */
        uint64_t store_size_max;
        uint64_t keep_free; /* stop storing before the file system has less than this free */
        /* the most a SPOOL may be granted (SpoolMax= less what other cores hold as the job
         * starts); 0: ask for none. */
        uint64_t spool_max;
        /* room granted with the job (JOB_SPOOL_GIVEN at most, within spool_max): a core whose
         * stored part fits asks no SPOOL; one that does not asks for all it wants, and the
         * GRANT replaces this */
        uint64_t spool_given;
} MsgJob;

/* No job's spool_max is larger (SpoolMax= is capped at a share of the memory far below). */
#define JOB_SPOOL_MAX (UINT64_C(1) << 44)
/* Spool room that comes with a job, at most: a tiny crash's core (a few hundred KiB) is spooled
 * without a round trip to the manager while its task is held. Each job that may spool holds its
 * room until its result; the manager gives less where SpoolMax= is small (worker-pool.c). */
#define JOB_SPOOL_GIVEN (UINT64_C(4) << 20)

/* The zygote (a coredump-worker started as "coredump-zygote": linked, its seccomp filter
 * compiled, nothing of any crash) makes each worker as a child of coredumpd (CLONE_PARENT):
 * FORK carries the worker's control socket end and the write end of its log pipe, FORKED says
 * its PID (or why not, error < 0). The worker then goes on as a started one does: READY. */
typedef struct MsgFork {
        MsgHeader hdr;
        uint32_t spare;
        uint32_t spare2;
} MsgFork;

typedef struct MsgForked {
        MsgHeader hdr;
        int32_t pid;
        int32_t error;
} MsgForked;

/* SPOOL (worker) and GRANT (manager): bytes of spool asked, and granted. */
typedef struct MsgSpool {
        MsgHeader hdr;
        uint64_t bytes;
} MsgSpool;

/* Every file the worker writes but the core (its memfds: the analysis, a large journal entry)
 * fits in this; RLIMIT_FSIZE is never set lower. */
#define WORKER_FSIZE_FLOOR (2 * (uint64_t) RECORD_MAX)

/* Why a stored core is incomplete or missing. */
typedef enum CoreState {
        CORE_COMPLETE = 0,
        CORE_TRUNCATED_LIMIT = 1,  /* cut at ExternalSizeMax / ProcessSizeMax */
        CORE_TRUNCATED_EOF = 2,    /* the stream ended before the ELF headers said it would */
        CORE_UNKNOWN_END = 3,      /* not a parsable ELF core: stored as received */
} CoreState;

typedef struct MsgResult {
        MsgHeader hdr;
        int32_t error;    /* 0 or negative errno: output not usable (e.g. -ENOSPC) */
        uint32_t state;   /* CoreState */
        uint64_t bytes_in;  /* core bytes received */
        uint64_t bytes_out; /* bytes written to the output */
        uint64_t expected;  /* core size announced by its ELF headers, 0 if unknown */
        /* from the core's notes (untrusted; checked by the manager) */
        uint32_t has_siginfo, has_prstatus, has_psinfo;
        int32_t signo, code, tid;
        uint32_t n_threads;
        char fname[17];
        char pad[3];
        uint32_t peak_rss_kib; /* the worker's peak resident memory so far */
        uint32_t store_stop;   /* StoreStop: why storing stopped before the core's end */
        uint32_t spare;
        uint64_t spooled;      /* bytes the spool held (0: compressed while receiving) */
} MsgResult;

/* Why the worker stopped storing a core (it still reads on, for the stack traces). */
typedef enum StoreStop {
        STORE_STOP_NONE = 0,
        STORE_STOP_ROOM = 1, /* the job's store_size_max reached */
        STORE_STOP_FREE = 2, /* the file system was about to go below KeepFree= */
        STORE_STOP_MAX = STORE_STOP_FREE,
} StoreStop;

/* What a stop means, for the record (COREDUMP_PROCESSING_ERROR); NULL for none or unknown. */
const char *store_stop_to_string(uint32_t stop);

/* RETURNED: why the job could not be started (negative errno); the connection comes with it. */
typedef struct MsgReturned {
        MsgHeader hdr;
        int32_t error;
        uint32_t spare;
} MsgReturned;

/* DETAILS: the crash's whole record and its module files, for a JOB_FLAG_DETAILS job; carries
 * [record memfd, module table memfd], then, if n_modules > 0, their queue in MODULES. */
typedef struct MsgDetails {
        MsgHeader hdr;
        uint32_t n_modules; /* <= MODULES_MAX */
        uint32_t spare;
} MsgDetails;

enum { DETAILS_FD_RECORD, DETAILS_FD_MODULES, DETAILS_FDS };

typedef struct MsgCommit {
        MsgHeader hdr;
        CoreFacts facts;
} MsgCommit;

typedef struct MsgRecorded {
        MsgHeader hdr;
        int32_t error; /* 0, or why there is no journal entry (negative errno) */
        uint32_t spare;
} MsgRecorded;

enum { JOB_FD_CONN, JOB_FD_OUT, JOB_FD_RECORD, JOB_FD_MODULES, JOB_FDS };
/* the most any message carries: a job's, or a request to the forward launcher (launch-proto.h) */
#define PROTO_FDS_MAX 6

/* Sends one message with up to PROTO_FDS_MAX fds. */
int proto_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds);
/* Pure: whether len bytes are a message of this type and size (header checked). */
int proto_check(const void *buf, size_t len, uint32_t type, size_t size);
/* Receives one message; fails with -EBADMSG unless it is exactly `size` bytes, has the magic
 * and `type`, and carries exactly n_fds fds (which are returned, O_CLOEXEC). Fds beyond n_fds
 * are never opened (the kernel drops them); those of a refused message are closed. Returns 0,
 * -ECONNRESET on EOF, -EAGAIN if nothing is there yet. */
int proto_recv(int sock, uint32_t type, void *msg, size_t size, int *ret_fds, size_t n_fds);
/* The type of the message waiting on sock, left there (MSG_PEEK): 0, -EAGAIN if none is there
 * yet, -ECONNRESET on EOF, -EBADMSG if it has no valid header. */
int proto_peek_type(int sock, uint32_t *ret_type);
#define PROTO_RESETS_RETRIED_MAX 1U
/* Whether a receive that failed with errno should be tried again: after EINTR, and once after
 * ECONNRESET. A seqpacket peer that closed while messages of ours were still unread in its
 * queue leaves ECONNRESET on our socket, reported by the next receive in place of what the peer
 * sent before it closed (still queued, read by the receive after it). (On a stream socket the
 * reset comes after the queued data, in place of end of file.) */
bool proto_recv_again(unsigned *resets);
/* proto_recv() once a message is there, waiting up to timeout_msec for it (-1: without end);
 * -ETIMEDOUT if none came. */
int proto_wait(int sock, uint32_t type, void *msg, size_t size, int *ret_fds, size_t n_fds, int timeout_msec);
