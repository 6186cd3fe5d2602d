/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pool of single-use workers: posix_spawn, READY, jobs and their fds, the message permits,
 * death and respawn. It knows nothing of crashes: a job's owner hears through its WorkerJobOps.
 * Manager (root): spawns, signals and reaps only its own workers. */
#include <assert.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/socket.h>
#include <sys/wait.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#include "collector.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "memfd-slot.h"
#include "pidfd-util.h"
#include "spawn.h"
#include "test-fault.h"
#include "time-util.h"
#include "uid-class.h"
#include "fd-util.h"
#include "worker-log.h"
#include "worker-pool.h"
#include "zygote.h"

/* Together the rooms given with MaxParallel= jobs take at most 1/SPOOL_GIVEN_SHARE of SpoolMax=:
 * small cores in flight leave the large ones most of it. */
#define SPOOL_GIVEN_SHARE 4U
/* What a busy worker may have queued at its exit: SPOOL, STORED, RESULT. */
#define BUSY_MESSAGES_MAX 3U
/* How long the stopping daemon waits for its killed workers, all together. */
#define WORKERS_STOP_WAIT_USEC (2 * USEC_PER_SEC)

/* It is gone, its spool with it: the room goes back to the others. Not before: a worker a core
 * took over may keep its spool's memfds, sealed at the room given and granted, as long as it
 * lives, whatever it says (SPOOL, STORED, RESULT). */
static void worker_spool_return(Worker *w) {
        Manager *m = w->manager;

        assert(m->spool_held >= w->spool_granted);
        m->spool_held -= w->spool_granted;
        if (w->spool_granted > 0)
                log_debug("Worker %d: %" PRIu64 " bytes of spool room back, %" PRIu64 " held by all", (int) w->pid,
                          w->spool_granted, m->spool_held);
        w->spool_granted = 0;
}

/* The room a job comes with (MsgJob.spool_given). */
static uint64_t spool_given(const Manager *m, uint64_t budget, uint64_t spool_max) {
        uint64_t share = budget / ((uint64_t) SPOOL_GIVEN_SHARE * MAX(m->config.max_parallel, 1U));

        return MIN(MIN(spool_max, share), JOB_SPOOL_GIVEN);
}

static void worker_free(Worker *w) {
        Manager *m = w->manager;

        worker_spool_return(w);
        worker_log_close(w);
        sd_event_source_disable_unref(w->control_source);
        sd_event_source_disable_unref(w->child_source);
        sd_event_source_disable_unref(w->ready_timer);
        safe_close(w->control_fd);
        safe_close(w->pidfd);
        LIST_REMOVE(workers, m->workers, w);
        m->n_workers--;
        if (w->state == WORKER_FINISHED)
                m->n_workers_finished--;
        if (w->watch.stuck) {
                m->n_workers_stuck--;
                m->n_workers_stuck_holding -= !w->watch.in_exit;
        }
        free(w);
}

/* A job's owner, as worker_detach() hands it back: told, once, that the worker is lost. */
typedef struct JobOwner {
        const WorkerJobOps *ops;
        void *owner;
} JobOwner;

/* The job's module files: the worker has its own copies for good (or is gone). */
static void worker_release_modules(Worker *w) {
        if (w->modules)
                module_handoff_let_go(w->modules);
        w->modules = NULL;
}

static JobOwner worker_detach(Worker *w) {
        JobOwner o = { w->ops, w->owner };

        worker_release_modules(w); /* before the owner may go */
        w->ops = NULL;
        w->owner = NULL;
        return o;
}

static void owner_lost(JobOwner o, const char *why) {
        if (o.ops)
                o.ops->lost(o.owner, why);
}

/* Kills the worker, then tells its job's owner (after: the owner may free what the worker's
 * bookkeeping points to). */
static void worker_fail(Worker *w, const char *kill_why, const char *lost_why) {
        JobOwner o = worker_detach(w);

        worker_kill(w, kill_why);
        owner_lost(o, lost_why);
}

static void finished_timer_arm(Manager *m);

static void worker_finished(Worker *w) {
        if (w->state != WORKER_FINISHED) {
                w->manager->n_workers_finished++;
                w->check_usec = now_usec(CLOCK_MONOTONIC) + PROCESS_STUCK_AFTER_USEC;
                w->check_interval = PROCESS_STUCK_AFTER_USEC;
                w->state = WORKER_FINISHED;
                finished_timer_arm(w->manager);
        }
        w->control_source = sd_event_source_disable_unref(w->control_source);
        w->control_fd = safe_close(w->control_fd);
}

static void fault_events_release(Worker *w);

void worker_kill(Worker *w, const char *why) {
        fault_events_release(w); /* its end is still to be reaped */
        log_warning("Killing worker %d: %s", (int) w->pid, why);
        (void) pidfd_send_sig(w->pidfd, SIGKILL);
        if (w->killed_usec == 0)
                w->killed_usec = now_usec(CLOCK_MONOTONIC);
        worker_detach(w);
        worker_finished(w);
}

static int write_id_map(pid_t pid, const char *which, unsigned id) {
        char path[64], map[64];
        _cleanup_close_ int fd = -EBADF;

        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, which);
        snprintf(map, sizeof map, "%u %u 1\n", id, id);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return loop_write(fd, map, strlen(map));
}

/* The worker's user namespace gets the one uid and gid it runs as, the same inside and out
 * (what the journal sees through SCM_CREDENTIALS is the real user). Written from here because it
 * takes CAP_SETUID and CAP_SETGID in the parent namespace, which the worker gave up by entering
 * its own; the worker is our child, not reaped, so its PID names it. Each map can be written
 * once: a worker is mapped for one user, its job's or WorkerUser= ahead. */
static int worker_map_ids(Worker *w, uid_t uid, gid_t gid) {
        int r;

        if (!w->userns)
                return 0; /* user namespaces are off here: the worker drops to uid itself */
        r = write_id_map(w->pid, "uid_map", (unsigned) uid);
        if (r >= 0)
                r = write_id_map(w->pid, "gid_map", (unsigned) gid);
        return r;
}

