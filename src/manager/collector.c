/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of the per-crash collector (collector.h): fork, deadline, what the child
 * delivered, and children stuck past their deadline. Manager (root): signals and reaps only its
 * own collector children. */
#include <assert.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector.h"
#include "crash.h"
#include "log.h"
#include "manager.h"
#include "modules.h"
#include "pidfd-util.h"
#include "proto.h"
#include "worker-pool.h"

#define COLLECT_STRAY_MAX 4 /* messages read at one wakeup from a child's socket, which carries none */

static void collector_free(Collector *col) {
        Manager *m = col->manager;

        sd_event_source_disable_unref(col->io_source);
        sd_event_source_disable_unref(col->child_source);
        safe_close(col->sock);
        safe_close(col->pidfd);
        if (col->shared)
                (void) munmap(col->shared, sizeof *col->shared);
        if (col->stalled)
                m->n_collectors_stalled--;
        if (m->collector_spare == col)
                m->collector_spare = NULL;
        LIST_REMOVE(collectors, m->collectors, col);
        free(col);
}

static unsigned stalled_of(Manager *m, uid_t uid) {
        unsigned n = 0;

        for (Collector *col = m->collectors; col; col = col->collectors_next)
                n += col->stalled && col->uid == uid;
        return n;
}

/* Stuck collectors into s (stuck.h): looked at (now: CLOCK_MONOTONIC) from
 * PROCESS_STUCK_AFTER_USEC after their crash let them go, until reaped. */
static void count_stuck(Manager *m, uint64_t now, StuckCount *s) {
        for (Collector *col = m->collectors; col; col = col->collectors_next) {
                bool was = col->watch.stuck;

                if (col->reaped || col->harvested_usec == 0 || now - col->harvested_usec < PROCESS_STUCK_AFTER_USEC ||
                    !exit_watch_look(&col->watch, col->pid, now, col->killed_usec))
                        continue;
                if (!was)
                        log_debug("Collector %d of uid %u waits in its exit (a file system that does not answer)",
                                  (int) col->pid, (unsigned) col->uid);
                stuck_count_add(s, col->uid);
        }
}

/* Whether the crash's collector opens no mapped file; if for stuck processes, how many
 * (*ret_stuck): its uid's, or uids (*ret_all). */
static bool modules_withheld(Crash *c, unsigned *ret_stuck, bool *ret_all) {
        StuckCount s = { .uid = c->info.ruid };

        *ret_stuck = 0;
        *ret_all = false;
        if (c->after_collect != AFTER_STREAM)
                return true; /* no core comes: nothing to trace */
        count_stuck(c->manager, now_usec(CLOCK_MONOTONIC), &s);
        pool_count_stuck(c->manager, &s);
        if (s.mine >= MODULES_STUCK_PER_UID_MAX)
                *ret_stuck = s.mine;
        else if (c->info.ruid != 0 && s.n_uids >= MODULES_STUCK_UIDS_MAX) {
                *ret_stuck = s.n_uids;
                *ret_all = true;
        }
        return *ret_stuck > 0;
}

/* The child sends nothing on its socket: it shuts its end down once everything is published.
 * What it may send all the same is dropped unread, any descriptor with it unopened. */
static void receive_until_eof(Collector *col) {
        for (size_t i = 0; i < COLLECT_STRAY_MAX && !col->eof; i++) {
                char b;
                ssize_t k = recv(col->sock, &b, sizeof b, MSG_DONTWAIT);

                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (k <= 0) {
                        col->eof = true;
                        /* the child published everything before it shut its end down */
                        __atomic_thread_fence(__ATOMIC_ACQUIRE);
                }
        }
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Collector *col = userdata;
        Crash *c = col->crash;

        receive_until_eof(col);
        if (!col->eof)
                return 0;
        col->io_source = sd_event_source_disable_unref(col->io_source);
        if (c)
                crash_collected(c);
        return 0;
}

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Collector *col = userdata;

        col->reaped = true;
        col->child_source = sd_event_source_disable_unref(col->child_source);
        if (si->si_code != CLD_EXITED || si->si_status != 0)
                log_debug("Collector %d %s %d", (int) col->pid,
                          si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal", si->si_status);
        if (col->stalled)
                log_info("Collector %d of uid %u ended after its deadline: the file system it waited for answered "
                         "or went away", (int) col->pid, (unsigned) col->uid);
        if (!col->crash)
                collector_free(col);
        /* otherwise EOF on the socket follows (or came): on_io finishes the crash */
        return 0;
}

