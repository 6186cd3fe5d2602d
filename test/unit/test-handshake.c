/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The @@ protocol: request sizes and checks, acks, and verify_info() over pidfd info. Pure: no
 * I/O. */
#include <sys/socket.h>
#include <sys/time.h>

#include "handshake.h"
#include "tests.h"
#include "verify.h"

static void test_request(void) {
        struct coredump_req req;
        uint8_t buf[64] = {};
        uint32_t size;

        CHECK(handshake_is_elf_magic((const uint8_t *) "\177ELF"));
        CHECK(!handshake_is_elf_magic((const uint8_t *) "\x10\0\0\0"));

        memcpy(buf, &(uint32_t) { 16 }, 4);
        CHECK(handshake_req_size(buf, &size) == 0 && size == 16);
        memcpy(buf, &(uint32_t) { 8 }, 4);
        CHECK_EQ(handshake_req_size(buf, &size), -EBADMSG);
        memcpy(buf, &(uint32_t) { COREDUMP_REQ_SIZE_MAX + 1 }, 4);
        CHECK_EQ(handshake_req_size(buf, &size), -EBADMSG);

        /* a later kernel's larger request: the unknown tail is ignored */
        req = (struct coredump_req) { .size = 24, .size_ack = 16, .mask = 0xf };
        memcpy(buf, &req, sizeof req);
        CHECK_EQ(handshake_parse_req(buf, 24, &req), 0);
        CHECK_EQ(handshake_parse_req(buf, 16, &req), -EBADMSG); /* size disagrees with length */
        req = (struct coredump_req) { .size = 16, .size_ack = 8, .mask = 0xf };
        memcpy(buf, &req, sizeof req);
        CHECK_EQ(handshake_parse_req(buf, 16, &req), -EBADMSG);
        req = (struct coredump_req) { .size = 16, .size_ack = 16, .mask = COREDUMP_REJECT };
        memcpy(buf, &req, sizeof req);
        CHECK_EQ(handshake_parse_req(buf, 16, &req), -EBADMSG);
}

static void test_ack(void) {
        struct coredump_req req = { .size = 16, .size_ack = 16, .mask = 0xf };
        struct coredump_ack ack;

        CHECK_EQ(handshake_build_ack(&req, COREDUMP_KERNEL | COREDUMP_WAIT, &ack), 0);
        CHECK_EQ(ack.size, 16);
        CHECK_EQ(ack.spare, 0);
        CHECK_EQ(ack.mask, COREDUMP_KERNEL | COREDUMP_WAIT);
        CHECK_EQ(handshake_build_ack(&req, COREDUMP_REJECT, &ack), 0);
        /* never two actions, never WAIT alone, never unknown bits */
        CHECK_EQ(handshake_build_ack(&req, COREDUMP_KERNEL | COREDUMP_REJECT, &ack), -EINVAL);
        CHECK_EQ(handshake_build_ack(&req, COREDUMP_WAIT, &ack), -EINVAL);
        CHECK_EQ(handshake_build_ack(&req, COREDUMP_KERNEL | (1u << 9), &ack), -EINVAL);
        /* nothing the kernel did not offer */
        req.mask = COREDUMP_KERNEL;
        CHECK_EQ(handshake_build_ack(&req, COREDUMP_KERNEL | COREDUMP_WAIT, &ack), -EOPNOTSUPP);

        CHECK_STREQ(handshake_mark_to_string(COREDUMP_MARK_REQACK), "accepted");
        CHECK_STREQ(handshake_mark_to_string(COREDUMP_MARK_CONFLICTING), "ack had conflicting flags");
        CHECK_STREQ(handshake_mark_to_string(77), "unknown mark");
        {
                uint32_t mark;
                CHECK_EQ(handshake_check_mark((const uint8_t *) "\0\0\0\0", &mark), 0);
                CHECK_EQ(handshake_check_mark((const uint8_t *) "\2\0\0\0", &mark), -EPROTO);
                CHECK_EQ(mark, COREDUMP_MARK_MAXSIZE);
                CHECK_EQ(handshake_check_mark((const uint8_t *) "\0\0\0\1", &mark), -EPROTO);
        }
}

