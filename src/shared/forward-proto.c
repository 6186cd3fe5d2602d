/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd-coredump's forwarding protocol on a SOCK_SEQPACKET socket (forward-proto.h): fields as
 * datagrams, descriptors as empty datagrams. Shared: I/O on the given socket only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fd-util.h"
#include "forward-proto.h"
#include "macro.h"

static const char cut_mark[] = "...";

const char *forward_exit_to_string(int status) {
        switch (status) {
        case FORWARD_EXIT_OK:
                return "forwarded";
        case FORWARD_EXIT_NO_SOCKET:
                return "the container has no collector listening on " FORWARD_SOCKET_PATH;
        case FORWARD_EXIT_USERNS:
                return "the container's user namespace could not be entered";
        case FORWARD_EXIT_CONNECT:
                return "the container's collector refused the connection";
        case FORWARD_EXIT_SEND:
                return "the crash could not be sent to the container's collector";
        case FORWARD_EXIT_CORE:
                return "the container's collector did not read the whole core";
        case FORWARD_EXIT_PIDNS:
                return "the container's PID namespace cannot be joined (coredump-forward needs CAP_SYS_ADMIN: "
                       "the unit's CapabilityBoundingSet=)";
        default:
                return "the forwarder failed (its log line says why)";
        }
}

int forward_send_field(int sock, const char *name, size_t name_len, const void *value, size_t len) {
        bool cut = false;

        for (;;) {
                struct iovec iov[] = {
                        { .iov_base = (void *) name, .iov_len = name_len },
                        { .iov_base = (void *) "=", .iov_len = 1 },
                        { .iov_base = (void *) value, .iov_len = len },
                        { .iov_base = (void *) cut_mark, .iov_len = cut ? strlen(cut_mark) : 0 },
                };
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = ELEMENTSOF(iov) };

                if (sendmsg(sock, &mh, MSG_NOSIGNAL) >= 0)
                        return 0;
                if ((errno != EMSGSIZE && errno != ENOBUFS) || len <= FORWARD_FIELD_MIN)
                        return negative_errno();
                len /= 2;
                cut = true;
        }
}

int forward_send_fd(int sock, int fd) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = { .msg_control = control.buf, .msg_controllen = sizeof control.buf };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? negative_errno() : 0;
}

/* The one descriptor of a message, or -EBADF; -EBADMSG if it carried anything else. */
static int take_fd(struct msghdr *mh) {
        int fd = -EBADF, r = 0;

        for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
                size_t n = cm->cmsg_len > CMSG_LEN(0) ? (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;
                int got[4];

                if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || n == 0) {
                        r = -EBADMSG;
                        continue;
                }
                memcpy(got, CMSG_DATA(cm), MIN(n, ELEMENTSOF(got)) * sizeof(int));
                for (size_t i = 0; i < MIN(n, ELEMENTSOF(got)); i++) {
                        if (fd < 0 && n == 1)
                                fd = got[i];
                        else {
                                safe_close(got[i]);
                                r = -EBADMSG;
                        }
                }
        }
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        return fd;
}

int forward_recv_item(int sock, int flags, ForwardItem *ret) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } control;
        struct iovec iov;
        struct msghdr mh;
        ssize_t size, n;
        char *data;
        int fd;

        *ret = (ForwardItem) { .fd = -EBADF };
        size = recv(sock, NULL, 0, MSG_PEEK | MSG_TRUNC | flags);
        if (size < 0)
                return negative_errno();
        if ((size_t) size > FORWARD_DATAGRAM_MAX)
                return -EBADMSG;
        data = malloc((size_t) size + 1);
        if (!data)
                return -ENOMEM;
        iov = (struct iovec) { .iov_base = data, .iov_len = (size_t) size };
        mh = (struct msghdr) { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                               .msg_controllen = sizeof control.buf };
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
        if (n < 0) {
                free(data);
                return negative_errno();
        }
        fd = take_fd(&mh);
        if (fd == -EBADMSG || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || (n > 0 && fd >= 0)) {
                safe_close(fd);
                free(data);
                return -EBADMSG;
        }
        if (n == 0) {
                free(data);
                ret->fd = fd;
                ret->end = fd < 0;
                return 0;
        }
        data[n] = 0;
        ret->data = data;
        ret->len = (size_t) n;
        return 0;
}
