/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Crash records: round trip, bounds, export output, the final fields, merged analysis, cgroup parsing. No I/O
 * beyond its own memfd. */
#include <sys/mman.h>

#include "cgroup-util.h"
#include "record-fields.h"
#include "record.h"
#include "tests.h"

static void test_roundtrip(void) {
        Record r = {};
        RecordField f;
        size_t pos = 0;
        const uint8_t bin[] = { 'a', '\n', 0, 'b' };

        CHECK_EQ(record_add_str(&r, "COREDUMP_PID", "42"), 0);
        CHECK_EQ(record_add(&r, "COREDUMP_PROC_AUXV", bin, sizeof bin, 0), 0);
        CHECK_EQ(record_addf(&r, "COREDUMP_UID", "%u", 1000u), 0);
        CHECK_EQ(record_add_str(&r, "bad name", "x"), -EINVAL);
        CHECK_EQ(record_add_str(&r, "9LEADINGDIGIT", "x"), -EINVAL);
        CHECK_EQ(record_add_str(&r, "lower", "x"), -EINVAL);

        CHECK_EQ(record_next(r.buf, r.len, &pos, &f), 1);
        CHECK(f.name_len == 12 && memcmp(f.name, "COREDUMP_PID", 12) == 0 && f.value_len == 2);
        CHECK_EQ(record_next(r.buf, r.len, &pos, &f), 1);
        CHECK(f.value_len == 4 && memcmp(f.value, bin, 4) == 0);
        CHECK_EQ(record_next(r.buf, r.len, &pos, &f), 1);
        CHECK_EQ(record_next(r.buf, r.len, &pos, &f), 0);
        CHECK(record_find(r.buf, r.len, "COREDUMP_UID", &f) && f.value_len == 4);
        CHECK(!record_find(r.buf, r.len, "COREDUMP_GID", &f));

        /* every truncation of a valid record is refused, never read past */
        for (size_t cut = 1; cut < r.len; cut++) {
                uint8_t *copy = malloc(cut);
                int ret;
                memcpy(copy, r.buf, cut);
                pos = 0;
                while ((ret = record_next(copy, cut, &pos, &f)) > 0)
                        ;
                CHECK(ret == -EBADMSG || pos == cut);
                free(copy);
        }
        /* a length field pointing far away */
        {
                uint8_t evil[] = "A\n\xff\xff\xff\xff\xff\xff\xff\x7fxx\n";
                pos = 0;
                CHECK_EQ(record_next(evil, sizeof evil - 1, &pos, &f), -EBADMSG);
        }
        record_free(&r);
}

static void test_bounds(void) {
        Record r = {};
        char *big = malloc(RECORD_MAX);

        memset(big, 'x', RECORD_MAX);
        CHECK_EQ(record_add(&r, "COREDUMP_ENVIRON", big, 100, 10), 0); /* field cap */
        CHECK(r.overflow);
        CHECK_EQ(record_add(&r, "COREDUMP_PROC_MAPS", big, RECORD_MAX, 0), -E2BIG); /* record cap */
        CHECK(r.len < 100);
        record_free(&r);
        free(big);
}

static void test_export(void) {
        Record r = {};
        char out[4096];
        int fd = memfd_create("export", MFD_CLOEXEC);
        ssize_t n;
        static const char expect[] = "COREDUMP_PID=42\n"
                                     "COREDUMP_ENVIRON\n\x07\0\0\0\0\0\0\0A=1\nB=2\n"
                                     "\n";

        record_add_str(&r, "COREDUMP_PID", "42");
        record_add_str(&r, "_CDS_TASK_COMM", "42 x\n"); /* internal: not exported */
        record_add_str(&r, "COREDUMP_ENVIRON", "A=1\nB=2");
        CHECK_EQ(record_write_export(r.buf, r.len, fd), 0);
        n = pread(fd, out, sizeof out, 0);
        CHECK_EQ(n, sizeof expect - 1);
        CHECK(memcmp(out, expect, sizeof expect - 1) == 0);
        close(fd);
        record_free(&r);
}

