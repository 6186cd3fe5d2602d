/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store's vacuum: the records' share of MaxUse= and their age limit. Writes only its own
 * directories under /var/tmp, removed at the end. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "tests.h"
#include "vacuum.h"

#define BLOCK 4096
#define BOOT "0123456789abcdef0123456789abcdef"
#define T0 UINT64_C(1796301477000000)

static void put(int dir, const char *name, size_t blocks) {
        static const char buf[BLOCK] = { 1 };
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        CHECK(fd >= 0);
        for (size_t i = 0; i < blocks; i++)
                CHECK_EQ(write(fd, buf, sizeof buf), (ssize_t) sizeof buf);
        CHECK_EQ(fsync(fd), 0);
        close(fd);
}

static bool exists(int dir, const char *name) {
        return faccessat(dir, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static int make_store(char *path, unsigned n_records) {
        char name[128];
        int dir;

        CHECK(mkdtemp(path) != NULL);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        put(dir, "core.x.0." BOOT ".100.1796301477000000.zst", 2);
        for (unsigned i = 0; i < n_records; i++) {
                snprintf(name, sizeof name, "record.x.0." BOOT ".%u.%llu.export", 200 + i,
                         (unsigned long long) (T0 + i * USEC_PER_SEC));
                put(dir, name, 1);
        }
        return dir;
}

static void cleanup(char *path, int dir) {
        char cmd[300];

        close(dir);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
        CHECK_EQ(system(cmd), 0);
}

/* Records outlive their cores but take at most a quarter of MaxUse=: the oldest go, the newest
 * always stays; the core named keep stays whatever the limits say. */
static void test_records_share(void) {
        char path[] = "/var/tmp/test-vacuum.XXXXXX", name[128];
        VacuumLimits l = { .max_use = 8 * BLOCK, .keep_free = 0, .max_age_usec = UINT64_MAX, .now_usec = T0 };
        VacuumStats s;
        int dir = make_store(path, 10);

        CHECK_EQ(vacuum_run(dir, &l, "core.x.0." BOOT ".100.1796301477000000.zst", NULL, NULL, &s), 0);
        CHECK(exists(dir, "core.x.0." BOOT ".100.1796301477000000.zst"));
        CHECK_EQ(s.n_records_deleted, 8); /* a record is a block: a quarter of 8 blocks keeps 2 */
        CHECK_EQ(s.n_records, 2);
        for (unsigned i = 0; i < 10; i++) {
                snprintf(name, sizeof name, "record.x.0." BOOT ".%u.%llu.export", 200 + i,
                         (unsigned long long) (T0 + i * USEC_PER_SEC));
                CHECK_EQ(exists(dir, name), i >= 8);
        }
        cleanup(path, dir);
}

/* MaxAgeSec= takes old records too, unless only cores are meant (coredumpctl vacuum
 * --older-than); suppressed.* summaries count as records. */
static void test_records_age(void) {
        char path[] = "/var/tmp/test-vacuum.XXXXXX";
        VacuumLimits l = { .max_use = UINT64_C(1) << 40, .keep_free = 0, .max_age_usec = 5 * USEC_PER_SEC,
                           .now_usec = T0 + 10 * USEC_PER_SEC, .max_age_cores_only = true };
        VacuumStats s;
        int dir = make_store(path, 10);

        put(dir, "suppressed." BOOT ".1796301477000000.0badf00d.export", 1);
        CHECK_EQ(vacuum_run(dir, &l, NULL, NULL, NULL, &s), 0);
        CHECK_EQ(s.n_deleted, 1); /* the core, 10 s old */
        CHECK_EQ(s.n_records_deleted, 0);
        CHECK_EQ(s.n_records, 11);
        l.max_age_cores_only = false;
        CHECK_EQ(vacuum_run(dir, &l, NULL, NULL, NULL, &s), 0);
        CHECK_EQ(s.n_records_deleted, 6); /* records of T0 .. T0 + 4 s, and the summary of T0 */
        CHECK(!exists(dir, "suppressed." BOOT ".1796301477000000.0badf00d.export"));
        cleanup(path, dir);
}

int main(void) {
        test_records_share();
        test_records_age();
        TESTS_DONE();
}
