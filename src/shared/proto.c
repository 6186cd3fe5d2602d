/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sends and receives one fixed-size manager<->worker message with its fds, refusing any other
 * size, type or fd count. Shared: I/O only on the socket given; a static buffer, one thread. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "proto.h"

/* Large enough for any message; a larger one is cut (MSG_TRUNC) and refused. */
#define PROTO_MSG_MAX 8192

int proto_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * PROTO_FDS_MAX)];
        } control = {};
        struct iovec iov = { .iov_base = (void *) msg, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t k;

        if (n_fds > PROTO_FDS_MAX)
                return -E2BIG;
        if (n_fds > 0) {
                struct cmsghdr *c;
                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        do
                k = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();
        if ((size_t) k != size)
                return -EIO;
        return 0;
}

bool proto_recv_again(unsigned *resets) {
        assert(resets);
        return errno == EINTR || (errno == ECONNRESET && (*resets)++ < PROTO_RESETS_RETRIED_MAX);
}

static void close_received(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                safe_close(fds[i]);
}

int proto_check(const void *buf, size_t len, uint32_t type, size_t size) {
        MsgHeader hdr;

        if (len != size || len < sizeof hdr)
                return -EBADMSG;
        memcpy(&hdr, buf, sizeof hdr);
        if (hdr.magic != PROTO_MAGIC || hdr.type != type)
                return -EBADMSG;
        return 0;
}

/* The control buffer holds exactly n_fds descriptors (CMSG_LEN, not CMSG_SPACE, which rounds up
 * to room for another): the kernel installs no more than that and lets the rest of a message's
 * go unopened (MSG_CTRUNC). A descriptor that was never ours is never closed by us: closing one
 * of a file on FUSE (or on a file system stacked over FUSE) waits for its server's answer to
 * FLUSH, uninterruptibly, and a worker that parsed a hostile core could send such a file. (The
 * kernel still drops its reference in our context: a release, no FLUSH.) */
int proto_recv(int sock, uint32_t type, void *msg, size_t size, int *ret_fds, size_t n_fds) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * PROTO_FDS_MAX)];
        } control = {};
        static uint8_t buf[PROTO_MSG_MAX]; /* single-threaded users */
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        int fds[PROTO_FDS_MAX];
        size_t n_got = 0;
        unsigned resets = 0;
        ssize_t k;

        if (n_fds > PROTO_FDS_MAX || size < sizeof(MsgHeader) || size > sizeof buf)
                return -EINVAL;
        if (n_fds > 0) {
                mh.msg_control = &control;
                mh.msg_controllen = CMSG_LEN(sizeof(int) * n_fds);
        }
        do
                k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        while (k < 0 && proto_recv_again(&resets));
        if (k < 0)
                return negative_errno();

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                size_t n;
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n && n_got < n_fds; i++)
                        memcpy(&fds[n_got++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        }

        if (k == 0) {
                close_received(fds, n_got);
                return -ECONNRESET;
        }
        /* MSG_CTRUNC: more descriptors than the message type allows (the rest were never opened) */
        if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || proto_check(buf, (size_t) k, type, size) < 0 ||
            n_got != n_fds) {
                close_received(fds, n_got);
                return -EBADMSG;
        }
        memcpy(msg, buf, size);
        if (n_got > 0)
                memcpy(ret_fds, fds, sizeof(int) * n_got);
        return 0;
}

const char *store_stop_to_string(uint32_t stop) {
        switch (stop) {
        case STORE_STOP_ROOM:
                return "core truncated: MaxUse=/KeepFree= left no more room for it when it started (other owners' "
                       "cores and the cores in flight counted)";
        case STORE_STOP_FREE:
                return "core truncated: storing more would have left the file system below KeepFree=";
        default:
                return NULL;
        }
}

int proto_peek_type(int sock, uint32_t *ret_type) {
        unsigned resets = 0;
        MsgHeader h;
        ssize_t n;

        do
                n = recv(sock, &h, sizeof h, MSG_PEEK | MSG_DONTWAIT);
        while (n < 0 && proto_recv_again(&resets));
        if (n < 0)
                return negative_errno();
        if (n == 0)
                return -ECONNRESET;
        if ((size_t) n != sizeof h || h.magic != PROTO_MAGIC)
                return -EBADMSG;
        *ret_type = h.type;
        return 0;
}

int proto_wait(int sock, uint32_t type, void *msg, size_t size, int *ret_fds, size_t n_fds, int timeout_msec) {
        struct pollfd p = { .fd = sock, .events = POLLIN };

        for (;;) {
                int n = poll(&p, 1, timeout_msec), r;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -ETIMEDOUT;
                r = proto_recv(sock, type, msg, size, ret_fds, n_fds);
                if (r != -EAGAIN)
                        return r;
        }
}
