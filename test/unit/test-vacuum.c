/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store's vacuum: the records' share of MaxUse= and their age limit; the fair choice of
 * victims (pure) and the room a new core gets. Writes only its own directories under /var/tmp,
 * removed at the end. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "tests.h"
#include "vacuum-plan.h"
#include "vacuum.h"

#define BLOCK TEST_BLOCK
#define BOOT "0123456789abcdef0123456789abcdef"
#define T0 UINT64_C(1796301477000000)

static void put(int dir, const char *name, size_t blocks) {
        test_put_blocks(dir, name, blocks);
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

/* The newest record is spared by the budget, not by the age limit: alone and too old, it goes. */
static void test_records_age_newest(void) {
        char path[] = "/var/tmp/test-vacuum.XXXXXX";
        VacuumLimits l = { .max_use = UINT64_C(1) << 40, .keep_free = 0, .max_age_usec = 5 * USEC_PER_SEC,
                           .now_usec = T0 + 10 * USEC_PER_SEC };
        VacuumStats s;
        int dir = make_store(path, 1);

        CHECK_EQ(vacuum_run(dir, &l, NULL, NULL, NULL, &s), 0);
        CHECK_EQ(s.n_records_deleted, 1);
        CHECK_EQ(s.n_deleted, 1);
        cleanup(path, dir);
}

#define MIB (UINT64_C(1) << 20)
#define ROOT 0
#define ALICE 1000
#define BOB 1001

static VacuumFile file(uid_t uid, uint64_t usec, uint64_t mib, bool record) {
        return (VacuumFile) { .uid = uid, .usec = usec, .bytes = mib * MIB, .record = record };
}

static unsigned doomed_of(const VacuumFile *f, size_t n, uid_t uid, bool record) {
        unsigned k = 0;

        for (size_t i = 0; i < n; i++)
                k += f[i].doomed && f[i].uid == uid && f[i].record == record;
        return k;
}

/* The core just stored is larger than MaxUse=: it goes, root's older core stays. */
static void test_plan_core_past_max_use(void) {
        VacuumFile f[] = { file(ROOT, 1, 2, false), file(ALICE, 5, 20, false) };
        VacuumBudget b = { .max_use = 10 * MIB, .avail = UINT64_MAX, .records = UINT64_MAX };
        VacuumPlanStats st;

        f[1].keep = true;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed);
        CHECK(f[1].doomed);
}

/* A user's flood past MaxUse=: only that user's oldest cores go, until the store fits; root's
 * older core and the kept (newest) one stay. */
static void test_plan_flood_only_own(void) {
        VacuumFile f[12];
        VacuumBudget b = { .max_use = 12 * MIB, .avail = UINT64_MAX, .records = UINT64_MAX };
        VacuumPlanStats st;

        f[0] = file(ROOT, 1, 3, false);
        for (unsigned i = 1; i < ELEMENTSOF(f); i++)
                f[i] = file(ALICE, 10 + i, 2, false);
        f[11].keep = true;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed);
        CHECK(!f[11].doomed);
        CHECK_EQ(doomed_of(f, ELEMENTSOF(f), ALICE, false), 7); /* 3 + 2*4 = 11 MiB <= 12 */
        for (unsigned i = 1; i <= 7; i++)
                CHECK(f[i].doomed); /* the oldest first */
}

/* At par, the owner with the oldest core gives first; then the next heaviest. */
static void test_plan_par(void) {
        VacuumFile f[] = { file(BOB, 1, 4, false), file(ALICE, 2, 4, false), file(ALICE, 3, 4, false),
                           file(BOB, 4, 4, false) };
        VacuumBudget b = { .max_use = 9 * MIB, .avail = UINT64_MAX, .records = UINT64_MAX };
        VacuumPlanStats st;

        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(f[0].doomed);  /* equal bytes: Bob's core is the older */
        CHECK(f[1].doomed);  /* then Alice is the heavier */
        CHECK(!f[2].doomed);
        CHECK(!f[3].doomed);
}

/* The heaviest owner has only the kept core left: nothing of others goes for it. */
static void test_plan_stop_at_keep(void) {
        VacuumFile f[] = { file(ROOT, 1, 3, false), file(ALICE, 2, 9, false) };
        VacuumBudget b = { .max_use = 10 * MIB, .avail = UINT64_MAX, .records = UINT64_MAX };
        VacuumPlanStats st;

        f[1].keep = true;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed);
        CHECK(!f[1].doomed);
        CHECK(st.stopped_at_keep);
}

/* KeepFree=: cores go (heaviest first) while that can restore it; a file system filled far
 * past what the cores hold empties nothing. */
