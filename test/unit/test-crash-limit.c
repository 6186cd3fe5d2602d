/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The crash limits: bursts, windows, services, MaxParallel=, MaxParallelPerUser=, a full table,
 * and the parsers of what the policy and the worker watchdog read of /proc. Pure: no I/O. */
#include "crash-limit.h"
#include "peek.h"
#include "tests.h"
#include "worker-watchdog.h"

#define SEC USEC_PER_SEC
#define INTERVAL (60 * SEC)
#define BURST 3

typedef struct Flushed {
        unsigned calls;
        LimitKind kind;
        char key[64];
        unsigned n;
        pid_t last_pid;
        unsigned n_pids;
} Flushed;

static void on_flush(const LimitBucket *b, void *userdata) {
        Flushed *f = userdata;

        f->calls++;
        f->kind = b->kind;
        snprintf(f->key, sizeof f->key, "%s", b->key ? b->key : "");
        f->n = b->n_suppressed;
        f->last_pid = b->last_pid;
        f->n_pids = b->n_pids;
}

static LimitVerdict crash_at(CrashLimits *l, const char *exe, const char *unit, pid_t pid, uint64_t now) {
        LimitCrash c = { .exe = exe, .unit = unit, .comm = "x", .pid = pid, .uid = 1000, .realtime = now };
        LimitTicket t;
        LimitVerdict v = limits_check(l, INTERVAL, BURST, &c, now, &t);

        if (v == LIMIT_TAKE)
                limits_take(&t);
        return v;
}

static void test_burst_and_window(void) {
        Flushed f = {};
        CrashLimits l;
        uint64_t now = 1000 * SEC;

        limits_init(&l, on_flush, &f);
        for (pid_t p = 1; p <= BURST; p++)
                CHECK_EQ(crash_at(&l, "/bin/loop", NULL, p, now + (uint64_t) p), LIMIT_TAKE);
        CHECK_EQ(crash_at(&l, "/bin/loop", NULL, 10, now + 10), LIMIT_SUPPRESS_FIRST);
        for (pid_t p = 11; p < 50; p++)
                CHECK_EQ(crash_at(&l, "/bin/loop", NULL, p, now + (uint64_t) p), LIMIT_SUPPRESS);
        /* another program is not affected */
        CHECK_EQ(crash_at(&l, "/bin/other", NULL, 60, now + 60), LIMIT_TAKE);
        CHECK_EQ(f.calls, 0);
        /* the window's end: the summary is written, the next window starts */
        CHECK_EQ(limits_flush_expired(&l, INTERVAL, now + 30 * SEC), now + 1 + INTERVAL);
        CHECK_EQ(f.calls, 0);
        CHECK_EQ(limits_flush_expired(&l, INTERVAL, now + INTERVAL + 2), UINT64_MAX);
        CHECK_EQ(f.calls, 1);
        CHECK_EQ(f.kind, LIMIT_EXE);
        CHECK_STREQ(f.key, "/bin/loop");
        CHECK_EQ(f.n, 40);
        CHECK_EQ(f.last_pid, 49);
        CHECK_EQ(f.n_pids, LIMIT_PIDS_LISTED);
        CHECK_EQ(crash_at(&l, "/bin/loop", NULL, 100, now + INTERVAL + 3), LIMIT_TAKE);
        limits_done(&l);
        CHECK_EQ(f.calls, 1); /* nothing pending */
}

static void test_roll_on_next_crash_and_done(void) {
        Flushed f = {};
        CrashLimits l;
        uint64_t now = 5 * SEC;

        limits_init(&l, on_flush, &f);
        for (pid_t p = 1; p <= BURST + 2; p++)
                (void) crash_at(&l, "/bin/loop", NULL, p, now);
        /* no timer ran: the next crash after the window summarises the last one */
        CHECK_EQ(crash_at(&l, "/bin/loop", NULL, 9, now + INTERVAL), LIMIT_TAKE);
        CHECK_EQ(f.calls, 1);
        CHECK_EQ(f.n, 2);
        for (pid_t p = 10; p <= 13; p++)
                (void) crash_at(&l, "/bin/loop", NULL, p, now + INTERVAL + 1);
        limits_done(&l); /* the open window's summary too */
        CHECK_EQ(f.calls, 2);
        CHECK_EQ(f.n, 2);
}