/* Whether a worker just READY is mapped to WorkerUser= ahead: not while a crash waits (it may be
 * a plain user's, which needs a worker of that user) or the daemon stops; at most SpareWorkers=
 * less one spares are (idle or on the way), and never the last spare that is not, so that a plain
 * user's crash finds one too, and the pool, which counts every spare, starts one for it when it
 * waits; not for a user other programs run as (nobody: they could stop the spare, and with it
 * the next system crash); and no more after MAP_AHEAD_FAILURES_MAX spares in a row died on the
 * way (until a reload). */
static bool pool_maps_ahead(const Worker *w) {
        Manager *m = w->manager;
        unsigned mapped = 0, unmapped = 0, root;

        if (!w->userns || m->stopping || m->worker_user_shared || m->map_ahead_failures >= MAP_AHEAD_FAILURES_MAX ||
            m->pool_ops->jobs_waiting(m, &root) > 0)
                return false;
        for (const Worker *o = m->workers; o; o = o->workers_next) {
                if (o == w || (o->state != WORKER_IDLE && o->state != WORKER_STARTING && o->state != WORKER_MAPPING))
                        continue;
                if (o->mapped)
                        mapped++;
                else
                        unmapped++;
        }
        return unmapped > 0 && mapped + 1 < m->config.spare_workers;
}

/* Maps WorkerUser= into the worker's user namespace now and says so (MAPPED): it enters its whole
 * sandbox before any crash, off the time a crashed task is held, and says READY again. */
static void worker_map_ahead(Worker *w) {
        Manager *m = w->manager;
        MsgMapped msg = {
                .hdr = { PROTO_MAGIC, MSG_MAPPED },
                .uid = m->worker_uid,
                .gid = m->worker_gid,
                .journal_size_max = m->config.storage == STORAGE_JOURNAL ? m->config.journal_size_max : 0,
        };
        char why[128];
        int r;

        /* from here, its death counts against mapping ahead (on_child()); the ready timer starts
         * again for its sandbox */
        w->mapped = true;
        w->mapped_uid = msg.uid;
        w->mapped_gid = msg.gid;
        w->state = WORKER_MAPPING;
        r = sd_event_source_set_time_relative(w->ready_timer, WORKER_READY_TIMEOUT_USEC);
        r = r ?: sd_event_source_set_enabled(w->ready_timer, SD_EVENT_ONESHOT);
        r = r ?: worker_map_ids(w, msg.uid, msg.gid);
        if (r >= 0)
                r = proto_send(w->control_fd, &msg, sizeof msg, NULL, 0);
        if (r < 0) {
                snprintf(why, sizeof why, "could not be mapped uid %u ahead: %s", (unsigned) msg.uid, strerror(-r));
                worker_kill(w, why);
                return;
        }
        log_debug("Worker %d: mapped uid %u ahead", (int) w->pid, (unsigned) msg.uid);
}

/* READY's flags: the first may say it has a user namespace; the second, after MAPPED, says it is
 * sandboxed and nothing else. */
static bool ready_flags_valid(const Worker *w, uint32_t flags) {
        return w->state == WORKER_MAPPING ? flags == READY_FLAG_SANDBOXED : (flags & ~READY_FLAG_USERNS) == 0;
}

static void worker_now_idle(Worker *w) {
        log_debug("Worker %d: waiting for a job", (int) w->pid);
        w->state = WORKER_IDLE;
        w->ready_seen = true;
        w->ready_timer = sd_event_source_disable_unref(w->ready_timer);
        /* waiting for its job now: the sample is taken before it gets one (unless a crash waits
         * for a worker, which worker_ready() hands to it at once) */
        worker_watchdog_baseline(w);
        w->manager->spawn_failures = 0;
        w->manager->pool_ops->worker_ready(w->manager);
}

/* READY, or the second READY of a worker mapped ahead; the ready timer bounds both. */
static void on_ready(Worker *w) {
        MsgReady msg;
        int r = proto_recv(w->control_fd, MSG_READY, &msg, sizeof msg, NULL, 0);

        if (r == -EAGAIN)
                return;
        if (r < 0 || msg.pid != (uint32_t) w->pid || !ready_flags_valid(w, msg.flags)) {
                worker_kill(w, r == -ECONNRESET ? "exited before it was ready" : "broke the protocol before its job");
                return;
        }
        if (w->state == WORKER_STARTING) {
                w->userns = msg.flags & READY_FLAG_USERNS;
                if (pool_maps_ahead(w)) {
                        worker_map_ahead(w);
                        return;
                }
        } else
                w->manager->map_ahead_failures = 0;
        worker_now_idle(w);
}

/* The worker's analysis: at most ANALYSIS_BYTES_MAX, checked field by field when merged. */
static int read_analysis(int fd, Record *ret) {
        struct stat st;
        ssize_t n;

        *ret = (Record) {};
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t) st.st_size > ANALYSIS_BYTES_MAX)
                return -EBADMSG;
        ret->buf = malloc((size_t) st.st_size + 1);
        if (!ret->buf)
                return -ENOMEM;
        ret->cap = (size_t) st.st_size + 1;
        n = pread(fd, ret->buf, (size_t) st.st_size, 0);
        if (n != st.st_size) {
                record_free(ret);
                return n < 0 ? negative_errno() : -EBADMSG;
        }
        ret->len = (size_t) n;
        return 0;
}

static bool control_closed(int fd);

