/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The zygote (zygote.h): what every worker did after exec and before READY that depends on no
 * crash (the dynamic linking, the seccomp filter's compilation) is done here once; each FORK
 * becomes a child of coredumpd (clone3 with CLONE_PARENT: coredumpd reaps, signals and watches
 * it as a worker it started) that makes its own namespaces, Landlock domain and zstd context,
 * so that no two workers share anything but the read-only image. Worker binary, unsandboxed:
 * touches only its control socket and the descriptors FORK brings. */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clone-sibling.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "proto.h"
#include "sandbox.h"
#include "sink.h"
#include "zygote.h"

#define ZYGOTE_COMM "coredump-zygote"
#define ZYGOTE_FORK_FDS 2 /* the worker's control socket end, its log pipe's write end */

int die_with_manager(void) {
        struct ucred cred;
        socklen_t len = sizeof cred;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return negative_errno();
        if (getsockopt(WORKER_CONTROL_FD, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return negative_errno();
        return getppid() == cred.pid ? 0 : -ESRCH;
}

/* In the new worker: its control socket on WORKER_CONTROL_FD (in place of the zygote's), its log
 * pipe on stderr; the rest is closed by the worker's start. */
static int place_fds(const int fds[ZYGOTE_FORK_FDS]) {
        int control = fcntl(fds[0], F_DUPFD_CLOEXEC, WORKER_CONTROL_FD + 1);

        if (control < 0 || dup2(fds[1], STDERR_FILENO) < 0 || dup2(control, WORKER_CONTROL_FD) < 0)
                return negative_errno();
        safe_close(control);
        return 0;
}

int zygote_run(void) {
        static const int keep[] = { WORKER_CONTROL_FD };
        MsgReady ready = { .hdr = { PROTO_MAGIC, MSG_READY }, .pid = (uint32_t) getpid(), .flags = READY_FLAG_ZYGOTE };
        int r;

        (void) prctl(PR_SET_NAME, ZYGOTE_COMM, 0, 0, 0);
        log_setup(ZYGOTE_COMM);
        r = die_with_manager();
        if (r < 0)
                return log_error_errno(r, "Not started by a live coredumpd: %m");
        r = close_all_fds_except(keep, ELEMENTSOF(keep));
        if (r < 0)
                return log_error_errno(r, "Failed to close stray fds: %m");
        /* the costly part of the seccomp filter, once for every worker */
        r = sandbox_seccomp_prepare();
        if (r < 0)
                return log_error_errno(r, "Failed to compile the seccomp filter: %m");
        sink_zstd_count_cpus();
        r = proto_send(WORKER_CONTROL_FD, &ready, sizeof ready, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to announce readiness: %m");

        for (;;) {
                MsgForked forked = { .hdr = { PROTO_MAGIC, MSG_FORKED } };
                int fds[ZYGOTE_FORK_FDS] = { -EBADF, -EBADF };
                MsgFork msg;
                pid_t pid;

                r = proto_wait(WORKER_CONTROL_FD, MSG_FORK, &msg, sizeof msg, fds, ZYGOTE_FORK_FDS, -1);
                if (r == -ECONNRESET)
                        return 0; /* coredumpd let us go */
                if (r < 0 || msg.spare != 0 || msg.spare2 != 0) {
                        for (size_t i = 0; i < ZYGOTE_FORK_FDS; i++)
                                safe_close(fds[i]);
                        return log_error_errno(r < 0 ? r : -EBADMSG, "Invalid message from coredumpd: %m");
                }
                pid = clone_sibling();
                if (pid == 0) {
                        if (place_fds(fds) < 0)
                                _exit(3);
                        return 1;
                }
                forked.pid = pid > 0 ? pid : 0;
                forked.error = pid < 0 ? pid : 0;
                for (size_t i = 0; i < ZYGOTE_FORK_FDS; i++)
                        safe_close(fds[i]);
                r = proto_send(WORKER_CONTROL_FD, &forked, sizeof forked, NULL, 0);
                if (r < 0)
                        return log_error_errno(r, "Failed to answer coredumpd: %m");
        }
}
