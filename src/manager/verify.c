/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Proves a connection on the kernel socket is the kernel dumping a task: SO_PEERPIDFD, pidfd info,
 * SO_PEERCRED, cookie. Manager (root): only getsockopt() and ioctl() on those fds. */
#include <sys/socket.h>

#include "macro.h"
#include "verify.h"

int verify_info(const PidfdInfo *info, pid_t peercred_pid, uint64_t so_cookie, const char **ret_why) {
        if (!(info->mask & PIDFD_INFO_COREDUMP)) {
                *ret_why = "kernel gave no coredump information for the peer";
                return -EPERM;
        }
        if (!(info->coredump_mask & PIDFD_COREDUMPED)) {
                *ret_why = "peer is not a task being dumped";
                return -EPERM;
        }
        /* A reaped task (killed while dumping) has no PID in its pidfd info any more; the
         * COREDUMPED mark is the kernel's own, so the connection is still the kernel's. */
        if ((info->mask & PIDFD_INFO_PID) && (info->pid <= 0 || info->pid != peercred_pid)) {
                *ret_why = "SO_PEERCRED and the pidfd disagree about the peer";
                return -EPERM;
        }
        if (info->has_cookie && info->cookie != so_cookie) {
                *ret_why = "coredump cookie does not match the connection";
                return -EPERM;
        }
        return 0;
}

int verify_peer(int conn, PidfdInfo *ret_info, const char **ret_why) {
        _cleanup_close_ int pidfd = -EBADF;
        struct ucred cred;
        socklen_t l = sizeof pidfd;
        uint64_t cookie = 0;
        int fd, r;

        if (getsockopt(conn, SOL_SOCKET, SO_PEERPIDFD, &fd, &l) < 0) {
                *ret_why = "no SO_PEERPIDFD for the peer";
                return negative_errno();
        }
        pidfd = fd;
        l = sizeof cred;
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0) {
                *ret_why = "no SO_PEERCRED for the peer";
                return negative_errno();
        }
        r = pidfd_get_info(pidfd, PIDFD_INFO_WANT, ret_info);
        if (r < 0) {
                *ret_why = "PIDFD_GET_INFO failed";
                return r;
        }
        if (ret_info->has_cookie) {
                l = sizeof cookie;
                if (getsockopt(conn, SOL_SOCKET, SO_COOKIE, &cookie, &l) < 0) {
                        *ret_why = "no SO_COOKIE for the connection";
                        return negative_errno();
                }
        }
        r = verify_info(ret_info, cred.pid, cookie, ret_why);
        if (r < 0)
                return r;
        if (!(ret_info->mask & PIDFD_INFO_PID)) {
                /* What the kernel recorded at connect time is all that is left. */
                ret_info->reaped = true;
                ret_info->pid = ret_info->tgid = cred.pid;
                ret_info->ruid = ret_info->euid = ret_info->suid = ret_info->fsuid = cred.uid;
                ret_info->rgid = ret_info->egid = ret_info->sgid = ret_info->fsgid = cred.gid;
        }
        return TAKE_FD(pidfd);
}
