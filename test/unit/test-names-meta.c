/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core names, the auxv, limits and credentials parsers, and who may read a stored core. Reads
 * only /proc/sys/kernel/random/boot_id. */
#include <elf.h>

#include "container.h"
#include "coredump-name.h"
#include "meta.h"
#include "store.h"
#include "tests.h"

static void test_names(void) {
        char buf[COREDUMP_NAME_MAX], id[BOOT_ID_STRING_MAX];

        CHECK_EQ(coredump_escape_comm("a.b c/d\\e\x01", buf, sizeof buf), 25);
        CHECK_STREQ(buf, "a\\x2eb\\x20c\\x2fd\\x5ce\\x01");
        CHECK_EQ(coredump_escape_comm("toolong", buf, 5), -ENOBUFS);
        CHECK_EQ(coredump_filename(buf, sizeof buf, "sleep", 1000, "0123456789abcdef0123456789abcdef", 77,
                                   1700000000000000ULL, ".zst"),
                 0);
        CHECK_STREQ(buf, "core.sleep.1000.0123456789abcdef0123456789abcdef.77.1700000000000000.zst");
        CHECK_EQ(coredump_filename(buf, sizeof buf, NULL, 0, "b", 1, 2, ""), 0);
        CHECK_STREQ(buf, "core.unknown.0.b.1.2");
        CHECK_EQ(read_boot_id(id), 0);
        CHECK_EQ(strlen(id), 32);
}

static void test_auxv(void) {
        uint64_t auxv[] = { AT_PAGESZ, 4096, AT_SECURE, 1, AT_NULL, 0 };
        bool secure = false;

        CHECK_EQ(meta_parse_auxv_secure((uint8_t *) auxv, sizeof auxv, &secure), 0);
        CHECK(secure);
        auxv[3] = 0;
        CHECK_EQ(meta_parse_auxv_secure((uint8_t *) auxv, sizeof auxv, &secure), 0);
        CHECK(!secure);
        /* cut in the middle of the AT_SECURE pair, or after AT_NULL: unknown */
        CHECK_EQ(meta_parse_auxv_secure((uint8_t *) auxv, 3 * 8, &secure), -ENODATA);
        auxv[2] = AT_NULL;
        CHECK_EQ(meta_parse_auxv_secure((uint8_t *) auxv, sizeof auxv, &secure), -ENODATA);
        CHECK_EQ(meta_parse_auxv_secure(NULL, 0, &secure), -ENODATA);
}

static void test_limits(void) {
        uint64_t v;

        CHECK_EQ(meta_parse_limits_core("Limit Soft Hard Units\nMax cpu time unlimited unlimited seconds\n"
                                        "Max core file size        unlimited            unlimited            bytes\n",
                                        &v),
                 0);
        CHECK_EQ(v, UINT64_MAX);
        CHECK_EQ(meta_parse_limits_core("x\nMax core file size        0            unlimited            bytes\n", &v), 0);
        CHECK_EQ(v, 0);
        CHECK_EQ(meta_parse_limits_core("x\nMax cpu time 1 1 s\n", &v), -ENODATA);
        CHECK_EQ(meta_parse_limits_core("x\nMax core file size        lots", &v), -EBADMSG);
}

static void test_reader(void) {
        PidfdInfo i = { .coredump_mask = PIDFD_COREDUMPED | PIDFD_COREDUMP_USER, .ruid = 1000, .euid = 1000,
                        .rgid = 1000, .egid = 1000 };
        CrashMeta m = { .proc_valid = true, .auxv_valid = true, .at_secure = false };

        CHECK_EQ(store_reader_uid(&i, &m), 1000);
        m.at_secure = true;
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
        m.at_secure = false;
        m.auxv_valid = false; /* unknown is not "not secure" */
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
        m.auxv_valid = true;
        i.euid = 0;
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
        i.euid = 1000;
        i.coredump_mask = PIDFD_COREDUMPED | PIDFD_COREDUMP_ROOT;
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
        i.coredump_mask = PIDFD_COREDUMPED | PIDFD_COREDUMP_USER;
        i.ruid = i.euid = 999; /* system user */
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
        i.ruid = i.euid = NOBODY_UID;
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
        i.ruid = i.euid = 61184; /* DynamicUser= */
        CHECK_EQ(store_reader_uid(&i, &m), UID_INVALID);
}

/* Regular users get their cores; system users, nobody and systemd's DynamicUser= range (uids
 * recycled between unrelated services) do not. */
static void test_uid_may_read(void) {
        CHECK(!store_uid_may_read(0));
        CHECK(!store_uid_may_read(SYSTEM_UID_MAX));
        CHECK(store_uid_may_read(SYSTEM_UID_MAX + 1));
        CHECK(store_uid_may_read(DYNAMIC_UID_MIN - 1));
        CHECK(!store_uid_may_read(DYNAMIC_UID_MIN));
        CHECK(!store_uid_may_read(63000));
        CHECK(!store_uid_may_read(DYNAMIC_UID_MAX));
        CHECK(store_uid_may_read(DYNAMIC_UID_MAX + 1));
        CHECK(!store_uid_may_read(NOBODY_UID));
        CHECK(store_uid_may_read(65536));
        CHECK(!store_uid_may_read(UID_INVALID));
}