static void test_plan_keep_free(void) {
        VacuumFile f[] = { file(ROOT, 1, 2, false), file(ALICE, 2, 3, false), file(ALICE, 3, 3, false) };
        VacuumBudget b = { .max_use = UINT64_MAX, .keep_free = 10 * MIB, .avail = 7 * MIB, .records = UINT64_MAX };
        VacuumPlanStats st;

        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!st.keep_free_unreachable);
        CHECK(!f[0].doomed);
        CHECK(f[1].doomed); /* 3 MiB make up the deficit */
        CHECK(!f[2].doomed);

        f[1].doomed = false;
        b.avail = 1 * MIB; /* 9 MiB short, the cores hold 8 */
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(st.keep_free_unreachable);
        CHECK_EQ(doomed_of(f, ELEMENTSOF(f), ROOT, false) + doomed_of(f, ELEMENTSOF(f), ALICE, false), 0);
}

/* Records are budgeted per owner too: a user's sixteen 4 MiB records flush their own older
 * ones, never root's; summaries (nobody's) are an owner of their own. */
static void test_plan_records_fair(void) {
        VacuumFile f[20];
        VacuumBudget b = { .max_use = UINT64_MAX, .avail = UINT64_MAX, .records = 64 * MIB };
        VacuumPlanStats st;
        size_t n = 0;

        f[n++] = file(ROOT, 1, 1, true);
        f[n++] = file(UID_INVALID, 2, 1, true);
        for (unsigned i = 0; i < 17; i++)
                f[n++] = file(ALICE, 10 + i, 4, true);
        f[n - 1].keep = true; /* the newest record */
        CHECK_EQ(vacuum_plan(f, n, &b, &st), 0);
        CHECK(!f[0].doomed);
        CHECK(!f[1].doomed);
        CHECK_EQ(doomed_of(f, n, ALICE, true), 2); /* 2 + 68 MiB: two go to fit 64 */
        CHECK(f[2].doomed && f[3].doomed);
}

/* A new core's room: MaxUse= less the cores in flight and the stored cores it may not
 * displace, and the file system above KeepFree=. */
static void test_core_room(void) {
        CHECK_EQ(vacuum_core_room(100, 10, 1000, 30, 0), 70);
        CHECK_EQ(vacuum_core_room(100, 10, 50, 30, 0), 40);
        CHECK_EQ(vacuum_core_room(100, 10, 5, 0, 0), 0);
        CHECK_EQ(vacuum_core_room(100, 10, 1000, 200, 0), 0);
        CHECK_EQ(vacuum_core_room(100, 10, 1000, 30, 60), 10);
        CHECK_EQ(vacuum_core_room(100, 10, 1000, 0, UINT64_MAX), 0);
        CHECK_EQ(vacuum_core_room(100, 10, 1000, UINT64_MAX, UINT64_MAX), 0);
}

/* Who may displace whom: a user only themselves; a system uid users and summaries, not another
 * system uid. */
static void test_may_displace(void) {
        CHECK(vacuum_may_displace(ALICE, ALICE));
        CHECK(!vacuum_may_displace(ALICE, ROOT));
        CHECK(!vacuum_may_displace(ALICE, BOB));
        CHECK(!vacuum_may_displace(ALICE, UID_INVALID));
        CHECK(vacuum_may_displace(ROOT, ALICE));
        CHECK(vacuum_may_displace(ROOT, UID_INVALID));
        CHECK(vacuum_may_displace(ROOT, ROOT));
        CHECK(!vacuum_may_displace(ROOT, 100));
        CHECK(vacuum_may_displace(999, 1000));
        CHECK(!vacuum_may_displace(1000, 999));
}

/* A user's core lighter than root's pushes the store past MaxUse=: nothing of root's goes (the
 * administrator's rule would take root's, the heavier); the user's own older core does. */
static void test_plan_lighter_user(void) {
        VacuumFile f[] = { file(ROOT, 1, 6, false), file(ALICE, 2, 1, false), file(ALICE, 3, 4, false) };
        VacuumBudget b = { .max_use = 10 * MIB, .avail = UINT64_MAX, .records = UINT64_MAX, .for_crash = true,
                           .crash_uid = ALICE };
        VacuumPlanStats st;

        f[2].keep = true;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed);
        CHECK(f[1].doomed);
        CHECK(!f[2].doomed);
        CHECK(!st.stopped_at_keep);

        /* nothing of its own left, within what root's and Bob's cores leave it (its cap): all stay */
        f[1].doomed = false;
        f[1].uid = BOB;
        f[2].bytes = 3 * MIB;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed && !f[1].doomed && !f[2].doomed);

        /* grown past what the others' cores leave it: the kept core itself goes, nothing else */
        f[2].bytes = 4 * MIB;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed && !f[1].doomed);
        CHECK(f[2].doomed);
}

/* Subordinate uids splitting a flood so that any victim is the heaviest: a user's crash still
 * takes nothing of anyone else; root's crash takes the heaviest user's oldest first, then its
 * own oldest, never another system uid's. */
