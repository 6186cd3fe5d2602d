/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker's side of the module files' queue (analysis.c): left whole until taken, taken once
 * filled, a queue not as the table says leaving none, a manager's word that disagrees refused. */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "analysis.h"
#include "proto.h"
#include "tests.h"

static int control[2]; /* the manager's end, the worker's */

static int wait_msg(uint32_t type, void *msg, size_t size, int *fds, size_t n_fds) {
        return proto_recv(control[1], type, msg, size, fds, n_fds);
}

static int table_of(size_t n) {
        int fd = memfd_create("table", MFD_CLOEXEC);

        CHECK(fd >= 0);
        for (size_t i = 0; i < n; i++) {
                ModuleEntry e = {};
                snprintf(e.path, sizeof e.path, "/lib/module%zu.so", i);
                CHECK_EQ(write(fd, &e, sizeof e), (ssize_t) sizeof e);
        }
        return fd;
}

/* The collector's message on the queue's other end: count, then n_fds descriptors. */
static void queue(int q, uint32_t count, const int *fds, size_t n_fds) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } c = {};
        struct iovec iov = { .iov_base = &count, .iov_len = sizeof count };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
                             .msg_controllen = CMSG_SPACE(sizeof(int) * n_fds) };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
        CHECK_EQ(sendmsg(q, &mh, MSG_NOSIGNAL), (ssize_t) sizeof count);
}

/* MODULES with the worker's end of a fresh queue; the collector's end returned. */
static int give_queue(uint32_t count, int *ret_keep) {
        MsgModules msg = { .hdr = { PROTO_MAGIC, MSG_MODULES }, .count = count };
        int q[2];

        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, q), 0);
        CHECK_EQ(proto_send(control[0], &msg, sizeof msg, &q[1], 1), 0);
        *ret_keep = fcntl(q[1], F_DUPFD_CLOEXEC, 3); /* to look at the queue afterwards */
        safe_close(q[1]);
        return q[0];
}

static bool queue_empty(int q) {
        uint32_t b;
        return recv(q, &b, sizeof b, MSG_PEEK | MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* The queue received and left as it is (a job given back has it whole), the collector queueing
 * only then; the two files taken out once the job is past giving back, and the queue with them. */
static void test_receive_then_take(void) {
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        char path[] = "/tmp/test-module-files.XXXXXX";
        int locked = mkstemp(path), other = open("/dev/null", O_RDONLY | O_CLOEXEC), table = table_of(2);
        int files[2], keep, q, baseline;
        struct stat a, b;
        ModuleFiles m;

        CHECK(locked >= 0 && other >= 0);
        CHECK_EQ(unlink(path), 0);
        CHECK_EQ(fcntl(locked, F_SETLK, &fl), 0);
        baseline = test_open_fd_count();
        q = give_queue(2, &keep);
        CHECK_EQ(module_files_receive(2, table, &m, wait_msg), 0);
        CHECK_EQ(m.n, 2);
        CHECK(m.queue >= 0 && m.items[0].fd < 0 && m.items[1].fd < 0);
        CHECK(strcmp(m.items[1].path, "/lib/module1.so") == 0);

        files[0] = locked; /* (no close of a descriptor of it here but by the code tested) */
        files[1] = other;
        queue(q, 2, files, 2);
        safe_close(other);
        CHECK(!queue_empty(keep));
        module_files_take(&m);
        CHECK_EQ(m.n, 2);
        CHECK(m.queue < 0 && queue_empty(keep));
        CHECK(fstat(m.items[0].fd, &a) == 0 && fstat(locked, &b) == 0 && a.st_ino == b.st_ino);
        CHECK(test_lock_held(locked));
        module_files_close(&m);
        CHECK(!test_lock_held(locked)); /* the copy taken was opened here */
        safe_close(keep);
        safe_close(q);
        CHECK_EQ(test_open_fd_count(), baseline - 1); /* other went with the queue */
        safe_close(table);
        safe_close(locked);
}

/* A queue that does not hold what the table lists: no files, not the job failed; none leaked. */
static void test_queue_disagrees(void) {
        int table = table_of(3), null = open("/dev/null", O_RDONLY | O_CLOEXEC), two[2], keep, q, baseline;
        ModuleFiles m;

        two[0] = two[1] = null;
        baseline = test_open_fd_count();
        q = give_queue(3, &keep);
        queue(q, 3, two, 2); /* three said, two sent */
        CHECK_EQ(module_files_receive(3, table, &m, wait_msg), 0);
        module_files_take(&m);
        CHECK_EQ(m.n, 0);
        module_files_close(&m);
        safe_close(keep);
        CHECK_EQ(test_open_fd_count(), baseline + 1); /* q */

        keep = -EBADF;
        safe_close(q);
        q = give_queue(3, &keep);
        safe_close(q); /* the collector went without queueing: no wait for it */
        CHECK_EQ(module_files_receive(3, table, &m, wait_msg), 0);
        module_files_take(&m);
        CHECK_EQ(m.n, 0);
        module_files_close(&m);
        safe_close(keep);
        CHECK_EQ(test_open_fd_count(), baseline);
        safe_close(table);
        safe_close(null);
}

/* The manager's MODULES says another count than its table: refused. */
static void test_manager_disagrees(void) {
        int table = table_of(2), keep, q = give_queue(3, &keep);
        ModuleFiles m;

        CHECK_EQ(module_files_receive(2, table, &m, wait_msg), -EBADMSG);
        module_files_close(&m);
        safe_close(keep);
        safe_close(q);
        safe_close(table);
}

int main(void) {
        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, control), 0);
        test_receive_then_take();
        test_queue_disagrees();
        test_manager_disagrees();
        safe_close(control[0]);
        safe_close(control[1]);
        TESTS_DONE();
}