static void test_verify(void) {
        PidfdInfo i = {
                .mask = PIDFD_INFO_PID | PIDFD_INFO_CREDS | PIDFD_INFO_COREDUMP,
                .pid = 42,
                .coredump_mask = PIDFD_COREDUMPED,
        };
        const char *why = NULL;

        CHECK_EQ(verify_info(&i, 42, 0, &why), 0);
        CHECK_EQ(verify_info(&i, 43, 0, &why), -EPERM); /* SO_PEERCRED disagrees */
        i.has_cookie = true;
        i.cookie = 7;
        CHECK_EQ(verify_info(&i, 42, 7, &why), 0);
        CHECK_EQ(verify_info(&i, 42, 8, &why), -EPERM);
        i.has_cookie = false;
        /* reaped while dumping: no PID to compare, the COREDUMPED mark still proves it */
        i.mask = PIDFD_INFO_EXIT | PIDFD_INFO_COREDUMP;
        i.pid = 0;
        CHECK_EQ(verify_info(&i, 42, 0, &why), 0);
        i.mask = PIDFD_INFO_PID | PIDFD_INFO_CREDS | PIDFD_INFO_COREDUMP;
        i.pid = 42;
        i.coredump_mask = PIDFD_COREDUMP_USER; /* not COREDUMPED: an ordinary process */
        CHECK_EQ(verify_info(&i, 42, 0, &why), -EPERM);
        CHECK_STREQ(why, "peer is not a task being dumped");
        i.mask &= ~PIDFD_INFO_COREDUMP; /* kernel older than 6.16 */
        CHECK_EQ(verify_info(&i, 42, 0, &why), -EPERM);
}

/* A kernel peer on the other end of a stream socket, as fs/coredump.c's coredump_sock_request()
 * answers an ack (7.3's checks, and those 7.4's queued series adds: see kernel-patches/README.md):
 * it sends a request of req_size bytes offering mask, reads the ack and sends its mark. */
typedef struct SimKernel {
        const char *name;
        uint32_t req_size, size_ack;
        uint64_t mask;
} SimKernel;

#define SIM_RECORDS (UINT64_C(1) << 4)
#define SIM_SPARSE (UINT64_C(1) << 5)
#define SIM_MEMORY_TYPES (UINT64_C(1) << 6)
#define SIM_REQ_MAX 64U
#define SIM_TIMEOUT_SEC 5

static uint32_t sim_judge(const SimKernel *k, const uint8_t *ack_buf, uint32_t usize) {
        struct coredump_ack ack;
        uint64_t actions, memory_types = 0;

        if (usize < COREDUMP_ACK_SIZE_VER0)
                return COREDUMP_MARK_MINSIZE;
        if (usize > k->size_ack)
                return COREDUMP_MARK_MAXSIZE;
        memcpy(&ack, ack_buf, sizeof ack);
        if (usize >= 24)
                memcpy(&memory_types, ack_buf + 16, sizeof memory_types);
        if (ack.mask & ~k->mask)
                return COREDUMP_MARK_UNSUPPORTED;
        actions = ack.mask & (COREDUMP_KERNEL | COREDUMP_USERSPACE | COREDUMP_REJECT);
        if (actions == 0 || (actions & (actions - 1)))
                return COREDUMP_MARK_CONFLICTING;
        if (ack.spare)
                return COREDUMP_MARK_UNSUPPORTED;
        if ((ack.mask & SIM_MEMORY_TYPES) && usize < 24)
                return COREDUMP_MARK_MINSIZE;
        if (!(ack.mask & SIM_MEMORY_TYPES) && memory_types)
                return COREDUMP_MARK_UNSUPPORTED;
        return COREDUMP_MARK_REQACK;
}

/* The kernel's side, in a child: exits 0 if it accepted an ack that asked only for what it
 * offered, else 1 + the mark it sent (100 if the conversation broke, 101 if the ack was longer
 * than it said). */
