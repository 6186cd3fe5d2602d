/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager<->worker messages: exact length, type, magic and fd count, or refused; fds past
 * the count never opened. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "macro.h"
#include "proto.h"
#include "tests.h"

/* Descriptors past those a message type allows are never opened in the receiver: the lock taken
 * through one of its file's descriptors survives a message carrying another. */
static void test_stray_never_opened(int sp[2]) {
        MsgJob job = { .hdr = { PROTO_MAGIC, MSG_JOB } };
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        char path[] = "/tmp/test-proto.XXXXXX";
        int fd = mkstemp(path), stray[2], one;
        MsgJob got;

        CHECK(fd >= 0);
        CHECK_EQ(unlink(path), 0);
        CHECK_EQ(fcntl(fd, F_SETLK, &fl), 0);
        CHECK(test_lock_held(fd));
        stray[0] = stray[1] = fd;
        CHECK_EQ(proto_send(sp[0], &job, sizeof job, stray, 2), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, NULL, 0), -EBADMSG);
        CHECK(test_lock_held(fd));
        CHECK_EQ(proto_send(sp[0], &job, sizeof job, stray, 2), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, &one, 1), -EBADMSG);
        /* the one allowed was opened, and closed with the refused message: the lock went with it */
        CHECK(!test_lock_held(fd));
        safe_close(fd);
}

/* A peer that sends its last message and closes while one of ours is still unread in its queue
 * (a worker that gave its job back before reading its DETAILS): the kernel reports ECONNRESET
 * once, before that last message. It is still read, peeked first as the manager does, and only
 * then is the connection at its end. */
static void test_closed_with_ours_unread(void) {
        MsgReturned back = { .hdr = { PROTO_MAGIC, MSG_RETURNED }, .error = -EAGAIN };
        MsgResult res = { .hdr = { PROTO_MAGIC, MSG_RESULT } };
        MsgReturned got;
        uint32_t type = 0;
        int sp[2];

        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
        CHECK_EQ(proto_send(sp[0], &res, sizeof res, NULL, 0), 0); /* ours, never read */
        CHECK_EQ(proto_send(sp[1], &back, sizeof back, NULL, 0), 0); /* its last words */
        safe_close(sp[1]);
        CHECK_EQ(proto_peek_type(sp[0], &type), 0);
        CHECK_EQ(type, MSG_RETURNED);
        CHECK_EQ(proto_recv(sp[0], MSG_RETURNED, &got, sizeof got, NULL, 0), 0);
        CHECK_EQ(got.error, -EAGAIN);
        CHECK_EQ(proto_peek_type(sp[0], &type), -ECONNRESET);
        CHECK_EQ(proto_recv(sp[0], MSG_RETURNED, &got, sizeof got, NULL, 0), -ECONNRESET);
        safe_close(sp[0]);

        /* the same, read without a peek first (as every handler but on_busy() reads) */
        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
        CHECK_EQ(proto_send(sp[0], &res, sizeof res, NULL, 0), 0);
        CHECK_EQ(proto_send(sp[1], &back, sizeof back, NULL, 0), 0);
        safe_close(sp[1]);
        got = (MsgReturned) {};
        CHECK_EQ(proto_recv(sp[0], MSG_RETURNED, &got, sizeof got, NULL, 0), 0);
        CHECK_EQ(got.error, -EAGAIN);
        CHECK_EQ(proto_recv(sp[0], MSG_RETURNED, &got, sizeof got, NULL, 0), -ECONNRESET);
        safe_close(sp[0]);
}

int main(void) {
        MsgJob job = { .hdr = { PROTO_MAGIC, MSG_JOB }, .flags = JOB_FLAG_STORE, .external_size_max = 123 };
        MsgResult res = { .hdr = { PROTO_MAGIC, MSG_RESULT } };
        MsgJob got;
        int sp[2], fds[2], two[2] = { 0, 1 }, baseline;

        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
        baseline = test_open_fd_count();

        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -EAGAIN);

        CHECK_EQ(proto_send(sp[0], &job, sizeof job, two, 2), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), 0);
        CHECK_EQ(got.external_size_max, 123);
        CHECK(fds[0] > 2 && fds[1] > 2);
        safe_close(fds[0]);
        safe_close(fds[1]);

        /* wrong type */
        CHECK_EQ(proto_send(sp[0], &res, sizeof res, NULL, 0), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -EBADMSG);
        /* short message */
        CHECK_EQ(proto_send(sp[0], &job, sizeof job - 1, two, 2), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -EBADMSG);
        /* oversized message */
        {
                uint8_t big[1024] = {};
                memcpy(big, &job, sizeof job);
                CHECK_EQ(proto_send(sp[0], big, sizeof big, NULL, 0), 0);
                CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -EBADMSG);
        }
        /* bad magic */
        job.hdr.magic = 0;
        CHECK_EQ(proto_send(sp[0], &job, sizeof job, two, 2), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -EBADMSG);
        job.hdr.magic = PROTO_MAGIC;
        /* fds where none are allowed, and too few */
        CHECK_EQ(proto_send(sp[0], &job, sizeof job, two, 2), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, NULL, 0), -EBADMSG);
        CHECK_EQ(proto_send(sp[0], &job, sizeof job, two, 1), 0);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -EBADMSG);
        /* every refused message's fds were closed */
        CHECK_EQ(test_open_fd_count(), baseline);
        test_stray_never_opened(sp);
        CHECK_EQ(test_open_fd_count(), baseline);

        safe_close(sp[0]);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -ECONNRESET);
        safe_close(sp[1]);
        test_closed_with_ours_unread();
        TESTS_DONE();
}
