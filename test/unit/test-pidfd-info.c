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

/* A kernel whose struct pidfd_info is kernel_size bytes (64: 6.13-6.15, 72: 6.16-6.18, 80: 6.19
 * and 7.0, 88: 7.1+) answering every PIDFD_INFO_* bit it knows for a task that dumped (SIGSEGV,
 * SEGV_MAPERR) or not, into a caller's zeroed buffer of user_len bytes: it copies min(both) and,
 * as upstream does, raises the mask bits of fields it did not copy. */
#define SIM_SUPPORTED_619 UINT64_C(0x7f)
#define SIM_SUPPORTED_71 UINT64_C(0xff)
#define SIM_SIGNAL 11U
#define SIM_CODE 1U
static void kernel_answers(size_t kernel_size, bool dumped, size_t user_len, uint8_t out[88]) {
        struct pidfd_info_raw k = base(PIDFD_INFO_CGROUPID | PIDFD_INFO_EXIT);

        k.coredump_mask = 0;
        if (kernel_size >= 72) {
                k.mask |= PIDFD_INFO_COREDUMP;
                k.coredump_mask = dumped ? PIDFD_COREDUMPED | PIDFD_COREDUMP_USER : 0;
        }
        if (kernel_size == 80) {
                k.mask |= PIDFD_INFO_SUPPORTED_MASK | (dumped ? PIDFD_INFO_COREDUMP_SIGNAL : 0);
                k.u68 = dumped ? SIM_SIGNAL : 0;
                k.u72 = SIM_SUPPORTED_619;
        }
        if (kernel_size == 88) {
                k.mask |= PIDFD_INFO_SUPPORTED_MASK | (dumped ? PIDFD_INFO_COREDUMP_SIGNAL | PIDFD_INFO_COREDUMP_CODE : 0);
                k.u68 = dumped ? SIM_SIGNAL : 0;
                k.u72 = dumped ? SIM_CODE : 0;
                k.u80 = SIM_SUPPORTED_71;
        }
        memset(out, 0, 88);
        memcpy(out, &k, MIN(kernel_size, user_len));
}

/* Every kernel layout against every caller size: a field is believed only when the kernel has it
 * and it was copied, and then with its true value; its mask bit is dropped otherwise. The trap:
 * the SUPPORTED_MASK bit comes back set where the field was not copied (80-byte callers of 7.1,
 * 72-byte callers of 6.19), and a 6.19-built caller of 7.1 would read the code at 72 as the mask. */
static void test_layouts(void) {
        static const size_t sizes[] = { 64, 72, 80, 88 };

        for (size_t ki = 0; ki < ELEMENTSOF(sizes); ki++)
                for (size_t ui = 0; ui < ELEMENTSOF(sizes); ui++)
                        for (int dumped = 0; dumped <= 1; dumped++) {
                                size_t kernel = sizes[ki], user = sizes[ui];
                                bool signal = dumped && kernel >= 80 && user >= 72;
                                bool code = dumped && kernel == 88 && user >= 80;
                                bool supported = (kernel == 80 && user >= 80) || (kernel == 88 && user == 88);
                                uint8_t buf[88];
                                PidfdInfo i;

                                kernel_answers(kernel, dumped, user, buf);
                                if (pidfd_info_parse(buf, user, &i) != 0) {
                                        CHECK(!"parse failed");
                                        continue;
                                }
                                fprintf(stderr, "kernel %zu bytes, caller %zu, %s: signal %s, code %s, supported mask %s\n",
                                        kernel, user, dumped ? "dumped" : "no dump", signal ? "yes" : "no",
                                        code ? "yes" : "no", supported ? "yes" : "no");
                                CHECK_EQ(!!(i.mask & PIDFD_INFO_COREDUMP), kernel >= 72 && user >= 72);
                                CHECK_EQ(i.coredump_mask, dumped && kernel >= 72 && user >= 72
                                                                  ? PIDFD_COREDUMPED | PIDFD_COREDUMP_USER : 0);
                                CHECK_EQ(!!(i.mask & PIDFD_INFO_COREDUMP_SIGNAL), signal);
                                CHECK_EQ(i.coredump_signal, signal ? SIM_SIGNAL : 0);
                                CHECK_EQ(!!(i.mask & PIDFD_INFO_COREDUMP_CODE), code);
                                CHECK_EQ(i.coredump_code, code ? SIM_CODE : 0);
                                CHECK_EQ(!!(i.mask & PIDFD_INFO_SUPPORTED_MASK), supported);
                                CHECK_EQ(i.supported_mask,
                                         !supported ? 0 : kernel == 80 ? SIM_SUPPORTED_619 : SIM_SUPPORTED_71);
                                CHECK(!i.has_cookie);
                                CHECK_EQ(i.pid, 42);
                        }
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
        test_layouts();
        TESTS_DONE();
}
