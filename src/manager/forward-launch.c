/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd's side of the forward launcher: started once from coredump-forward --launcher
 * while coredumpd still has CAP_SYS_ADMIN, then asked, one request per forwarded crash, to start
 * coredump-forward as coredumpd's child. Manager (root): spawns, asks and reaps that one process. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forward-launch.h"
#include "launch-proto.h"
#include "log.h"
#include "manager.h"
#include "pidfd-util.h"
#include "spawn.h"

static int on_launcher_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Manager *m = userdata;

        log_error("The forward launcher (PID %d) exited (%s %d): crashes are no longer forwarded into containers "
                  "until coredumpd is restarted", (int) m->launcher_pid, si->si_code == CLD_EXITED ? "status" : "signal",
                  si->si_status);
        m->launcher_source = sd_event_source_disable_unref(m->launcher_source);
        m->launcher_pidfd = safe_close(m->launcher_pidfd);
        m->launcher_sock = safe_close(m->launcher_sock);
        m->launcher_pid = 0;
        return 0;
}

/* Starts the launcher with its end of the pair on LAUNCHER_SOCKET_FD and coredumpd's stdio. */
static int spawn_launcher(Manager *m, int sock, pid_t *ret) {
        char *argv[] = { (char *) "coredump-forward", (char *) "--launcher", NULL };
        SpawnFds fds = { .sock = sock, .sock_target = LAUNCHER_SOCKET_FD, .stderr_fd = -EBADF };

        return spawn_helper(m->forward_exec, argv, environ, &fds, ret);
}

void forward_launcher_start(Manager *m) {
        LaunchReply ready;
        int pair[2], r;

        if (!m->forward_exec[0])
                return;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
                log_warning_errno(negative_errno(), "Cannot start the forward launcher, crashes will not be forwarded "
                                  "into containers: %m");
                return;
        }
        r = spawn_launcher(m, pair[1], &m->launcher_pid);
        safe_close(pair[1]);
        if (r >= 0) {
                m->launcher_pidfd = pidfd_open_pid(m->launcher_pid);
                r = m->launcher_pidfd < 0 ? m->launcher_pidfd : 0;
        }
        if (r >= 0) /* up, named, and down to what it keeps */
                r = proto_wait(pair[0], MSG_LAUNCHED, &ready, sizeof ready, NULL, 0, LAUNCH_REPLY_TIMEOUT_MSEC);
        if (r >= 0 && (ready.error != 0 || ready.pid != 0 || ready.seq != 0))
                r = -EBADMSG;
        if (r >= 0)
                r = sd_event_add_child_pidfd(m->event, &m->launcher_source, m->launcher_pidfd, WEXITED,
                                             on_launcher_exit, m);
        if (r < 0) {
                log_warning_errno(r, "Cannot start the forward launcher, crashes will not be forwarded into "
                                  "containers: %m");
                if (m->launcher_pid > 0) {
                        (void) kill(m->launcher_pid, SIGKILL);
                        (void) waitpid(m->launcher_pid, NULL, 0);
                }
                m->launcher_pidfd = safe_close(m->launcher_pidfd);
                m->launcher_pid = 0;
                safe_close(pair[0]);
                return;
        }
        m->launcher_sock = pair[0];
}

static void forward_launcher_kill(Manager *m);

bool forward_launcher_ready(const Manager *m) {
        return m->launcher_sock >= 0;
}

int forward_launcher_request(Manager *m, const char *name, int core, int fields, int root, int pidns, int userns,
                             int pidfd, pid_t *ret) {
        LaunchRequest req = { .hdr = { PROTO_MAGIC, MSG_LAUNCH } };
        int fds[LAUNCH_FDS_MAX] = { core, fields, root, pidns };
        size_t n = 4;
        LaunchReply reply;
        int r;

        if (m->launcher_sock < 0)
                return -ENOENT;
        if (strlen(name) >= sizeof req.name)
                return -ENAMETOOLONG;
        strcpy(req.name, name);
        if (userns >= 0) {
                req.flags |= LAUNCH_FLAG_USERNS;
                fds[n++] = userns;
        }
        if (pidfd >= 0) {
                req.flags |= LAUNCH_FLAG_PIDFD;
                fds[n++] = pidfd;
        }
        req.seq = ++m->launcher_seq ?: ++m->launcher_seq; /* 0 is its ready message's */
        r = proto_send(m->launcher_sock, &req, sizeof req, fds, n);
        r = r ?: proto_wait(m->launcher_sock, MSG_LAUNCHED, &reply, sizeof reply, NULL, 0, LAUNCH_REPLY_TIMEOUT_MSEC);
        if (r >= 0 && reply.seq != req.seq)
                r = -EBADMSG;
        if (r < 0) {
                /* a late answer would be taken for the next request's: this launcher is done */
                log_error_errno(r, "The forward launcher did not answer, stopping it: crashes are no longer "
                                "forwarded into containers until coredumpd is restarted: %m");
                forward_launcher_kill(m);
                return r;
        }
        if (reply.error < 0)
                return reply.error;
        if (reply.pid == 0 || reply.pid > INT32_MAX)
                return -EBADMSG;
        *ret = (pid_t) reply.pid;
        return 0;
}

static void forward_launcher_kill(Manager *m) {
        if (m->launcher_pidfd >= 0)
                (void) pidfd_send_sig(m->launcher_pidfd, SIGKILL);
        forward_launcher_stop(m);
}

void forward_launcher_stop(Manager *m) {
        m->launcher_source = sd_event_source_disable_unref(m->launcher_source);
        m->launcher_sock = safe_close(m->launcher_sock);
        if (m->launcher_pidfd >= 0)
                (void) waitid((idtype_t) P_PIDFD, (id_t) m->launcher_pidfd, &(siginfo_t) {}, WEXITED);
        m->launcher_pidfd = safe_close(m->launcher_pidfd);
        m->launcher_pid = 0;
}