static void on_result(Worker *w) {
        _cleanup_close_ int analysis_fd = -EBADF;
        _cleanup_(record_free) Record analysis = {};
        MsgResult res;
        int r = proto_recv(w->control_fd, MSG_RESULT, &res, sizeof res, &analysis_fd, 1);

        if (r == -EAGAIN)
                return;
        if (r < 0) {
                worker_fail(w, r == -ECONNRESET ? "exited without a result" : "sent a malformed result",
                            "the worker failed");
                return;
        }
        w->result_seen = true; /* nothing more before COMMIT (a forwarded crash's worker waits for it) */
        if (!w->ops)
                return;
        if (read_analysis(analysis_fd, &analysis) < 0)
                log_warning("Worker %d (%s): its stack traces are unreadable, ignored", (int) w->pid, w->label);
        w->ops->result(w->owner, &res, &analysis); /* → worker_commit() */
}

static void on_recorded(Worker *w) {
        MsgRecorded rec;
        JobOwner o;
        int r = proto_recv(w->control_fd, MSG_RECORDED, &rec, sizeof rec, NULL, 0);

        if (r == -EAGAIN)
                return;
        if (r < 0 || rec.error > 0 || rec.error < -4095 || rec.spare != 0) {
                worker_fail(w, r == -ECONNRESET ? "exited before writing the journal entry" : "sent a malformed message",
                            "the worker failed");
                return;
        }
        o = worker_detach(w);
        worker_finished(w); /* single use: it exits now */
        if (o.ops)
                o.ops->recorded(o.owner, rec.error);
}

int worker_commit(Worker *w, const CoreFacts *facts) {
        MsgCommit msg = { .hdr = { PROTO_MAGIC, MSG_COMMIT }, .facts = *facts };
        int r = proto_send(w->control_fd, &msg, sizeof msg, NULL, 0);

        if (r < 0) {
                worker_detach(w);
                worker_kill(w, "could not be sent the commit");
                return r;
        }
        w->state = WORKER_COMMITTING;
        worker_watchdog_start(w); /* it may have been off while the crash was being forwarded */
        return 0;
}

#ifdef MANAGER_TEST_FAULTS
/* Test builds only: COREDUMPD_TEST_FAULT=grant-after-details holds the GRANT to a worker whose
 * DETAILS is due until they are sent, so that it finds them before its GRANT. True if held. */
static bool fault_grant_hold(Worker *w, const MsgSpool *grant) {
        if (!w->details_due || !test_fault_is("grant-after-details"))
                return false;
        w->fault_grant = *grant;
        w->fault_grant_held = true;
        return true;
}

static int send_grant(Worker *w, const MsgSpool *grant);

static int fault_grant_release(Worker *w) {
        if (!w->fault_grant_held)
                return 0;
        w->fault_grant_held = false;
        return send_grant(w, &w->fault_grant);
}

/* COREDUMPD_TEST_FAULT=early-unread: nothing of a worker whose DETAILS is due (its messages, its
 * end) is read until DETAILS is sent, as when both come in the loop's iteration that sends it. */
static void fault_events_hold(Worker *w) {
        if (!w->details_due || !test_fault_is("early-unread") ||
            sd_event_source_get_enabled(w->child_source, &w->fault_child_enabled) < 0)
                return;
        (void) sd_event_source_set_enabled(w->control_source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(w->child_source, SD_EVENT_OFF);
        w->fault_events_held = true;
}

static void fault_events_release(Worker *w) {
        if (!w->fault_events_held)
                return;
        w->fault_events_held = false;
        (void) sd_event_source_set_enabled(w->control_source, SD_EVENT_ON);
        (void) sd_event_source_set_enabled(w->child_source, w->fault_child_enabled);
}
#else
static bool fault_grant_hold(Worker *w, const MsgSpool *grant) {
        return false;
}

static int fault_grant_release(Worker *w) {
        return 0;
}

static void fault_events_hold(Worker *w) {
}

static void fault_events_release(Worker *w) {
}
#endif

/* The memfd a GRANT carries: sized to what was granted and sealed so that neither it nor the
 * worker (whose filter refuses memfd_create) can hold more of the machine's memory in its spool,
 * whatever a core it reads makes of it. */
static int grant_memfd(uint64_t bytes) {
        _cleanup_close_ int fd = memfd_slot_new("coredump-spool");
        int r;

        if (fd < 0)
                return fd;
        r = memfd_slot_limit(fd, bytes);
        if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
                r = negative_errno();
        return r < 0 ? r : TAKE_FD(fd);
}

static int send_grant(Worker *w, const MsgSpool *grant) {
        _cleanup_close_ int fd = grant_memfd(grant->bytes);

        if (fd < 0)
                return fd;
        return proto_send(w->control_fd, grant, sizeof *grant, &fd, 1);
}

/* SPOOL: as much as asked, as far as its ceiling and what SpoolMax= has left allow. */
static void on_spool(Worker *w) {
        Manager *m = w->manager;
        uint64_t budget = config_spool_max(&m->config, m->physical_memory), left;
        MsgSpool ask, grant = { .hdr = { PROTO_MAGIC, MSG_SPOOL_GRANT } };
        int r = proto_recv(w->control_fd, MSG_SPOOL, &ask, sizeof ask, NULL, 0);

        if (r == -EAGAIN)
                return;
        if (r < 0 || w->spool_asked || w->stored_seen) {
                worker_fail(w, r == -ECONNRESET ? "exited without a result" : "asked for a spool out of turn",
                            "the worker failed");
                return;
        }
        w->spool_asked = true;
        /* the room that came with the job stays counted too: its memfd stays the worker's */
        left = budget > m->spool_held ? budget - m->spool_held : 0;
        grant.bytes = MIN(MIN(ask.bytes, w->spool_ceiling), left);
        w->spool_granted += grant.bytes;
        m->spool_held += grant.bytes;
        log_debug("Worker %d: %" PRIu64 " bytes of spool granted (%" PRIu64 " asked)", (int) w->pid, grant.bytes,
                  ask.bytes);
        if (fault_grant_hold(w, &grant))
                return;
        r = send_grant(w, &grant);
        if (r < 0)
                worker_fail(w, "could not be sent its spool", "the worker failed");
}

/* STORED: the core is written and synced; its owner keeps the facts in case no RESULT follows. */
static void on_stored(Worker *w) {
        MsgResult res;
        int r = proto_recv(w->control_fd, MSG_STORED, &res, sizeof res, NULL, 0);

        if (r == -EAGAIN)
                return;
        if (r < 0 || w->stored_seen) {
                worker_fail(w, r == -ECONNRESET ? "exited without a result" : "said twice its core is stored",
                            "the worker failed");
                return;
        }
        w->stored_seen = true;
        if (w->ops && w->ops->stored)
                w->ops->stored(w->owner, &res);
}

/* Which file a descriptor is and how it is open: the job's connection (a socket, the kernel's
 * pipe, or /dev/null for a record-only job) as at the send, which only RETURNED may bring back.
 * statx with AT_STATX_DONT_SYNC, so that telling a file on FUSE given back instead asks its
 * server nothing (closing it may still wait for it, as for any descriptor a worker sends). */
static int conn_id(int fd, ConnId *ret) {
        struct statx sx;
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0 || statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &sx) < 0 ||
            (sx.stx_mask & (STATX_TYPE | STATX_INO)) != (STATX_TYPE | STATX_INO))
                return -EIO;
        *ret = (ConnId) { .flags = flags & (O_ACCMODE | O_PATH), .type = sx.stx_mode & S_IFMT,
                          .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor), .ino = sx.stx_ino };
        return 0;
}