static void test_finalize(void) {
        Record r = {};
        CoreFacts f = { .has_signal = 1, .signal = 11, .has_code = 1, .code = 1, .has_tid = 1, .tid = 43,
                        .thread_name = "worker", .filename = "/var/lib/coredump-socket/core.x", .truncated = 1 };
        RecordField v;
        char name[16];

        record_add_str(&r, "COREDUMP_PID", "42");
        record_add_str(&r, "COREDUMP_UID", "1000");
        strcpy(f.comm, "fromcore");
        CHECK_EQ(record_finalize(&r, &f), 0);
        CHECK(record_find(r.buf, r.len, "COREDUMP_SIGNAL_NAME", &v) && v.value_len == 7 && !memcmp(v.value, "SIGSEGV", 7));
        CHECK(record_find(r.buf, r.len, "COREDUMP_COMM", &v) && v.value_len == 8); /* /proc missing: the core's */
        CHECK(record_find(r.buf, r.len, "COREDUMP_TRUNCATED", &v));
        CHECK(record_find(r.buf, r.len, "MESSAGE", &v));
        CHECK(v.value_len == strlen("Process 42 (fromcore) of user 1000 dumped core.") &&
              memcmp(v.value, "Process 42 (fromcore) of user 1000 dumped core.", v.value_len) == 0);
        CHECK(record_find(r.buf, r.len, "MESSAGE_ID", &v) && v.value_len == 32);
        CHECK(signal_name(6, name, sizeof name) && strcmp(name, "SIGABRT") == 0);
        CHECK(signal_name(0, name, sizeof name) == NULL);
        CHECK(signal_name(9999, name, sizeof name) == NULL);
        record_free(&r);

        /* refused before the dump: the message says there is no core, and why */
        static const char refused[] = "Process 7 (loop) of user 0 crashed, no core: rate limit: more than 3.";
        f = (CoreFacts) { .has_signal = 1, .signal = 11 };
        record_add_str(&r, "COREDUMP_PID", "7");
        record_add_str(&r, "COREDUMP_UID", "0");
        record_add_str(&r, "COREDUMP_COMM", "loop");
        record_add_str(&r, "COREDUMP_PROCESSING_ERROR", "rate limit: more than 3");
        CHECK_EQ(record_finalize(&r, &f), 0);
        CHECK(record_find(r.buf, r.len, "MESSAGE", &v) && v.value_len == strlen(refused) &&
              memcmp(v.value, refused, v.value_len) == 0);
        record_free(&r);
}

static void test_cgroup(void) {
        static const struct {
                const char *path, *unit, *user_unit, *slice, *session;
                uid_t owner;
        } t[] = {
                { "/system.slice/foo.service", "foo.service", "", "system.slice", "", UID_INVALID },
                { "/user.slice/user-1000.slice/session-3.scope", "session-3.scope", "", "user-1000.slice", "3", 1000 },
                { "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", "user@1000.service", "x.service",
                  "user-1000.slice", "", 1000 },
                { "/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service", "", "system-getty.slice", "",
                  UID_INVALID },
                { "/init.scope", "init.scope", "", "", "", UID_INVALID },
                { "/", "", "", "", "", UID_INVALID },
                { "/docker/abcdef", "", "", "", "", UID_INVALID },
                { "/user.slice/user-99999999999999999999.slice/session-1.scope", "session-1.scope", "",
                  "user-99999999999999999999.slice", "1", UID_INVALID },
        };
        char path[64];
        CgroupInfo ci;

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                cgroup_parse(t[i].path, &ci);
                CHECK_STREQ(ci.unit, t[i].unit);
                CHECK_STREQ(ci.user_unit, t[i].user_unit);
                CHECK_STREQ(ci.slice, t[i].slice);
                CHECK_STREQ(ci.session, t[i].session);
                CHECK_EQ(ci.owner_uid, t[i].owner);
        }
        CHECK_EQ(cgroup_unified_path("12:pids:/\n0::/system.slice/a.service\n", path, sizeof path), 0);
        CHECK_STREQ(path, "/system.slice/a.service");
        CHECK_EQ(cgroup_unified_path("12:pids:/\n", path, sizeof path), -ENODATA);
}

/* What a (possibly compromised) worker sends as its analysis: only its own fields, and a
 * COREDUMP_SIGNATURE only as crash_signature() writes it. */
static void test_merge_signature(void) {
        static const char *const bad[] = { "0123", "0123456789ABCDEF0123456789abcdef",
                                           "0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcdef0" };
        Record a = {}, r = {};

        CHECK_EQ(record_add_str(&a, "COREDUMP_SIGNATURE", "0123456789abcdef0123456789abcdef"), 0);
        CHECK_EQ(record_merge_analysis(&r, a.buf, a.len), 0);
        CHECK(record_find(r.buf, r.len, "COREDUMP_SIGNATURE", &(RecordField) {}));
        record_free(&a);
        record_free(&r);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                CHECK_EQ(record_add_str(&a, "COREDUMP_SIGNATURE", bad[i]), 0);
                CHECK_EQ(record_merge_analysis(&r, a.buf, a.len), -EBADMSG);
                CHECK_EQ(r.len, 0);
                record_free(&a);
        }
        CHECK_EQ(record_add_str(&a, "COREDUMP_EXE", "/forged"), 0);
        CHECK_EQ(record_merge_analysis(&r, a.buf, a.len), -EBADMSG);
        record_free(&a);
        record_free(&r);
}

int main(void) {
        test_roundtrip();
        test_merge_signature();
        test_bounds();
        test_export();
        test_finalize();
        test_cgroup();
        TESTS_DONE();
}