static void test_plan_split_flood(void) {
        VacuumFile f[] = { file(ROOT, 1, 5, false), file(100, 2, 5, false), file(ALICE, 3, 3, false),
                           file(BOB, 4, 2, false), file(ALICE, 5, 2, false), file(ROOT, 6, 2, false) };
        VacuumBudget b = { .max_use = 10 * MIB, .avail = UINT64_MAX, .records = UINT64_MAX, .for_crash = true,
                           .crash_uid = BOB };
        VacuumPlanStats st;

        f[3].keep = true;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK_EQ(doomed_of(f, ELEMENTSOF(f), ROOT, false) + doomed_of(f, ELEMENTSOF(f), 100, false) +
                 doomed_of(f, ELEMENTSOF(f), ALICE, false), 0);
        CHECK(f[3].doomed); /* the others hold more than MaxUse=: its cap was nothing, it grew */
        CHECK(st.stopped_at_keep);

        /* root's new core (19 MiB stored, 10 allowed): Alice's 5, Bob's 2, then root's own oldest */
        f[3].keep = false;
        f[3].doomed = false;
        f[5].keep = true;
        b.crash_uid = ROOT;
        b.max_use = 12 * MIB;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(f[2].doomed && f[4].doomed); /* Alice, the heaviest user: 5 MiB */
        CHECK(f[3].doomed);                /* then Bob: 12 MiB left */
        CHECK(!f[0].doomed && !f[1].doomed && !f[5].doomed);
        CHECK(!st.stopped_at_keep);
        b.max_use = 8 * MIB;
        for (unsigned i = 0; i < ELEMENTSOF(f); i++)
                f[i].doomed = false;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(f[0].doomed);  /* root's own oldest, after the users' */
        CHECK(!f[1].doomed); /* another system uid's: never */
        CHECK(!f[5].doomed);
}

/* KeepFree= for a user's crash: only its own cores count toward restoring it, and only they go;
 * the disk filled by the user does not cost root a core. */
static void test_plan_keep_free_for_user(void) {
        VacuumFile f[] = { file(ROOT, 1, 6, false), file(ALICE, 2, 1, false), file(ALICE, 3, 1, false) };
        VacuumBudget b = { .max_use = UINT64_MAX, .keep_free = 10 * MIB, .avail = 9 * MIB, .records = UINT64_MAX,
                           .for_crash = true, .crash_uid = ALICE };
        VacuumPlanStats st;

        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!st.keep_free_unreachable);
        CHECK(!f[0].doomed);
        CHECK(f[1].doomed);
        CHECK(!f[2].doomed);

        f[1].doomed = false;
        b.avail = 5 * MIB; /* 5 MiB short: root's core could restore it, Alice's 2 cannot */
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(st.keep_free_unreachable);
        CHECK(!f[0].doomed && !f[1].doomed && !f[2].doomed);

        b.crash_uid = ROOT; /* root's crash: Alice's cores first, then root's own */
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!st.keep_free_unreachable);
        CHECK(f[0].doomed && f[1].doomed && f[2].doomed);
}

/* Records for a user's crash: only the user's own go, even when root's are the heaviest. */
static void test_plan_records_for_user(void) {
        VacuumFile f[] = { file(ROOT, 1, 40, true), file(UID_INVALID, 2, 1, true), file(ALICE, 3, 20, true),
                           file(ALICE, 4, 5, true) };
        VacuumBudget b = { .max_use = UINT64_MAX, .avail = UINT64_MAX, .records = 64 * MIB, .for_crash = true,
                           .crash_uid = ALICE };
        VacuumPlanStats st;

        f[3].keep = true;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed && !f[1].doomed && !f[3].doomed);
        CHECK(f[2].doomed);
}

/* The periodic vacuum's records (records_users_first): a user's flood past the budget, lighter
 * than root's records, costs users' records, never root's (the administrator's rule would take
 * root's, the heaviest); cores keep the owner-using-the-most rule. System uids' records past the
 * budget on their own go too, the heaviest's first. */
static void test_plan_records_users_first(void) {
        VacuumFile f[] = { file(ROOT, 1, 40, true), file(ALICE, 2, 20, true), file(ALICE, 3, 8, true),
                           file(ROOT, 4, 1, true), file(ROOT, 5, 6, false), file(ALICE, 6, 5, false) };
        VacuumBudget b = { .max_use = 10 * MIB, .avail = UINT64_MAX, .records = 64 * MIB, .records_users_first = true };
        VacuumPlanStats st;

        f[3].keep = true; /* the newest record */
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(!f[0].doomed && !f[2].doomed);
        CHECK(f[1].doomed);
        CHECK(f[4].doomed && !f[5].doomed); /* cores: the heaviest owner's, root's */

        for (unsigned i = 0; i < ELEMENTSOF(f); i++)
                f[i].doomed = false;
        b.records_users_first = false;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(f[0].doomed && !f[1].doomed); /* the administrator's rule: root, the heaviest */

        for (unsigned i = 0; i < ELEMENTSOF(f); i++)
                f[i].doomed = false;
        b.records_users_first = true;
        b.records = 30 * MIB; /* past it with the users' records gone: the system's go, the heaviest's */
        f[2].uid = 100;
        CHECK_EQ(vacuum_plan(f, ELEMENTSOF(f), &b, &st), 0);
        CHECK(f[1].doomed && f[0].doomed);
        CHECK(!f[2].doomed && !f[3].doomed); /* 8 + 1 MiB left */
}