static void job_conn_note(Worker *w, int conn) {
        w->conn_known = conn_id(conn, &w->conn) >= 0;
        if (!w->conn_known)
                log_debug("Worker %d: its job's connection cannot be told again: it may not give it back", (int) w->pid);
}

static bool job_conn_is(const Worker *w, int fd) {
        ConnId id;

        return w->conn_known && conn_id(fd, &id) >= 0 && id.flags == w->conn.flags && id.type == w->conn.type &&
               id.dev == w->conn.dev && id.ino == w->conn.ino;
}

/* The worker gave its job back and exits: killed all the same, so that nothing it kept reads on
 * beside the next one (retired: that end is no failure); the module files and the spool room are
 * the owner's and the pool's again. Its owner, detached. */
static JobOwner worker_end_given_back(Worker *w) {
        JobOwner o;

        (void) pidfd_send_sig(w->pidfd, SIGKILL);
        w->retired = true;
        w->modules = NULL; /* the owner's again, for the next worker */
        worker_spool_return(w);
        o = worker_detach(w);
        worker_finished(w);
        return o;
}

/* RETURNED: the job back, before a byte of its core was read (its first message, and nothing
 * after it is taken): the connection, if it is the job's own, goes to the owner for another
 * worker. */
static void on_returned(Worker *w) {
        _cleanup_close_ int conn = -EBADF;
        MsgReturned msg;
        JobOwner o;
        /* out of its phase, its descriptor is not even opened (the worker fails either way) */
        int r = proto_recv(w->control_fd, MSG_RETURNED, &msg, sizeof msg, &conn,
                           !w->spool_asked && !w->stored_seen ? 1 : 0);

        if (r == -EAGAIN)
                return;
        if (r < 0 || w->spool_asked || w->stored_seen || msg.error >= 0 || msg.error < -4095 || msg.spare != 0 ||
            !job_conn_is(w, conn) || !w->ops || !w->ops->returned) {
                worker_fail(w, r == -ECONNRESET ? "exited without a result" : "gave back a job it could not",
                            "the worker failed");
                return;
        }
        log_warning_errno(msg.error, "Worker %d (%s): could not start its job (%m), and gave it back", (int) w->pid,
                          w->label);
        o = worker_end_given_back(w);
        o.ops->returned(o.owner, TAKE_FD(conn), msg.error);
}

/* While busy: RESULT, or before it, once each and in this order, SPOOL and STORED (the header says
 * which; each handler checks the whole message and its turn); or, first and instead of all of
 * them, RETURNED. */
static void on_busy(Worker *w) {
        uint32_t type = 0;

        if (w->result_seen) {
                worker_fail(w, control_closed(w->control_fd) ? "exited before its commit" : "sent a message after its result",
                            "the worker failed");
                return;
        }
        /* Nothing queued: wait for the next wakeup. Reading on regardless would race the worker:
         * a message arriving between this look and the read below would be read as RESULT. A
         * peek that fails otherwise (end of file, a short header) is on_result()'s to report. */
        if (proto_peek_type(w->control_fd, &type) == -EAGAIN)
                return;
        if (type == MSG_RETURNED) {
                on_returned(w);
                return;
        }
        worker_release_modules(w); /* it read the core: they are not needed again */
        if (w->details_due && (type == MSG_STORED || type == MSG_RESULT)) {
                worker_fail(w, "sent its result before its crash's details", "the worker broke the protocol");
                return;
        }
        if (type == MSG_SPOOL)
                on_spool(w);
        else if (type == MSG_STORED)
                on_stored(w);
        else
                on_result(w);
}

/* The permit table: in each phase exactly one message is allowed, once (each handler takes only
 * its own type at its exact size; while busy, before RESULT, SPOOL and then STORED, once each,
 * and nothing after RESULT until COMMIT; RETURNED ends the phase, and the worker's use); in any
 * other phase any message is a violation. */
static const struct {
        WorkerState state;
        void (*handle)(Worker *w);
} permits[] = {
        { WORKER_STARTING, on_ready },      /* MSG_READY */
        { WORKER_MAPPING, on_ready },       /* MSG_READY, sandboxed */
        { WORKER_BUSY, on_busy },           /* MSG_RESULT, or MSG_SPOOL and MSG_STORED once before it;
                                             * or MSG_RETURNED first, and alone; a JOB_FLAG_DETAILS
                                             * job's STORED and RESULT only after its DETAILS */
        { WORKER_COMMITTING, on_recorded }, /* MSG_RECORDED */
};

/* The worker's end is closed (it died, or closed it): nothing is queued, the next read is EOF. */
static bool control_closed(int fd) {
        unsigned resets = 0;
        ssize_t n;
        char b;

        do
                n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        while (n < 0 && proto_recv_again(&resets));
        return n == 0;
}