static void kill_child(Collector *col);

/* A new spare: its shared memory, its socket, the fork. */
static int collector_spawn(Manager *m, Collector **ret) {
        _cleanup_close_ int child_sock = -EBADF;
        Collector *col = calloc(1, sizeof *col);
        int sv[2], r;
        pid_t pid, self;

        if (!col)
                return -ENOMEM;
        *col = (Collector) { .manager = m, .pidfd = -EBADF, .sock = -EBADF };
        LIST_PREPEND(collectors, m->collectors, col);
        col->shared = mmap(NULL, sizeof *col->shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (col->shared == MAP_FAILED) {
                col->shared = NULL;
                collector_free(col);
                return -ENOMEM;
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                r = negative_errno();
                collector_free(col);
                return r;
        }
        col->sock = sv[0];
        child_sock = sv[1];
        self = getpid();
        pid = fork();
        if (pid == 0)
                collect_spare_main(child_sock, col->shared, self);
        /* this child's alone: no later fork (another collector) gets a writable copy */
        if (pid > 0 && madvise(col->shared, sizeof *col->shared, MADV_DONTFORK) < 0)
                log_debug_errno(negative_errno(), "Collector %d: its shared memory stays inheritable: %m", (int) pid);
        col->pid = pid;
        /* not reaped before we watch it: the pid still names our child */
        col->pidfd = pid < 0 ? negative_errno() : pidfd_open_pid(pid);
        r = col->pidfd < 0 ? col->pidfd : sd_event_add_child_pidfd(m->event, &col->child_source, col->pidfd, WEXITED,
                                                                    on_child_exit, col);
        if (r < 0) {
                if (pid > 0) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, NULL, 0);
                }
                collector_free(col);
                return r;
        }
        *ret = col;
        return 0;
}

void collector_prefork(Manager *m) {
        Collector *col;
        int r;

        if (m->collector_spare || m->stopping)
                return;
        r = collector_spawn(m, &col);
        if (r < 0)
                log_debug_errno(r, "No spare collector for now (one is forked with the next crash): %m");
        else
                m->collector_spare = col;
}

/* What the child is given of the manager's reads (COLLECT_REQUEST_FIELDS), checked to fit before
 * any collector is chosen. */
static int collector_request(const CrashMeta *meta, Record *ret) {
        static const char *const names[] = COLLECT_REQUEST_FIELDS;
        RecordField f;

        *ret = (Record) {};
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (record_find(meta->fields.buf, meta->fields.len, names[i], &f) &&
                    record_add(ret, names[i], f.value, f.value_len, 0) < 0) {
                        record_free(ret);
                        return -ENOMEM;
                }
        if (ret->len > sizeof ((CollectShared *) NULL)->request) {
                record_free(ret);
                return -E2BIG;
        }
        return 0;
}

/* The request into the spare's shared memory (the child reads it after GO), then GO. */
static int collector_go(Collector *col, const Crash *c, const Record *req, uint32_t flags) {
        CollectGo go = { .magic = COLLECT_GO_MAGIC, .flags = flags };
        int fds[COLLECT_GO_FDS_MAX] = { c->proc_dir };
        size_t n = 1;

        memcpy(col->shared->request, req->buf, req->len);
        col->shared->request_len = (uint32_t) req->len;
        snprintf(col->shared->exe, sizeof col->shared->exe, "%s", c->meta.exe);
        if (c->leader_dir >= 0) {
                go.flags |= COLLECT_GO_LEADER;
                fds[n++] = c->leader_dir;
        }
        if (c->files_root >= 0) {
                go.flags |= COLLECT_GO_FILES_ROOT;
                fds[n++] = c->files_root;
        }
        __atomic_thread_fence(__ATOMIC_RELEASE);
        return proto_send(col->sock, &go, sizeof go, fds, n);
}