static _Noreturn void sim_kernel(int fd, const SimKernel *k) {
        uint8_t req[SIM_REQ_MAX] = {}, ack[SIM_REQ_MAX] = {};
        struct coredump_req head = { .size = k->req_size, .size_ack = k->size_ack, .mask = k->mask };
        uint32_t usize, mark;

        memcpy(req, &head, sizeof head);
        if (k->req_size >= 32) { /* 7.4: the task's coredump_filter, and the types this kernel knows */
                memcpy(req + 16, &(uint64_t) { 0x33 }, 8);
                memcpy(req + 24, &(uint64_t) { 0x1ff }, 8);
        }
        if (send(fd, req, k->req_size, MSG_NOSIGNAL) != (ssize_t) k->req_size ||
            recv(fd, &usize, sizeof usize, MSG_PEEK | MSG_WAITALL) != (ssize_t) sizeof usize)
                _exit(100);
        mark = usize < COREDUMP_ACK_SIZE_VER0 || usize > k->size_ack ? sim_judge(k, ack, usize) : COREDUMP_MARK_REQACK;
        if (mark == COREDUMP_MARK_REQACK) {
                if (recv(fd, ack, usize, MSG_WAITALL) != (ssize_t) usize)
                        _exit(100);
                /* 7.3 waits for the core's end next: bytes past the announced size would be
                 * "unexpected data" on the socket, and the dump's WAIT would never end */
                if (recv(fd, ack, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN)
                        _exit(101);
                mark = sim_judge(k, ack, usize);
        }
        if (send(fd, &mark, sizeof mark, MSG_NOSIGNAL) != (ssize_t) sizeof mark)
                _exit(100);
        _exit(mark == COREDUMP_MARK_REQACK ? 0 : 1 + (int) mark);
}

/* The daemon's side, as crash.c's handshake_step() and crash_send_ack() read and write it. */
static int daemon_side(int fd, uint64_t decision, HandshakeNews *news, bool *ret_news) {
        uint8_t buf[COREDUMP_REQ_SIZE_MAX], mark_buf[COREDUMP_MARK_SIZE];
        struct coredump_req req;
        struct coredump_ack ack;
        uint32_t size, mark;
        int r;

        if (recv(fd, buf, 4, MSG_PEEK | MSG_WAITALL) != 4)
                return -EIO;
        r = handshake_req_size(buf, &size);
        if (r < 0)
                return r;
        if (recv(fd, buf, size, MSG_WAITALL) != (ssize_t) size)
                return -EIO;
        r = handshake_parse_req(buf, size, &req);
        if (r < 0)
                return r;
        *ret_news = handshake_req_news(news, &req);
        r = handshake_build_ack(&req, decision, &ack);
        if (r < 0)
                return r;
        if (send(fd, &ack, sizeof ack, MSG_NOSIGNAL) != (ssize_t) sizeof ack ||
            recv(fd, mark_buf, sizeof mark_buf, MSG_WAITALL) != (ssize_t) sizeof mark_buf)
                return -EIO;
        return handshake_check_mark(mark_buf, &mark);
}

static void test_kernel_peers(void) {
        static const SimKernel kernels[] = {
                { "7.3", 16, 16, COREDUMP_MASK_KNOWN },
                { "7.4 (queued)", 32, 24, COREDUMP_MASK_KNOWN | SIM_RECORDS | SIM_SPARSE | SIM_MEMORY_TYPES },
                { "a later kernel", 48, 40, COREDUMP_MASK_KNOWN | (UINT64_C(0xff) << 4) },
        };
        static const uint64_t decisions[] = { COREDUMP_KERNEL | COREDUMP_WAIT, COREDUMP_REJECT };
        static const struct timeval sim_timeout = { .tv_sec = SIM_TIMEOUT_SEC };
        HandshakeNews news = {};
        unsigned logged = 0;

        for (size_t i = 0; i < ELEMENTSOF(kernels); i++)
                for (size_t d = 0; d < ELEMENTSOF(decisions); d++) {
                        int sp[2], status = -1, r;
                        bool is_news = false;
                        pid_t pid;

                        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
                        /* an ack of a size other than it says would leave both waiting */
                        for (int e = 0; e < 2; e++)
                                CHECK_EQ(setsockopt(sp[e], SOL_SOCKET, SO_RCVTIMEO, &sim_timeout, sizeof sim_timeout), 0);
                        pid = fork();
                        if (pid == 0) {
                                close(sp[0]);
                                sim_kernel(sp[1], &kernels[i]);
                        }
                        close(sp[1]);
                        r = daemon_side(sp[0], decisions[d], &news, &is_news);
                        close(sp[0]);
                        CHECK_EQ(waitpid(pid, &status, 0), pid);
                        fprintf(stderr, "kernel %s, ack 0x%llx: daemon %d, kernel exit %d, logged: %s\n",
                                kernels[i].name, (unsigned long long) decisions[d], r,
                                WIFEXITED(status) ? WEXITSTATUS(status) : -1, is_news ? "yes" : "no");
                        CHECK_EQ(r, 0);
                        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                        logged += is_news;
                }
        /* said once for the 7.4 request, once more for the later one's new size and flags */
        CHECK_EQ(logged, 2);
}

int main(void) {
        test_request();
        test_ack();
        test_verify();
        test_kernel_peers();
        TESTS_DONE();
}