static int on_control(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;

        for (size_t i = 0; i < ELEMENTSOF(permits); i++)
                if (permits[i].state == w->state) {
                        permits[i].handle(w);
                        return 0;
                }
        worker_fail(w, control_closed(fd) ? "closed its control socket" : "sent a message out of turn",
                    "the worker broke the protocol");
        return 0;
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Worker *w = userdata;
        Manager *m = w->manager;
        bool clean = si->si_code == CLD_EXITED && si->si_status == 0;
        JobOwner o;

        worker_log_close(w); /* its last words first */
        /* Its last messages may still be queued: exit and messages can arrive in one iteration
         * (STORED and RESULT; a SPOOL waits for its answer, but may be there too). */
        for (unsigned i = 0; i < BUSY_MESSAGES_MAX && w->state == WORKER_BUSY; i++)
                on_busy(w);
        if (w->state == WORKER_COMMITTING)
                on_recorded(w);
        o = worker_detach(w);

        if (!w->ready_seen && !w->retired) {
                m->spawn_failures++;
                if (w->mapped && ++m->map_ahead_failures == MAP_AHEAD_FAILURES_MAX)
                        log_warning("%u spares in a row died while mapped ahead: spares wait unmapped from now on",
                                    MAP_AHEAD_FAILURES_MAX);
        }
        if (!clean && !w->retired)
                zygote_renew(m); /* it may have been made to fail on purpose: a new layout */
        if (!clean || o.ops)
                log_full_errno(o.ops || w->state != WORKER_FINISHED ? LOG_ERR : LOG_DEBUG, 0, "Worker %d %s %d",
                               (int) w->pid, si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                               si->si_status);
        worker_free(w);
        owner_lost(o, "the worker died");
        pool_fill(m);
        return 0;
}

/* Starts the worker binary (or the zygote): /dev/null on stdin and stdout, the log pipe on stderr,
 * the control socket on WORKER_CONTROL_FD, and a clean environment but for logging (and sanitizer
 * and fault settings in test builds). posix_spawn() rather than fork(): a fork here cost the manager
 * more CPU per crash than anything else it does. The worker sets its parent-death signal itself. */
int worker_exec(Manager *m, int sock, int log, bool zygote, pid_t *ret) {
        /* the zygote's name is as long as the worker's: its children write theirs over it */
        char *argv_worker[] = { (char *) "coredump-worker", NULL };
        char *argv_zygote[] = { (char *) "coredump-zygote", (char *) "--zygote", NULL };
        const char *keep[] = { "COREDUMP_SOCKET_LOG_LEVEL", "ASAN_OPTIONS", "UBSAN_OPTIONS", "COREDUMP_WORKER_FAULT" };
        char *envp[ELEMENTSOF(keep) + 2] = {};
        char envbuf[ELEMENTSOF(keep)][256];
        SpawnFds fds = { .sock = sock, .sock_target = WORKER_CONTROL_FD, .stderr_fd = log, .null_stdio = true };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(keep); i++) {
                const char *v = getenv(keep[i]);
                if (v && snprintf(envbuf[i], sizeof envbuf[i], "%s=%s", keep[i], v) < (int) sizeof envbuf[i])
                        envp[n++] = envbuf[i];
        }
        /* the zygote binds every symbol once, at its start: each worker it forks would otherwise
         * resolve, and write into its copy of the GOT, every function it calls first */
        if (zygote)
                envp[n++] = (char *) "LD_BIND_NOW=1";
        return spawn_helper(m->worker_exec, zygote ? argv_zygote : argv_worker, envp, &fds, ret);
}

static int on_ready_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Worker *w = userdata;

        w->ready_timer = sd_event_source_disable_unref(w->ready_timer);
        if (w->state == WORKER_STARTING || w->state == WORKER_MAPPING)
                worker_kill(w, "not ready in time"); /* counted as a failed start when it exits */
        return 0;
}

static int worker_spawn(Manager *m) {
        int pair[2], logp[2];
        Worker *w;
        pid_t pid;
        int r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return negative_errno();
        if (pipe2(logp, O_CLOEXEC) < 0) {
                r = negative_errno();
                safe_close(pair[0]);
                safe_close(pair[1]);
                return r;
        }
        /* forked by the zygote (no exec, no linking); started on its own if there is none */
        r = zygote_fork(m, pair[1], logp[1], &pid);
        if (r == -ENOTCONN)
                r = worker_exec(m, pair[1], logp[1], false, &pid);
        if (r < 0) {
                safe_close(pair[0]);
                safe_close(pair[1]);
                safe_close(logp[0]);
                safe_close(logp[1]);
                return r;
        }
        safe_close(pair[1]);
        safe_close(logp[1]);

        w = calloc(1, sizeof *w);
        if (!w) {
                (void) kill(pid, SIGKILL);
                safe_close(pair[0]);
                safe_close(logp[0]);
                return -ENOMEM;
        }
        *w = (Worker) { .manager = m, .state = WORKER_STARTING, .pid = pid, .control_fd = pair[0], .log_fd = -EBADF,
                        .account_uid = UID_INVALID };
        LIST_PREPEND(workers, m->workers, w);
        m->n_workers++;
        /* Not reaped before we watch it, so the pid still names our child here. */
        w->pidfd = pidfd_open_pid(pid);
        r = w->pidfd < 0 ? w->pidfd : 0;
        if (r >= 0)
                r = fd_set_nonblock(logp[0], true);
        if (r >= 0)
                r = worker_log_watch(w, logp[0]);
        else
                safe_close(logp[0]);
        if (r >= 0)
                r = sd_event_add_child_pidfd(m->event, &w->child_source, w->pidfd, WEXITED, on_child, w);
        if (r >= 0)
                r = sd_event_add_io(m->event, &w->control_source, w->control_fd, EPOLLIN, on_control, w);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &w->ready_timer, CLOCK_MONOTONIC, WORKER_READY_TIMEOUT_USEC, 0,
                                               on_ready_timeout, w);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                worker_free(w);
                return r;
        }
        return 0;
}