/* Whether the uid's crashes get a collector now; why says why not. */
static bool collector_allowed(Manager *m, uid_t uid, char *why, size_t size) {
        unsigned mine = stalled_of(m, uid);

        if (mine >= COLLECTORS_STALLED_PER_UID_MAX) {
                snprintf(why, size, "not read: %u earlier collection%s for uid %u did not finish (a file system its "
                         "processes use does not answer)", mine, mine == 1 ? "" : "s", (unsigned) uid);
                return false;
        }
        if (uid != 0 && m->n_collectors_stalled >= COLLECTORS_STALLED_MAX) {
                snprintf(why, size, "not read: %u collections of other crashes did not finish", m->n_collectors_stalled);
                return false;
        }
        return true;
}

int collector_start(Crash *c, char *why, size_t size) {
        _cleanup_(record_free) Record req = {};
        Manager *m = c->manager;
        Collector *col = m->collector_spare;
        unsigned stuck;
        bool stuck_all;
        uint32_t flags;
        int r;

        assert(!c->collector && c->proc_dir >= 0);
        if (!collector_allowed(m, c->info.ruid, why, size))
                return 0;
        flags = modules_withheld(c, &stuck, &stuck_all) ? COLLECT_GO_NO_MODULES : 0;
        r = collector_request(&c->meta, &req);
        if (r < 0) {
                snprintf(why, size, "not read: the collector could not be given the crash (%s)", strerror(-r));
                return r;
        }
        /* the spare forked ahead (replaced when a crash ends); else, or if it is gone, one now */
        m->collector_spare = NULL;
        if (col) {
                col->crash = c;
                r = collector_go(col, c, &req, flags);
                if (r < 0) {
                        log_debug_errno(r, "The spare collector %d did not take its crash, forking another: %m",
                                        (int) col->pid);
                        col->crash = NULL;
                        kill_child(col); /* reaped and freed by on_child_exit */
                        col = NULL;
                }
        }
        if (!col) {
                r = collector_spawn(m, &col);
                if (r >= 0) {
                        col->crash = c;
                        r = collector_go(col, c, &req, flags);
                }
        }
        if (r >= 0) {
                col->uid = c->info.ruid;
                col->stuck_seen = stuck;
                col->stuck_all = stuck_all;
        }
        if (r >= 0)
                r = sd_event_add_io(m->event, &col->io_source, col->sock, EPOLLIN, on_io, col);
        if (r < 0) {
                if (col) {
                        col->crash = NULL;
                        kill_child(col); /* reaped and freed by on_child_exit */
                }
                snprintf(why, size, "not read: the collector could not be started (%s)", strerror(-r));
                return r;
        }
        c->collector = col;
        return 1;
}

/* The fields the child completed, each checked, into the crash's metadata. */
static void harvest_fields(Collector *col, CrashMeta *meta) {
        uint32_t len = __atomic_load_n(&col->shared->record_len, __ATOMIC_ACQUIRE);
        RecordField f;
        size_t pos = 0;
        char name[FIELD_NAME_MAX + 1];

        if (len > sizeof col->shared->record)
                return;
        while (record_next(col->shared->record, len, &pos, &f) > 0) {
                snprintf(name, sizeof name, "%.*s", (int) MIN(f.name_len, (size_t) FIELD_NAME_MAX), f.name);
                (void) record_add(&meta->fields, name, f.value, f.value_len, 0);
        }
        if (col->shared->overflow)
                meta->fields.overflow = true;
}

/* The table the child published, and its socket: it keeps the files it opened until that is
 * closed, and queues them for the worker when asked (collector_queue_ask(); modules.h). */
static void harvest_modules(Collector *col, CrashMeta *meta) {
        CollectShared *sh = col->shared;
        uint32_t n = sh->n_modules;
        ModuleHandoff *h;

        if (n > 0 && n <= MODULES_MAX && (h = module_handoff_new())) {
                for (size_t i = 0; i < n; i++) {
                        memcpy(&h->entries[i], &sh->entries[i], sizeof(ModuleEntry));
                        h->entries[i].path[MODULE_PATH_MAX - 1] = 0;
                }
                h->n = n;
                h->collector = TAKE_FD(col->sock);
                meta->modules = h;
        }
        if (sh->omitted > 0 && sh->omitted <= UINT32_MAX)
                (void) record_addf(&meta->fields, "COREDUMP_MODULES_OMITTED", "%u", (unsigned) sh->omitted);
        if (sh->refused > 0) {
                sh->first_refused[sizeof sh->first_refused - 1] = 0;
                log_debug("Crash of PID %d: %u mapped files not opened for the traces, the first %s: %s",
                          (int) col->crash->info.pid, (unsigned) sh->refused, sh->first_refused,
                          strerror(sh->first_refusal < 0 ? -sh->first_refusal : EINVAL));
        }
}