static void test_container_ids(void) {
        const char *map = "         0     100000      65536\n     65536          0          1\n";
        const char *status = "Name:\tx\nPid:\t4242\nNSpid:\t4242\t17\t2\nUid:\t0\n";
        uint32_t id;
        pid_t pid;

        CHECK_EQ(container_map_id(map, 100000, &id), 0);
        CHECK_EQ(id, 0U);
        CHECK_EQ(container_map_id(map, 165535, &id), 0);
        CHECK_EQ(id, 65535U);
        CHECK_EQ(container_map_id(map, 0, &id), 0);
        CHECK_EQ(id, 65536U);
        CHECK_EQ(container_map_id(map, 165536, &id), -ENOENT); /* past the range: unmapped */
        CHECK_EQ(container_map_id(map, 1000, &id), -ENOENT);
        CHECK_EQ(container_map_id("", 0, &id), -ENOENT);
        CHECK_EQ(container_map_id("0 4294967295 1\n", 0, &id), -ENOENT);
        CHECK_EQ(container_map_id("4294967294 0 10\n", 5, &id), -ENOENT); /* would overflow */
        CHECK_EQ(container_last_nspid(status, &pid), 0);
        CHECK_EQ(pid, 2);
        CHECK_EQ(container_last_nspid("Name:\tx\nNSpid:\t99\n", &pid), 0);
        CHECK_EQ(pid, 99);
        CHECK_EQ(container_last_nspid("Name:\tx\n", &pid), -ENODATA);
        CHECK_EQ(container_last_nspid("Name:\tx\nNSpid:\t-1\n", &pid), -EBADMSG);
        CHECK_EQ(container_last_nspid("Name:\tx\nNSpid:\n", &pid), -EBADMSG);
}

/* The collector's credentials: the fs ids, the groups (as many as the line has, up to
 * NGROUPS_MAX), the effective capabilities. */
static void test_creds(void) {
        const char *head = "Name:\tx\nUid:\t1000\t1001\t1002\t1003\nGid:\t2000\t2001\t2002\t2003\n";
        char status[1024];
        TaskCreds c;
        size_t big_len = strlen("Groups:") + (TASK_GROUPS_MAX + 1) * strlen(" 7") + strlen("\nCapEff:\t0\n") + 1;
        char *big = malloc(strlen(head) + big_len);
        size_t at;

        snprintf(status, sizeof status, "%sGroups:\t27 100 65534 \nCapEff:\t0000000000000006\n", head);
        CHECK_EQ(meta_parse_status_creds(status, &c), 0);
        CHECK_EQ(c.fsuid, 1003);
        CHECK_EQ(c.fsgid, 2003);
        CHECK_EQ(c.n_groups, 3);
        CHECK_EQ(c.groups[0], 27);
        CHECK_EQ(c.groups[1], 100);
        CHECK_EQ(c.groups[2], 65534);
        CHECK_EQ(c.cap_eff, 6);
        meta_creds_done(&c);

        snprintf(status, sizeof status, "%sGroups:\t\nCapEff:\t0\n", head);
        CHECK_EQ(meta_parse_status_creds(status, &c), 0);
        CHECK_EQ(c.n_groups, 0);
        meta_creds_done(&c);

        snprintf(status, sizeof status, "%sGroups:\t27 x\nCapEff:\t0\n", head);
        CHECK_EQ(meta_parse_status_creds(status, &c), -EBADMSG);
        meta_creds_done(&c);
        snprintf(status, sizeof status, "%sGroups:\t4294967295\nCapEff:\t0\n", head);
        CHECK_EQ(meta_parse_status_creds(status, &c), -EBADMSG);
        meta_creds_done(&c);

        /* NGROUPS_MAX groups are taken, one more is not */
        CHECK(big);
        if (!big)
                return;
        for (size_t n = TASK_GROUPS_MAX; n <= TASK_GROUPS_MAX + 1; n++) {
                at = (size_t) sprintf(big, "%sGroups:", head);
                for (size_t i = 0; i < n; i++)
                        at += (size_t) sprintf(big + at, " 7");
                sprintf(big + at, "\nCapEff:\t0\n");
                CHECK_EQ(meta_parse_status_creds(big, &c), n == TASK_GROUPS_MAX ? 0 : -EBADMSG);
                if (n == TASK_GROUPS_MAX) {
                        CHECK_EQ(c.n_groups, TASK_GROUPS_MAX);
                        CHECK_EQ(c.groups[TASK_GROUPS_MAX - 1], 7);
                }
                meta_creds_done(&c);
        }
        free(big);
}

int main(void) {
        test_names();
        test_creds();
        test_container_ids();
        test_auxv();
        test_limits();
        test_reader();
        test_uid_may_read();
        TESTS_DONE();
}