static int on_respawn_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->respawn_timer = sd_event_source_disable_unref(m->respawn_timer);
        m->spawn_failures = 0;
        pool_fill(m);
        return 0;
}

void pool_init(Manager *m, const PoolOps *ops) {
        assert(ops && ops->worker_ready && ops->jobs_waiting);
        m->pool_ops = ops;
}

/* Stuck workers that may hold their memory left out of the count, at most. */
static unsigned stuck_holding_uncounted_max(void) {
#ifdef MANAGER_TEST_FAULTS
        if (test_fault_is("stuck-holding-counted")) /* the bound reached with one, as many uids would */
                return 0;
#endif
        return WORKERS_STUCK_HOLDING_UNCOUNTED_MAX;
}

/* The workers MaxParallel= + SpareWorkers= bound: all but the stuck ones, those that may hold
 * their memory up to a bound. */
static unsigned pool_counted(const Manager *m) {
        unsigned holding = m->n_workers_stuck_holding;

        return m->n_workers - (m->n_workers_stuck - holding) - MIN(holding, stuck_holding_uncounted_max());
}

/* ... and for root's crashes: no stuck worker counts. */
static unsigned pool_counted_for_root(const Manager *m) {
        return m->n_workers - m->n_workers_stuck;
}

void pool_count_stuck(const Manager *m, StuckCount *s) {
        if (m->n_workers_stuck == 0)
                return;
        for (const Worker *w = m->workers; w; w = w->workers_next)
                if (w->watch.stuck)
                        stuck_count_add(s, w->account_uid);
}

/* FINISHED workers not reaped, each when its time comes: stuck ones found (the pool filled
 * again then), the others looked at later. */
static int on_finished_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool found = false;

        for (Worker *w = m->workers; w; w = w->workers_next) {
                if (w->state != WORKER_FINISHED || w->watch.stuck || w->check_usec > now)
                        continue;
                if (exit_watch_look(&w->watch, w->pid, now, w->killed_usec)) {
                        found = true;
                        m->n_workers_stuck++;
                        m->n_workers_stuck_holding += !w->watch.in_exit;
                        log_warning("Worker %d (%s) %s: it no longer counts against MaxParallel=", (int) w->pid,
                                    w->label[0] ? w->label : "no job",
                                    w->watch.in_exit ? "waits in its exit, in the close of a file (a file system that "
                                                       "does not answer)"
                                                     : "did not end when killed (it waits in the kernel)");
                        continue;
                }
                /* found asleep in its exit once: looked at again as soon as that would make it stuck */
                w->check_interval = w->watch.asleep_since > 0 ? PROCESS_STUCK_AFTER_USEC
                                                              : MIN(w->check_interval * 2, PROCESS_STUCK_CHECK_MAX_USEC);
                w->check_usec = now + w->check_interval;
        }
        if (found)
                pool_fill(m);
        finished_timer_arm(m);
        return 0;
}

static void finished_timer_arm(Manager *m) {
        uint64_t next = UINT64_MAX, armed;
        int r;

        for (const Worker *w = m->n_workers_finished > 0 ? m->workers : NULL; w; w = w->workers_next)
                if (w->state == WORKER_FINISHED && !w->watch.stuck)
                        next = MIN(next, w->check_usec);
        if (next == UINT64_MAX) {
                if (m->finished_timer)
                        (void) sd_event_source_set_enabled(m->finished_timer, SD_EVENT_OFF);
                return;
        }
        if (!m->finished_timer)
                r = sd_event_add_time(m->event, &m->finished_timer, CLOCK_MONOTONIC, next, USEC_PER_MSEC,
                                      on_finished_timer, m);
        else if (sd_event_source_get_enabled(m->finished_timer, NULL) > 0 &&
                 sd_event_source_get_time(m->finished_timer, &armed) >= 0 && armed <= next)
                return; /* due first already */
        else {
                r = sd_event_source_set_time(m->finished_timer, next);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->finished_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to arm the finished workers' timer (the pool is filled at the next "
                                  "crash): %m");
}

/* Whether one more worker may start: within MaxParallel= + SpareWorkers=, counted as
 * pool_counted() says; or, while root's crashes wait (root of them), one for each of them past
 * the spares, counted as pool_counted_for_root() says. */
static bool pool_has_room(const Manager *m, unsigned ready_or_starting, unsigned spares, unsigned root) {
        unsigned limit = m->config.max_parallel + m->config.spare_workers;

        if (pool_counted(m) < limit)
                return true;
        return root > 0 && ready_or_starting < spares + root && pool_counted_for_root(m) < limit;
}

void pool_fill(Manager *m) {
        unsigned ready_or_starting = 0, want, spares = m->stopping ? 0 : m->config.spare_workers, root = 0;

        for (Worker *w = m->workers; w; w = w->workers_next)
                ready_or_starting += w->state == WORKER_STARTING || w->state == WORKER_MAPPING || w->state == WORKER_IDLE;
        want = spares + m->pool_ops->jobs_waiting(m, &root);

        while (ready_or_starting < want && pool_has_room(m, ready_or_starting, spares, root)) {
                int r;

                if (m->spawn_failures >= WORKER_SPAWN_FAILURES_MAX) {
                        if (!m->respawn_timer) {
                                log_error("Workers keep failing to start (see above); retrying in %llus",
                                          (unsigned long long) (WORKER_RESPAWN_DELAY_USEC / USEC_PER_SEC));
                                (void) sd_event_add_time_relative(m->event, &m->respawn_timer, CLOCK_MONOTONIC,
                                                                  WORKER_RESPAWN_DELAY_USEC, 0, on_respawn_timer, m);
                        }
                        return;
                }
                r = worker_spawn(m);
                if (r < 0) {
                        log_error_errno(r, "Failed to start a worker: %m");
                        m->spawn_failures++;
                        continue;
                }
                ready_or_starting++;
        }
}