static void test_service(void) {
        Flushed f = {};
        CrashLimits l;
        uint64_t now = 5 * SEC;
        char name[32];

        limits_init(&l, on_flush, &f);
        /* different executables of one service share the service's limit */
        for (int i = 0; i < BURST; i++) {
                snprintf(name, sizeof name, "/bin/p%d", i);
                CHECK_EQ(crash_at(&l, name, "foo.service", i + 1, now), LIMIT_TAKE);
        }
        CHECK_EQ(crash_at(&l, "/bin/p9", "foo.service", 20, now), LIMIT_SUPPRESS_FIRST);
        /* suppressed by the service: /bin/p9 took nothing */
        CHECK_EQ(crash_at(&l, "/bin/p9", NULL, 21, now), LIMIT_TAKE);
        limits_done(&l);
        CHECK_EQ(f.calls, 1);
        CHECK_EQ(f.kind, LIMIT_UNIT);
        CHECK_STREQ(f.key, "foo.service");
}

static void test_disabled_and_unknown(void) {
        CrashLimits l;
        LimitTicket t;
        LimitCrash c = { .exe = "/bin/x", .pid = 1 };

        limits_init(&l, NULL, NULL);
        for (int i = 0; i < 100; i++) {
                CHECK_EQ(limits_check(&l, 0, BURST, &c, SEC, &t), LIMIT_TAKE);
                CHECK_EQ(limits_check(&l, INTERVAL, 0, &c, SEC, &t), LIMIT_TAKE);
        }
        /* nothing known of the process: no key, never limited by program */
        c.exe = "";
        for (int i = 0; i < 100; i++)
                CHECK_EQ(crash_at(&l, "", NULL, i, SEC), LIMIT_TAKE);
        limits_done(&l);
}

static void test_cap(void) {
        Flushed f = {};
        CrashLimits l;
        LimitTicket t;
        LimitCrash c = { .exe = "/bin/x", .pid = 7, .comm = "x" };

        limits_init(&l, on_flush, &f);
        CHECK_EQ(limits_over_cap(&l, &c, 10 * SEC, &t), LIMIT_SUPPRESS_FIRST);
        CHECK_EQ(limits_over_cap(&l, &c, 11 * SEC, &t), LIMIT_SUPPRESS);
        /* with RateLimitIntervalSec=0 the cap's summaries still come, a minute apart */
        CHECK_EQ(limits_flush_expired(&l, 0, 11 * SEC), 10 * SEC + LIMIT_CAP_WINDOW_USEC);
        CHECK_EQ(limits_flush_expired(&l, 0, 10 * SEC + LIMIT_CAP_WINDOW_USEC), UINT64_MAX);
        CHECK_EQ(f.calls, 1);
        CHECK_EQ(f.kind, LIMIT_CAP);
        CHECK_EQ(f.n, 2);
        limits_done(&l);
}

/* MaxParallelPerUser=: one window per uid, starting with its first refusal, summarised a
 * minute later even with rate limiting off; uids are counted apart. */
static void test_user_cap(void) {
        Flushed f = {};
        CrashLimits l;
        LimitTicket t;
        LimitCrash a = { .exe = "/bin/x", .pid = 7, .comm = "x", .uid = 1001 };
        LimitCrash b = { .exe = "/bin/x", .pid = 8, .comm = "x", .uid = 1002 };

        limits_init(&l, on_flush, &f);
        CHECK_EQ(limits_over_user_cap(&l, &a, 10 * SEC, &t), LIMIT_SUPPRESS_FIRST);
        CHECK_EQ(t.hit->kind, LIMIT_USER);
        CHECK_STREQ(t.hit->key, "1001");
        CHECK_EQ(limits_over_user_cap(&l, &a, 11 * SEC, &t), LIMIT_SUPPRESS);
        CHECK_EQ(limits_over_user_cap(&l, &b, 12 * SEC, &t), LIMIT_SUPPRESS_FIRST);
        /* the user's crashes do not count against the program's rate limit */
        CHECK_EQ(crash_at(&l, "/bin/x", NULL, 9, 13 * SEC), LIMIT_TAKE);
        CHECK_EQ(limits_flush_expired(&l, 0, 13 * SEC), 10 * SEC + LIMIT_CAP_WINDOW_USEC);
        CHECK_EQ(f.calls, 0);
        CHECK_EQ(limits_flush_expired(&l, 0, 10 * SEC + LIMIT_CAP_WINDOW_USEC), 12 * SEC + LIMIT_CAP_WINDOW_USEC);
        CHECK_EQ(f.calls, 1);
        CHECK_EQ(f.kind, LIMIT_USER);
        CHECK_STREQ(f.key, "1001");
        CHECK_EQ(f.n, 2);
        /* the next refusal starts a new window, first again */
        CHECK_EQ(limits_over_user_cap(&l, &a, 80 * SEC, &t), LIMIT_SUPPRESS_FIRST);
        limits_done(&l); /* flushes the open windows */
        CHECK_EQ(f.calls, 3);
}

