/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PIDFD_GET_INFO parsing over every kernel layout (6.16-6.18, 6.19-7.0, 7.1+, the seed cookie)
 * and malformed info; the state in a /proc/PID/stat text. Pure: no I/O. */
#include "pidfd-util.h"
#include "tests.h"

static struct pidfd_info_raw base(uint64_t mask) {
        return (struct pidfd_info_raw) {
                .mask = mask | PIDFD_INFO_PID | PIDFD_INFO_CREDS,
                .pid = 42, .tgid = 42, .ppid = 1, .ruid = 1000, .euid = 1000, .rgid = 100, .egid = 100,
                .coredump_mask = PIDFD_COREDUMPED | PIDFD_COREDUMP_USER,
        };
}

int main(void) {
        struct pidfd_info_raw r;
        PidfdInfo i;

        /* 6.16-6.18: 72 bytes; the kernel zero-fills the rest of our 88 */
        r = base(PIDFD_INFO_COREDUMP | PIDFD_INFO_CGROUPID);
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK_EQ(i.pid, 42);
        CHECK_EQ(i.coredump_mask, PIDFD_COREDUMPED | PIDFD_COREDUMP_USER);
        CHECK(!i.has_cookie);
        CHECK_EQ(i.supported_mask, 0);

        /* coredump_mask is ignored unless the kernel says it filled it */
        r = base(0);
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK_EQ(i.coredump_mask, 0);

        /* 6.19-7.0: signal @68, supported_mask @72 */
        r = base(PIDFD_INFO_COREDUMP | PIDFD_INFO_COREDUMP_SIGNAL | PIDFD_INFO_SUPPORTED_MASK);
        r.u68 = 11;
        r.u72 = 0x7f;
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK_EQ(i.coredump_signal, 11);
        CHECK_EQ(i.supported_mask, 0x7f);
        CHECK(!i.has_cookie);

        /* 7.1+: code @72, supported_mask @80 */
        r = base(PIDFD_INFO_COREDUMP | PIDFD_INFO_COREDUMP_SIGNAL | PIDFD_INFO_COREDUMP_CODE |
                 PIDFD_INFO_SUPPORTED_MASK);
        r.u68 = 6;
        r.u72 = 1; /* SEGV_MAPERR */
        r.u80 = 0xff;
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK_EQ(i.coredump_signal, 6);
        CHECK_EQ(i.coredump_code, 1);
        CHECK_EQ(i.supported_mask, 0xff);

        /* 7.1+ without a coredump: supported_mask is still @80 */
        r = base(PIDFD_INFO_SUPPORTED_MASK);
        r.u80 = 0xff;
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK_EQ(i.supported_mask, 0xff);

        /* seed v4: neither newer bit, non-zero u64 @72 is the cookie */
        r = base(PIDFD_INFO_COREDUMP);
        r.u72 = 0x1234567890ULL;
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK(i.has_cookie);
        CHECK_EQ(i.cookie, 0x1234567890ULL);
        /* ... but only if the buffer covered it */
        CHECK_EQ(pidfd_info_parse(&r, 72, &i), 0);
        CHECK(!i.has_cookie);

        /* a reaped task (killed while dumping): only EXIT and COREDUMP are left */
        r = (struct pidfd_info_raw) { .mask = PIDFD_INFO_CGROUPID | PIDFD_INFO_EXIT | PIDFD_INFO_COREDUMP,
                                      .exit_code = 9, .coredump_mask = PIDFD_COREDUMPED | PIDFD_COREDUMP_USER };
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), 0);
        CHECK_EQ(i.pid, 0);
        CHECK_EQ(i.exit_code, 9);
        CHECK_EQ(i.coredump_mask, PIDFD_COREDUMPED | PIDFD_COREDUMP_USER);

        /* malformed */
        r = base(0);
        CHECK_EQ(pidfd_info_parse(&r, 63, &i), -EBADMSG);
        r.mask = PIDFD_INFO_PID; /* CREDS always comes with it */
        CHECK_EQ(pidfd_info_parse(&r, sizeof r, &i), -EBADMSG);

        /* /proc/PID/stat: the state follows the last ")", whatever comm holds */
        CHECK_EQ(proc_stat_state("42 (coredump-worker) S 1 42 42 0 -1"), 'S');
        CHECK_EQ(proc_stat_state("42 (a) R (b) D 1 42"), 'D');
        CHECK_EQ(proc_stat_state("42 (x) T"), 'T');
        CHECK_EQ(proc_stat_state("42 (x)"), 0);
        CHECK_EQ(proc_stat_state("42 (x)  S"), 0);
        CHECK_EQ(proc_stat_state("42 x S"), 0);
        CHECK_EQ(proc_stat_state(""), 0);
        {
                ProcStat st;

                CHECK_EQ(proc_stat_parse("1234 (coredump-worker) S 1 1234 1234 0 -1 4194624 100 0 0 0 5 3 0 0 20 0 "
                                         "1 0 12345 10485760 500 18446744073709551615 1 1 0 0", &st), 0);
                CHECK_EQ(st.state, 'S');
                CHECK(st.has_vsize);
                CHECK_EQ(st.vsize, 10485760);
                /* in its exit past exit_mm(); comm made to look like the fields */
                CHECK_EQ(proc_stat_parse("42 (x) S 1 2 3) D 1 42 42 0 -1 4194624 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 0",
                                         &st), 0);
                CHECK_EQ(st.state, 'D');
                CHECK(st.has_vsize);
                CHECK_EQ(st.vsize, 0);
                CHECK_EQ(proc_stat_parse("42 (x) S 1 42 42 0 -1 4194624 0 0", &st), -EBADMSG);
                CHECK_EQ(proc_stat_parse("42 (x)", &st), -EBADMSG);
                CHECK_EQ(proc_stat_parse("", &st), -EBADMSG);
        }
        TESTS_DONE();
}