/* Whether an idle w takes a job of uid and gid: mapped ahead to them, or, when !mapped_ahead, not
 * mapped yet. */
static bool worker_takes(const Worker *w, bool mapped_ahead, uid_t uid, gid_t gid) {
        if (w->state != WORKER_IDLE || w->mapped != mapped_ahead)
                return false;
        return !mapped_ahead || (w->mapped_uid == uid && w->mapped_gid == gid);
}

/* Of the idle workers that take a job of uid and gid, the one that has waited longest (the list
 * is newest first), or NULL. */
static Worker *pool_oldest_idle(Manager *m, bool mapped_ahead, uid_t uid, gid_t gid) {
        Worker *found = NULL;

        for (Worker *w = m->workers; w; w = w->workers_next)
                if (worker_takes(w, mapped_ahead, uid, gid))
                        found = w;
        return found;
}

Worker *pool_take_idle(Manager *m, uid_t uid, gid_t gid) {
        Worker *w = pool_oldest_idle(m, true, uid, gid) ?: pool_oldest_idle(m, false, uid, gid);

        if (!w)
                pool_fill(m);
        return w;
}

bool pool_has_idle(Manager *m, uid_t uid, gid_t gid) {
        return pool_oldest_idle(m, true, uid, gid) || pool_oldest_idle(m, false, uid, gid);
}

void pool_replace_taken(Manager *m) {
        if (!pool_oldest_idle(m, false, UID_INVALID, GID_INVALID)) /* (ids unused when not mapped ahead) */
                pool_fill(m);
}

/* How many module files a worker gets: those still queued (none once let go). */
static uint32_t modules_given(const ModuleHandoff *mods) {
        return mods && mods->queue >= 0 ? (uint32_t) mods->n : 0;
}