static void test_table_full(void) {
        Flushed f = {};
        CrashLimits l;
        char name[32];

        limits_init(&l, on_flush, &f);
        /* one program over its limit, then more programs than the table holds */
        for (pid_t p = 1; p <= BURST + 1; p++)
                (void) crash_at(&l, "/bin/first", NULL, p, SEC);
        for (unsigned i = 0; i < LIMIT_KEYS_MAX + 10; i++) {
                snprintf(name, sizeof name, "/bin/n%u", i);
                CHECK_EQ(crash_at(&l, name, NULL, (pid_t) (100 + i), 2 * SEC + i), LIMIT_TAKE);
        }
        CHECK(l.n <= LIMIT_KEYS_MAX);
        /* the evicted window's suppressed crash was not lost */
        CHECK_EQ(f.calls, 1);
        CHECK_STREQ(f.key, "/bin/first");
        /* a new program in a new service on a full table: two buckets, each counted once (the
         * service's must not take the program's fresh slot) */
        for (pid_t p = 1; p <= BURST; p++)
                CHECK_EQ(crash_at(&l, "/bin/fresh", "fresh.service", 5000 + p, 10 * SEC), LIMIT_TAKE);
        CHECK_EQ(crash_at(&l, "/bin/fresh", "fresh.service", 6000, 10 * SEC), LIMIT_SUPPRESS_FIRST);
        limits_done(&l);
}

static void test_peek_parsers(void) {
        uint64_t size;
        char svc[300];

        CHECK_EQ(peek_parse_anon_size("Name:\tx\nVmRSS:\t  900 kB\nRssAnon:\t  512 kB\nVmSwap:\t 10 kB\n", &size), 0);
        CHECK_EQ(size, 522 * 1024);
        CHECK_EQ(peek_parse_anon_size("Name:\tRssAnon: 5 kB\n", &size), -ENOENT);
        CHECK_EQ(peek_parse_anon_size("", &size), -ENOENT);
        peek_service("/system.slice/foo.service", svc, sizeof svc);
        CHECK_STREQ(svc, "foo.service");
        peek_service("/user.slice/user-1000.slice/session-3.scope", svc, sizeof svc);
        CHECK_STREQ(svc, "");
        peek_service("/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", svc, sizeof svc);
        CHECK_STREQ(svc, "user@1000.service/x.service");
        peek_service("/user.slice/user-1000.slice/user@1000.service/init.scope", svc, sizeof svc);
        CHECK_STREQ(svc, "");
}

static void test_watchdog_parsers(void) {
        uint64_t cpu = 0, runs = 0;

        CHECK_EQ(watchdog_parse_schedstat("123456789 5000 42\n", &cpu, &runs), 0);
        CHECK_EQ(cpu, UINT64_C(123456789));
        CHECK_EQ(runs, UINT64_C(42));
        CHECK_EQ(watchdog_parse_schedstat("123 456\n", &cpu, &runs), -EBADMSG);
        CHECK_EQ(watchdog_parse_schedstat("", &cpu, &runs), -EBADMSG);
        /* a comm with spaces and parentheses: the fields start after the last ')' */
        CHECK_EQ(watchdog_parse_stat("77 (a) b (c) T 1 77 77 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 1 0 5\n", &cpu),
                 0);
        CHECK_EQ(cpu, UINT64_C(281));
        CHECK_EQ(watchdog_parse_stat("77 (x) S 1 2\n", &cpu), -EBADMSG);
        CHECK_EQ(watchdog_parse_stat("no parenthesis", &cpu), -EBADMSG);
}

int main(void) {
        test_burst_and_window();
        test_roll_on_next_crash_and_done();
        test_service();
        test_disabled_and_unknown();
        test_cap();
        test_user_cap();
        test_table_full();
        test_peek_parsers();
        test_watchdog_parsers();
        TESTS_DONE();
}
