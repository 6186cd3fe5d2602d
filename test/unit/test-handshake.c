/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The @@ protocol: request sizes and checks, acks, and verify_info() over pidfd info. Pure: no
 * I/O. */
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

int main(void) {
        test_request();
        test_ack();
        test_verify();
        TESTS_DONE();
}