/* Why a collector opened no mapped file for stuck processes (modules_withheld()). */
static void stuck_reason(const Collector *col, char *why, size_t size) {
        if (col->stuck_all)
                snprintf(why, size, "its mapped files not opened for the traces: %u uids have processes done with "
                         "earlier crashes that wait in their exit (a file system that does not answer a close)",
                         col->stuck_seen);
        else
                snprintf(why, size, "its mapped files not opened for the traces: %u process%s done with earlier "
                         "crashes of uid %u wait%s in %s exit (a file system that does not answer a close)",
                         col->stuck_seen, col->stuck_seen == 1 ? "" : "es", (unsigned) col->uid,
                         col->stuck_seen == 1 ? "s" : "", col->stuck_seen == 1 ? "its" : "their");
}

/* Where a child that has not finished is: "reading its environment", "opening its mapped file X". */
static void stall_reason(Collector *col, char *why, size_t size) {
        CollectStep step = __atomic_load_n(&col->shared->step, __ATOMIC_ACQUIRE);

        col->shared->current[sizeof col->shared->current - 1] = 0;
        if (step == COLLECT_MODULES)
                snprintf(why, size, "stalled %s (at %s) until its deadline; a file system it uses does not answer",
                         collect_step_to_string(step), col->shared->current);
        else
                snprintf(why, size, "stalled %s until its deadline; a file system it maps does not answer",
                         collect_step_to_string(step));
}

static void kill_child(Collector *col) {
        if (col->reaped)
                return;
        (void) pidfd_send_sig(col->pidfd, SIGKILL);
        if (col->killed_usec == 0)
                col->killed_usec = now_usec(CLOCK_MONOTONIC);
}

void collector_harvest(Crash *c, char *why, size_t size) {
        Collector *col = c->collector;
        Manager *m = c->manager;

        if (!col)
                return;
        why[0] = 0;
        receive_until_eof(col); /* its EOF may be queued still */
        harvest_fields(col, &c->meta);
        if (col->eof) {
                harvest_modules(col, &c->meta);
                /* it finished, but could not do all of it (no credentials to take, say) */
                if (col->shared->error < 0 && col->shared->error > -4096)
                        snprintf(why, size, "the collector stopped %s: %s",
                                 collect_step_to_string(col->shared->step), strerror(-col->shared->error));
                else if (col->stuck_seen > 0)
                        stuck_reason(col, why, size);
        } else
                stall_reason(col, why, size);
        c->collector = NULL;
        col->crash = NULL;
        col->io_source = sd_event_source_disable_unref(col->io_source);
        /* unless the crash took it (it keeps module files for the worker), its EOF lets it go */
        col->sock = safe_close(col->sock);
        col->harvested_usec = now_usec(CLOCK_MONOTONIC);
        if (col->reaped) {
                collector_free(col);
                return;
        }
        /* kept until it has exited (on_child_exit); one that did not finish is killed, and counts as
         * stalled against its uid while it is stuck */
        if (!col->eof) {
                col->stalled = true;
                m->n_collectors_stalled++;
                kill_child(col);
        }
}

int collector_queue_make(ModuleHandoff *h) {
        int sv[2];

        if (!h || h->queue >= 0)
                return 0;
        if (h->collector < 0)
                return -ENOTCONN;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        h->queue = sv[0];
        h->collector_end = sv[1];
        return 0;
}

int collector_queue_ask(ModuleHandoff *h) {
        CollectQueue q = { .magic = COLLECT_QUEUE_MAGIC };
        int r;

        if (!h || h->collector_end < 0)
                return 0;
        /* its socket holds nothing else: this never waits */
        r = proto_send(h->collector, &q, sizeof q, &h->collector_end, 1);
        /* ours goes either way: gone with the message, or (a collector gone) the worker's end sees
         * its peer gone and waits for nothing */
        h->collector_end = safe_close(h->collector_end);
        return r;
}

void collector_free_all(Manager *m) {
        while (m->collectors) {
                Collector *col = m->collectors;

                if (col->crash)
                        col->crash->collector = NULL;
                kill_child(col);
                collector_free(col);
        }
}
