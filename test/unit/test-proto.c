/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager<->worker messages: exact length, type, magic and fd count, or refused. */
#include <fcntl.h>
#include <sys/socket.h>

#include "macro.h"
#include "proto.h"
#include "tests.h"

static int open_fd_count(void) {
        int n = 0;
        for (int fd = 0; fd < 256; fd++)
                n += fcntl(fd, F_GETFD) >= 0;
        return n;
}

int main(void) {
        MsgJob job = { .hdr = { PROTO_MAGIC, MSG_JOB }, .flags = JOB_FLAG_STORE, .external_size_max = 123 };
        MsgResult res = { .hdr = { PROTO_MAGIC, MSG_RESULT } };
        MsgJob got;
        int sp[2], fds[2], two[2] = { 0, 1 }, baseline;

        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
        baseline = open_fd_count();

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
        CHECK_EQ(open_fd_count(), baseline);

        safe_close(sp[0]);
        CHECK_EQ(proto_recv(sp[1], MSG_JOB, &got, sizeof got, fds, 2), -ECONNRESET);
        safe_close(sp[1]);
        TESTS_DONE();
}