/* The module table (paths, in descriptor order) in a sealed memfd. */
static int module_table_memfd(const ModuleHandoff *mods) {
        _cleanup_close_ int fd = memfd_create("coredump-modules", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        size_t n = modules_given(mods);
        int r;

        if (fd < 0)
                return negative_errno();
        if (n > 0 && (r = loop_write(fd, mods->entries, n * sizeof(ModuleEntry))) < 0)
                return r;
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

/* MODULES right behind the job: the queue of the module files, which the worker takes them from
 * (the manager never does: modules.h). */
static int send_modules(Worker *w, const ModuleHandoff *mods) {
        MsgModules msg = { .hdr = { PROTO_MAGIC, MSG_MODULES }, .count = modules_given(mods) };

        return msg.count == 0 ? 0 : proto_send(w->control_fd, &msg, sizeof msg, &mods->queue, 1);
}

#ifdef MANAGER_TEST_FAULTS
/* Test builds only (meson -Dworker-test-faults=true): COREDUMPD_TEST_FAULT=job-send kills the
 * first worker given a job, and waits for its end, just before the job is sent, as when a worker
 * dies at that moment. */
static void fault_job_send(Worker *w) {
        static bool fired;

        if (fired || !test_fault_is("job-send"))
                return;
        fired = true;
        (void) pidfd_send_sig(w->pidfd, SIGKILL);
        (void) waitid((idtype_t) P_PIDFD, (id_t) w->pidfd, &(siginfo_t) {}, WEXITED | WNOWAIT);
}

/* COREDUMPD_TEST_FAULT=map-refused: no job's ids can be mapped into a worker then (mapping
 * ahead still works), as a uid that is not ours to map is refused (EPERM). */
static bool fault_map_refused(void) {
        return test_fault_is("map-refused");
}
#else
static void fault_job_send(Worker *w) {
}

static bool fault_map_refused(void) {
        return false;
}
#endif

/* The errors of a send to a worker that is gone: it died, or was killed, after its READY. */
static bool worker_gone_error(int r) {
        return r == -EPIPE || r == -ECONNRESET || r == -ECONNREFUSED || r == -ENOTCONN;
}

int worker_start_job(Worker *w, WorkerJob *job, const WorkerJobOps *ops, void *owner) {
        Manager *m = w->manager;
        uint64_t spool_budget = config_spool_max(&m->config, m->physical_memory);
        _cleanup_close_ int table_fd = module_table_memfd(job->modules);
        int fds[JOB_FDS] = { job->conn_fd, job->out_fd, job->record_fd, table_fd };
        int r;

        assert(ops && ops->result && ops->recorded && ops->lost);
        job->msg.hdr = (MsgHeader) { PROTO_MAGIC, MSG_JOB };
        job->msg.n_modules = modules_given(job->modules);
        /* a compressed core that is stored may be spooled: its task goes before the compression */
        job->msg.spool_max = 0;
        if ((job->msg.flags & JOB_FLAG_STORE) && job->msg.compression != COMPRESSION_NONE && spool_budget > m->spool_held)
                job->msg.spool_max = spool_budget - m->spool_held;
        w->spool_ceiling = job->msg.spool_max;
        job->msg.spool_given = spool_given(m, spool_budget, job->msg.spool_max);
        w->spool_granted = job->msg.spool_given; /* returned with the rest at its end */
        m->spool_held += w->spool_granted;
        if (table_fd < 0) {
                worker_kill(w, "could not be given its module table");
                return table_fd;
        }
        /* one mapped ahead was taken for this very user (pool_take_idle()) */
        assert(!w->mapped || (job->msg.uid == w->mapped_uid && job->msg.gid == w->mapped_gid));
        r = w->mapped ? 0 : w->userns && fault_map_refused() ? -EPERM : worker_map_ids(w, job->msg.uid, job->msg.gid);
        if (r < 0) {
                log_warning_errno(r, "Worker %d: could not map uid %u into its user namespace: %m", (int) w->pid,
                                  (unsigned) job->msg.uid);
                worker_kill(w, "could not be mapped its job's user");
                /* a worker that is gone: another may take the job; ids refused (not ours to map):
                 * every other would be refused too, and killed for it */
                return r == -ENOENT || r == -ESRCH ? -EAGAIN : r;
        }
        fault_job_send(w);
        job_conn_note(w, job->conn_fd); /* what RETURNED may bring back */
        r = proto_send(w->control_fd, &job->msg, sizeof job->msg, fds, JOB_FDS);
        if (r >= 0)
                r = send_modules(w, job->modules);
        if (r < 0) {
                log_warning_errno(r, "Worker %d: could not be sent its job: %m", (int) w->pid);
                worker_kill(w, "could not be given its job");
                /* A worker takes every module file before it reads a byte of the core, and leaves
                 * them queued until then (worker.c): the connection, the output and the module
                 * files are as they were, for the next worker. */
                return worker_gone_error(r) ? -EAGAIN : r;
        }
        /* the worker has its copies (of the module files, their queue) now; ours go at its first
         * message but RETURNED (or its end) */
        w->modules = job->modules;
        w->details_due = job->msg.flags & JOB_FLAG_DETAILS;
        fault_events_hold(w);
        w->state = WORKER_BUSY;
        w->account_uid = job->account_uid;
        w->ops = ops;
        w->owner = owner;
        snprintf(w->label, sizeof w->label, "%s", job->label);
        log_debug("Worker %d: took the job of the %s", (int) w->pid, w->label);
        worker_watchdog_start(w);
        return 0;
}

/* Whether RETURNED is the worker's next message, and one it may send now. */
static bool returned_queued(Worker *w) {
        uint32_t type;

        return !w->spool_asked && !w->stored_seen && proto_peek_type(w->control_fd, &type) >= 0 && type == MSG_RETURNED;
}

int worker_send_details(Worker *w, int record_fd, ModuleHandoff *modules) {
        _cleanup_close_ int table_fd = module_table_memfd(modules);
        MsgDetails msg = { .hdr = { PROTO_MAGIC, MSG_DETAILS }, .n_modules = modules_given(modules) };
        int fds[DETAILS_FDS] = { record_fd, table_fd };
        int r;

        assert(w->state == WORKER_BUSY && !w->modules);
        fault_events_release(w); /* (read in a later iteration of the loop) */
        r = table_fd;
        if (r >= 0)
                r = proto_send(w->control_fd, &msg, sizeof msg, fds, DETAILS_FDS);
        if (r >= 0)
                r = send_modules(w, modules);
        if (r >= 0)
                r = fault_grant_release(w);
        if (r < 0 && worker_gone_error(r) && returned_queued(w)) {
                /* it gave the job back and went before this: as on_returned(), but the owner
                 * kept its own copy of the connection (the one queued is not taken) */
                log_warning("Worker %d (%s): gave its job back before its crash's details", (int) w->pid, w->label);
                (void) worker_end_given_back(w);
                return -EAGAIN;
        }
        if (r < 0) {
                log_warning_errno(r, "Worker %d: could not be sent its crash's details: %m", (int) w->pid);
                return worker_gone_error(r) ? -ECONNRESET : r;
        }
        /* as with a job's: ours go at its next message but RETURNED (or its end) */
        w->modules = modules;
        w->details_due = false;
        worker_watchdog_start(w); /* watched again (not while it waited for this) */
        return 0;
}

void pool_retire_idle(Manager *m) {
        Worker *w, *n;

        LIST_FOREACH_SAFE(workers, w, n, m->workers)
                if (w->state == WORKER_IDLE || w->state == WORKER_STARTING || w->state == WORKER_MAPPING) {
                        w->retired = true; /* a starting one that goes now did not fail to start */
                        worker_finished(w); /* closing its control socket makes it exit */
                }
}

/* Whether the killed worker ended within timeout_msec, reaped then. */
static bool worker_reaped_within(const Worker *w, int timeout_msec) {
        struct pollfd p = { .fd = w->pidfd, .events = POLLIN };
        siginfo_t si = {};

        if (poll(&p, 1, MAX(timeout_msec, 0)) <= 0)
                return false;
        return waitid((idtype_t) P_PIDFD, (id_t) w->pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid > 0;
}

void pool_free_all(Manager *m) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + WORKERS_STOP_WAIT_USEC;

        for (Worker *w = m->workers; w; w = w->workers_next)
                (void) pidfd_send_sig(w->pidfd, SIGKILL);
        while (m->workers) {
                Worker *w = m->workers;
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                owner_lost(worker_detach(w), "the daemon is stopping");
                /* Reaped: nothing of ours outlives the daemon, not even as a zombie; but a worker
                 * stuck in the kernel, where SIGKILL does not reach (closing a file of a FUSE server
                 * that does not answer FLUSH), would hold the daemon's stop for as long. */
                if (!worker_reaped_within(w, now < deadline ? (int) ((deadline - now) / USEC_PER_MSEC) : 0))
                        log_warning("Worker %d did not end when killed (it waits in the kernel, for a file system "
                                    "that does not answer): left to end when that one does", (int) w->pid);
                worker_free(w);
        }
        zygote_stop(m);
}

int pool_resolve_user(Manager *m) {
        struct passwd *pw;

        errno = 0;
        pw = getpwnam(m->config.worker_user);
        if (!pw) {
                log_warning("Worker user '%s' does not exist (install the sysusers.d entry); using nobody",
                            m->config.worker_user);
                pw = getpwnam("nobody");
                if (!pw)
                        return log_error_errno(-ESRCH, "Neither '%s' nor 'nobody' exists", m->config.worker_user);
        }
        if (pw->pw_uid == 0)
                return log_error_errno(-EPERM, "Refusing to run workers as root (WorkerUser=%s)", m->config.worker_user);
        m->worker_uid = pw->pw_uid;
        m->worker_gid = pw->pw_gid;
        m->worker_user_shared = strcmp(pw->pw_name, "nobody") == 0 || pw->pw_uid == UID_CLASS_NOBODY;
        return 0;
}