/* The file system as it is (a real scan): the store's vacuum keeps root's core when a user's
 * core just stored is past MaxUse=. */
static void test_run_keeps_root(void) {
        char path[] = "/var/tmp/test-vacuum.XXXXXX";
        const char *big = "core.x.1000." BOOT ".300.1796301478000000.zst";
        VacuumLimits l = { .max_use = 4 * BLOCK, .keep_free = 0, .max_age_usec = UINT64_MAX, .now_usec = T0 };
        VacuumStats s;
        int dir = make_store(path, 0);

        put(dir, big, 8);
        CHECK_EQ(vacuum_run(dir, &l, big, NULL, NULL, &s), 0);
        CHECK(exists(dir, "core.x.0." BOOT ".100.1796301477000000.zst"));
        CHECK(!exists(dir, big));
        CHECK(s.keep_deleted);
        CHECK_EQ(s.n_deleted, 1);
        cleanup(path, dir);
}

/* A real scan: what a user's crash may not displace (the owners' totals it is read from: records
 * not counted, one entry per owner), and the post-store vacuum of a user's core lighter than
 * root's keeps root's. */
static void test_run_held(void) {
        char path[] = "/var/tmp/test-vacuum.XXXXXX";
        const char *user = "core.x.1000." BOOT ".300.1796301478000000.zst";
        VacuumLimits l = { .max_use = 3 * BLOCK, .keep_free = 0, .max_age_usec = UINT64_MAX, .now_usec = T0,
                           .for_crash = true, .crash_uid = 1000 };
        uint64_t held;
        VacuumStats s;
        VacuumOwner *o = NULL;
        size_t n = 0;
        int dir = make_store(path, 2); /* root's core: 2 blocks; two records of root's */

        put(dir, user, 1);
        put(dir, "core.x.1000." BOOT ".301.1796301479000000.zst", 3);
        CHECK_EQ(vacuum_owners(dir, &o, &n), 0);
        CHECK_EQ(n, 2);
        CHECK_EQ(o[0].uid, 0);
        CHECK_EQ(o[0].bytes, 2 * BLOCK);
        CHECK_EQ(o[1].uid, 1000);
        CHECK_EQ(o[1].bytes, 4 * BLOCK);
        CHECK_EQ(vacuum_held_of(o, n, 1000), 2 * BLOCK);
        CHECK_EQ(vacuum_held_of(o, n, 0), 0);
        CHECK_EQ(vacuum_held_of(o, n, 1001), 6 * BLOCK);
        CHECK_EQ(vacuum_held_of(o, n, 999), 2 * BLOCK); /* another system uid: root's, not the user's */
        free(o);
        CHECK_EQ(unlinkat(dir, "core.x.1000." BOOT ".301.1796301479000000.zst", 0), 0);
        CHECK_EQ(vacuum_held(dir, 1000, &held), 0);
        CHECK_EQ(held, 2 * BLOCK);
        CHECK_EQ(vacuum_held(dir, 0, &held), 0);
        CHECK_EQ(held, 0);
        put(dir, user, 2); /* 4 blocks, MaxUse= 3 */
        CHECK_EQ(vacuum_run(dir, &l, user, NULL, NULL, &s), 0);
        CHECK(exists(dir, "core.x.0." BOOT ".100.1796301477000000.zst"));
        CHECK(!exists(dir, user)); /* past what root's core leaves it: its own core goes */
        CHECK(s.keep_deleted);
        CHECK_EQ(s.n_deleted, 1);
        cleanup(path, dir);
}

int main(void) {
        test_records_share();
        test_records_age();
        test_records_age_newest();
        test_plan_core_past_max_use();
        test_plan_flood_only_own();
        test_plan_par();
        test_plan_stop_at_keep();
        test_plan_keep_free();
        test_plan_records_fair();
        test_core_room();
        test_may_displace();
        test_plan_lighter_user();
        test_plan_split_flood();
        test_plan_keep_free_for_user();
        test_plan_records_for_user();
        test_plan_records_users_first();
        test_run_keeps_root();
        test_run_held();
        TESTS_DONE();
}
