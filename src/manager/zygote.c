/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd's side of the zygote: one coredump-worker started as "coredump-zygote", asked for
 * each worker; a zygote that fails is replaced, and past ZYGOTE_FAILURES_MAX workers are started
 * with posix_spawn as before. Manager (root): signals and reaps only its zygote. */
#include <assert.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "pidfd-util.h"
#include "proto.h"
#include "worker-pool.h"
#include "zygote.h"

void zygote_init(Zygote *z) {
        *z = (Zygote) { .pidfd = -EBADF, .fd = -EBADF };
}

static void zygote_failed(Manager *m, const char *why) {
        Zygote *z = &m->zygote;

        z->failures++;
        log_warning("The worker zygote %s%s", why,
                    z->failures >= ZYGOTE_FAILURES_MAX ? "; starting each worker on its own from now on" : "");
        zygote_stop(m);
}

void zygote_stop(Manager *m) {
        Zygote *z = &m->zygote;

        z->child_source = sd_event_source_disable_unref(z->child_source);
        if (z->pidfd >= 0) {
                (void) pidfd_send_sig(z->pidfd, SIGKILL);
                (void) waitid((idtype_t) P_PIDFD, (id_t) z->pidfd, &(siginfo_t) {}, WEXITED);
        }
        z->pidfd = safe_close(z->pidfd);
        z->fd = safe_close(z->fd);
        z->pid = 0;
        z->ready = false;
        z->forks = 0;
}

void zygote_renew(Manager *m) {
        if (m->zygote.ready)
                log_debug("Replacing the worker zygote after a worker's abnormal end");
        zygote_stop(m); /* not a failure of the zygote's */
        (void) zygote_start(m);
}

static int on_zygote_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Manager *m = userdata;

        m->zygote.child_source = sd_event_source_disable_unref(m->zygote.child_source);
        m->zygote.pidfd = safe_close(m->zygote.pidfd); /* reaped by sd-event */
        zygote_failed(m, si->si_code == CLD_EXITED ? "exited" : "was killed");
        return 0;
}

int zygote_start(Manager *m) {
        Zygote *z = &m->zygote;
        int pair[2], r;
        MsgReady ready;

        if (!m->config.worker_zygote) /* (the default) each worker its own exec, and secrets */
                return -ENOTCONN;
        if (z->ready)
                return 0;
        if (z->failures >= ZYGOTE_FAILURES_MAX)
                return -ENOTCONN;
        assert(z->pidfd < 0 && z->fd < 0);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return negative_errno();
        r = worker_exec(m, pair[1], STDERR_FILENO, true, &z->pid);
        safe_close(pair[1]);
        z->fd = pair[0];
        if (r < 0) {
                z->fd = safe_close(z->fd);
                zygote_failed(m, "could not be started");
                return r;
        }
        /* not reaped before we watch it: the PID names our child */
        z->pidfd = pidfd_open_pid(z->pid);
        r = z->pidfd < 0 ? z->pidfd : proto_wait(z->fd, MSG_READY, &ready, sizeof ready, NULL, 0, (int) (ZYGOTE_READY_TIMEOUT_USEC / USEC_PER_MSEC));
        if (r >= 0 && (ready.pid != (uint32_t) z->pid || ready.flags != READY_FLAG_ZYGOTE))
                r = -EBADMSG;
        if (r >= 0)
                r = sd_event_add_child_pidfd(m->event, &z->child_source, z->pidfd, WEXITED, on_zygote_exit, m);
        if (r < 0) {
                if (z->pidfd < 0) { /* cannot watch it: kill it by PID, ours and not reaped */
                        (void) kill(z->pid, SIGKILL);
                        (void) waitpid(z->pid, NULL, 0);
                }
                zygote_failed(m, "did not get ready");
                return r;
        }
        z->ready = true;
        log_debug("Worker zygote %d ready", (int) z->pid);
        return 0;
}

int zygote_fork(Manager *m, int control, int log, pid_t *ret) {
        Zygote *z = &m->zygote;
        MsgFork msg = { .hdr = { PROTO_MAGIC, MSG_FORK } };
        MsgForked forked;
        siginfo_t si = {};
        int fds[] = { control, log }, r;

        if (zygote_start(m) < 0)
                return -ENOTCONN;
        r = proto_send(z->fd, &msg, sizeof msg, fds, ELEMENTSOF(fds));
        if (r >= 0)
                r = proto_wait(z->fd, MSG_FORKED, &forked, sizeof forked, NULL, 0, (int) (ZYGOTE_FORK_TIMEOUT_USEC / USEC_PER_MSEC));
        if (r < 0) {
                zygote_failed(m, "did not answer");
                return -EIO; /* a child it made may hold the descriptors */
        }
        if (forked.error < 0 || forked.pid <= 0) {
                log_warning_errno(forked.error < 0 ? forked.error : -EBADMSG, "The worker zygote could not fork: %m");
                return -ENOTCONN; /* this one worker the other way; the zygote may do the next */
        }
        /* it must be a child of ours (CLONE_PARENT), alive: else the zygote lies or is broken */
        if (waitid(P_PID, (id_t) forked.pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
                zygote_failed(m, "named a process that is not a new worker");
                return -EIO;
        }
        if (si.si_pid != 0) { /* ours, but gone already: reap it, start this one the other way */
                (void) waitpid(forked.pid, NULL, 0);
                log_warning("A worker forked by the zygote exited at once");
                return -ENOTCONN;
        }
        *ret = forked.pid;
        z->failures = 0;
        if (++z->forks >= ZYGOTE_FORKS_MAX)
                zygote_stop(m); /* a new one, with a new layout, for the next worker */
        return 0;
}
