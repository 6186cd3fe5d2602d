/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's running totals of the store (StoreUsage): what a crash may not displace, kept
 * without a scan per crash, equal to a fresh scan after the daemon's own stores and deletions.
 * Writes only its own directory under /var/tmp, removed at the end. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "store.h"
#include "tests.h"
#include "vacuum.h"

#define BLOCK ((uint64_t) TEST_BLOCK)
#define ROOT_CORE "core.x.0.0123456789abcdef0123456789abcdef.100.1796301477000000.zst"
#define USER_CORE_1 "core.x.1000.0123456789abcdef0123456789abcdef.200.1796301478000000.zst"
#define USER_CORE_2 "core.x.1000.0123456789abcdef0123456789abcdef.201.1796301479000000.zst"
#define GIB (UINT64_C(1) << 30)

static void put(int dir, const char *name, size_t blocks) {
        test_put_blocks(dir, name, blocks);
}

/* What a crash of uid may not displace, as the manager computes it from u. */
static uint64_t held_cached(int dir, const Config *c, uid_t uid, StoreUsage *u) {
        uint64_t keep_free, held = UINT64_MAX;

        (void) store_core_cap(dir, c, uid, 0, 0, u, &keep_free, &held);
        return held;
}

/* The same from a fresh scan. */
static uint64_t held_scanned(int dir, uid_t uid) {
        uint64_t held = UINT64_MAX;

        CHECK_EQ(vacuum_held(dir, uid, &held), 0);
        return held;
}

static void test_totals(int dir) {
        Config c;
        StoreUsage u = {};

        config_init_defaults(&c);
        c.max_use = GIB;
        c.keep_free = 0;
        c.max_age_usec = UINT64_MAX;

        /* an empty store */
        CHECK_EQ(held_cached(dir, &c, 1000, &u), 0);
        CHECK(u.owners_known);
        CHECK_EQ(u.n_owners, 0);

        /* a core someone else put there is not seen until the totals are forgotten (or 30 s) */
        put(dir, ROOT_CORE, 2);
        CHECK_EQ(held_cached(dir, &c, 1000, &u), 0);
        store_usage_forget(&u);
        CHECK_EQ(held_cached(dir, &c, 1000, &u), 2 * BLOCK);

        /* the daemon's own stores are counted without a scan */
        put(dir, USER_CORE_1, 3);
        CHECK(!store_vacuum(dir, &c, USER_CORE_1, 3 * BLOCK, &u));
        put(dir, USER_CORE_2, 1);
        CHECK(!store_vacuum(dir, &c, USER_CORE_2, 1 * BLOCK, &u));
        CHECK(u.owners_known);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), 6 * BLOCK);
        CHECK_EQ(held_cached(dir, &c, 1000, &u), 2 * BLOCK);
        CHECK_EQ(held_cached(dir, &c, 0, &u), 0);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), held_scanned(dir, 1001));

        /* its own deletion: the owner's total follows */
        CHECK_EQ(store_unlink_core(dir, USER_CORE_2, &u), 0);
        CHECK(u.owners_known);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), 5 * BLOCK);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), held_scanned(dir, 1001));

        /* the vacuum for root's crash deletes the user's core (MaxUse= 3 blocks): reported, taken
         * out of the totals, which still equal a scan */
        c.max_use = 3 * BLOCK;
        store_vacuum_for(dir, &c, 0, &u);
        CHECK(faccessat(dir, USER_CORE_1, F_OK, AT_SYMLINK_NOFOLLOW) < 0);
        CHECK(u.owners_known);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), 2 * BLOCK);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), held_scanned(dir, 1001));

        /* a core whose name says no owner: the totals are scanned again */
        put(dir, "core.unparsable", 1);
        CHECK_EQ(store_unlink_core(dir, "core.unparsable", &u), 0);
        CHECK(!u.owners_known);
        CHECK_EQ(held_cached(dir, &c, 1001, &u), 2 * BLOCK);
        CHECK(u.owners_known);
        store_usage_reset(&u);
        CHECK(!u.owners && u.n_owners == 0 && !u.owners_known && !u.known);
}

int main(void) {
        char path[] = "/var/tmp/test-store-usage.XXXXXX", cmd[sizeof path + 16];
        int dir;

        CHECK(mkdtemp(path) != NULL);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dir >= 0);
        test_totals(dir);
        close(dir);
        snprintf(cmd, sizeof cmd, "rm -rf %s", path);
        CHECK_EQ(system(cmd), 0);
        TESTS_DONE();
}
