/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump.conf: values, bounds, "Key=" resets, and the file search (precedence over three
 * directories, masking, order, the drop-in bound). Writes only below its own /tmp directories. */
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

#include "build-config.h"
#include "config.h"
#include "macro.h"
#include "tests.h"

static int parse(Config *c, const char *text) {
        char buf[CONFIG_LINE_MAX];
        bool in_section = true;

        snprintf(buf, sizeof buf, "%s", text);
        return config_parse_line(c, "test.conf", 1, buf, &in_section);
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        fputs(text, f);
        fclose(f);
}

static void test_values(void) {
        Config c;

        config_init_defaults(&c);
        CHECK_EQ(c.storage, STORAGE_EXTERNAL);
        CHECK_EQ(c.compress, COMPRESSION_ZSTD);
        CHECK_EQ(c.compress_level, 3);
        CHECK_EQ(c.process_size_max, UINT64_C(32) << 30);
        CHECK_EQ(c.journal_size_max, UINT64_C(767) << 20);

        CHECK_EQ(parse(&c, "Storage=journal"), 0);
        CHECK_EQ(c.storage, STORAGE_JOURNAL);
        CHECK_EQ(parse(&c, "  Compress = lz4  "), 0);
        CHECK_EQ(c.compress, COMPRESSION_LZ4);
        CHECK_EQ(parse(&c, "Compress=no"), 0);
        CHECK_EQ(c.compress, COMPRESSION_NONE);
        CHECK_EQ(parse(&c, "# comment"), 0);
        CHECK_EQ(parse(&c, "UnknownKey=1"), 0); /* warned, ignored */

        /* absurd values are errors, never silently clamped */
        CHECK_EQ(parse(&c, "Storage=cloud"), -EINVAL);
        CHECK_EQ(parse(&c, "ProcessSizeMax=99999999999999999999"), -ERANGE);
        CHECK_EQ(parse(&c, "ExternalSizeMax=-5"), -EINVAL);
        CHECK_EQ(parse(&c, "SpareWorkers=100000"), -ERANGE);
        CHECK_EQ(parse(&c, "MaxParallel=0"), -ERANGE);
        CHECK_EQ(parse(&c, "TimeoutSec=0"), -ERANGE);
        CHECK_EQ(parse(&c, "TimeoutSec=400d"), -ERANGE); /* days parse, but past the 24 h bound */
        CHECK_EQ(parse(&c, "TimeoutSec=5 fortnights"), -EINVAL);
        CHECK_EQ(parse(&c, "CompressLevel=99"), -ERANGE);
        CHECK_EQ(parse(&c, "Directory=relative/path"), -EINVAL);
        CHECK_EQ(parse(&c, "Directory=/var/lib/../../etc"), -EINVAL);
        CHECK_EQ(parse(&c, "WorkerUser=bad user"), -EINVAL);
        CHECK_EQ(parse(&c, "NoEquals"), -EINVAL);
        CHECK_EQ(parse(&c, "RateLimitBurst=-1"), -ERANGE);
        CHECK_EQ(parse(&c, "KeepForwarded=perhaps"), -EINVAL);
        CHECK_EQ(parse(&c, "ForwardTimeoutSec=0"), -ERANGE);
        CHECK_EQ(parse(&c, "ForwardTimeoutSec=2h"), -ERANGE);
        CHECK_EQ(parse(&c, "ForwardTimeoutSec=infinity"), -ERANGE);
        CHECK_EQ(parse(&c, "ForwardTimeoutSec=soon"), -EINVAL);
        CHECK_EQ(parse(&c, "RateLimitBurst=1000000"), -ERANGE);
        CHECK_EQ(parse(&c, "RateLimitIntervalSec=30d"), -ERANGE);
        CHECK_EQ(parse(&c, "RateLimitIntervalSec=soon"), -EINVAL);
        CHECK_EQ(parse(&c, "MaxAgeSec=0"), -ERANGE);
        /* SpoolMax=: a sixteenth of the memory by default, capped at a quarter, 0 for none */
        CHECK_EQ(config_spool_max(&c, UINT64_C(16) << 30), UINT64_C(1) << 30);
        CHECK_EQ(parse(&c, "SpoolMax=-1"), -EINVAL);
        CHECK_EQ(parse(&c, "SpoolMax=0"), 0);
        CHECK_EQ(config_spool_max(&c, UINT64_C(16) << 30), 0);
        CHECK_EQ(parse(&c, "SpoolMax=100M"), 0);
        CHECK_EQ(config_spool_max(&c, UINT64_C(16) << 30), UINT64_C(100) << 20);
        CHECK_EQ(parse(&c, "SpoolMax=1E"), 0);
        CHECK_EQ(config_spool_max(&c, UINT64_C(16) << 30), UINT64_C(4) << 30);
        CHECK_EQ(parse(&c, "SpoolMax=infinity"), 0);
        CHECK_EQ(config_spool_max(&c, UINT64_C(16) << 30), UINT64_C(4) << 30);
        CHECK_EQ(parse(&c, "MaxAgeSec=1000000w"), -ERANGE);

        /* the limits: defaults, then set; 0 turns rate limiting off, infinity MaxAgeSec= */
        CHECK_EQ(c.rate_limit_burst, 10);
        CHECK_EQ(c.rate_limit_interval_usec, 60 * USEC_PER_SEC);
        CHECK_EQ(c.max_age_usec, UINT64_MAX);
        CHECK_EQ(parse(&c, "RateLimitBurst=0"), 0);
        CHECK_EQ(c.rate_limit_burst, 0);
        CHECK_EQ(parse(&c, "RateLimitIntervalSec=5min"), 0);
        CHECK_EQ(c.rate_limit_interval_usec, 300 * USEC_PER_SEC);
        CHECK_EQ(parse(&c, "MaxAgeSec=2w"), 0);
        CHECK_EQ(c.max_age_usec, 14 * 86400 * USEC_PER_SEC);
        CHECK_EQ(parse(&c, "MaxAgeSec=infinity"), 0);
        CHECK_EQ(c.max_age_usec, UINT64_MAX);
}

/* MaxParallelPerUser= and WorkerStallTimeoutSec=: bounds, "infinity", the derived default. */
static void test_worker_slots(void) {
        Config c;

        config_init_defaults(&c);
        /* the default: a quarter of MaxParallel=, at least one, following MaxParallel= */
        CHECK_EQ(c.max_parallel_per_user, PARALLEL_PER_USER_DEFAULT);
        CHECK_EQ(config_max_parallel_per_user(&c), 4U);
        CHECK_EQ(parse(&c, "MaxParallel=3"), 0);
        CHECK_EQ(config_max_parallel_per_user(&c), 1U);
        CHECK_EQ(parse(&c, "MaxParallel=256"), 0);
        CHECK_EQ(config_max_parallel_per_user(&c), 64U);
        CHECK_EQ(c.worker_stall_usec, 30 * USEC_PER_SEC);

        CHECK_EQ(parse(&c, "MaxParallelPerUser=0"), -ERANGE);
        CHECK_EQ(parse(&c, "MaxParallelPerUser=257"), -ERANGE);
        CHECK_EQ(parse(&c, "MaxParallelPerUser=-1"), -ERANGE);
        CHECK_EQ(parse(&c, "MaxParallelPerUser=many"), -EINVAL);
        CHECK_EQ(parse(&c, "MaxParallelPerUser=5"), 0);
        CHECK_EQ(config_max_parallel_per_user(&c), 5U);
        CHECK_EQ(parse(&c, "MaxParallelPerUser=infinity"), 0);
        CHECK_EQ(config_max_parallel_per_user(&c), PARALLEL_PER_USER_INFINITY);

        CHECK_EQ(parse(&c, "WorkerStallTimeoutSec=0"), -ERANGE);
        CHECK_EQ(parse(&c, "WorkerStallTimeoutSec=500ms"), -ERANGE);
        CHECK_EQ(parse(&c, "WorkerStallTimeoutSec=2h"), -ERANGE);
        CHECK_EQ(parse(&c, "WorkerStallTimeoutSec=later"), -EINVAL);
        CHECK_EQ(parse(&c, "WorkerStallTimeoutSec=5s"), 0);
        CHECK_EQ(c.worker_stall_usec, 5 * USEC_PER_SEC);
        CHECK_EQ(parse(&c, "WorkerStallTimeoutSec=infinity"), 0);
        CHECK_EQ(c.worker_stall_usec, WORKER_STALL_INFINITY);
}

/* MaxParallelPerUser= above MaxParallel= fails the load, whichever file sets which. */
static void test_per_user_above_total(void) {
        char dir[] = "/tmp/test-config.XXXXXX", path[256];
        Config c;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/coredump.conf", dir);
        write_file(path, "[Coredump]\nMaxParallel=4\nMaxParallelPerUser=5\n");
        CHECK_EQ(config_load(&c, path, NULL), -EINVAL);
        write_file(path, "[Coredump]\nMaxParallel=4\nMaxParallelPerUser=4\n");
        CHECK_EQ(config_load(&c, path, NULL), 0);
        write_file(path, "[Coredump]\nMaxParallel=4\nMaxParallelPerUser=infinity\n");
        CHECK_EQ(config_load(&c, path, NULL), 0);
        CHECK_EQ(config_max_parallel_per_user(&c), PARALLEL_PER_USER_INFINITY);
        unlink(path);
        rmdir(dir);
}

/* config_load() with one file and one drop-in directory, as --config= and --config-dir= give */
static void test_load_one_dir(void) {
        char dir[] = "/tmp/test-config.XXXXXX", path[256], dropins[256];
        Config c;

        /* files: main file, then drop-ins in order; ExternalSizeMax is its own key (32G default) */
        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/coredump.conf", dir);
        snprintf(dropins, sizeof dropins, "%s/coredump.conf.d", dir);
        mkdir(dropins, 0755);
        write_file(path, "[Coredump]\nProcessSizeMax=1G\nCompress=lz4\n");
        char d1[300], d2[300];
        snprintf(d1, sizeof d1, "%s/10-a.conf", dropins);
        snprintf(d2, sizeof d2, "%s/20-b.conf", dropins);
        write_file(d1, "[Coredump]\nProcessSizeMax=2G\n");
        write_file(d2, "[Coredump]\nCompress=zstd\n[Other]\nStorage=bogus\n");
        CHECK_EQ(config_load(&c, path, dropins), 0);
        CHECK_EQ(c.process_size_max, UINT64_C(2) << 30);
        CHECK_EQ(c.external_size_max, UINT64_C(32) << 30);
        CHECK_EQ(c.compress, COMPRESSION_ZSTD);

        /* one bad value anywhere fails the whole load */
        write_file(d2, "[Coredump]\nKeepFree=lots\n");
        CHECK_EQ(config_load(&c, path, dropins), -EINVAL);
#if HAVE_LZ4
        /* lz4 levels are checked against lz4's range */
        write_file(d2, "[Coredump]\nCompress=lz4\nCompressLevel=19\n");
        CHECK_EQ(config_load(&c, path, dropins), -EINVAL);
#else
        /* a build without lz4 refuses Compress=lz4 once the drop-ins leave it in place */
        write_file(d2, "[Coredump]\nCompressLevel=1\n");
        CHECK_EQ(config_load(&c, path, dropins), -EOPNOTSUPP);
#endif
        /* a missing main file is fine */
        unlink(d1);
        unlink(d2);
        CHECK_EQ(config_load(&c, "/nonexistent/coredump.conf", dropins), 0);

        unlink(path);
        rmdir(dropins);
        rmdir(dir);
}

/* Every field, one by one (padding is not part of a Config). */
static bool config_same(const Config *a, const Config *b) {
        return a->storage == b->storage && a->compress == b->compress && a->compress_level == b->compress_level &&
               a->compress_level_set == b->compress_level_set && a->process_size_max == b->process_size_max &&
               a->external_size_max == b->external_size_max && a->journal_size_max == b->journal_size_max &&
               a->max_use == b->max_use && a->keep_free == b->keep_free && a->max_age_usec == b->max_age_usec &&
               a->enter_namespace == b->enter_namespace && strcmp(a->directory, b->directory) == 0 &&
               strcmp(a->worker_user, b->worker_user) == 0 && a->spare_workers == b->spare_workers &&
               a->max_parallel == b->max_parallel && a->timeout_usec == b->timeout_usec &&
               a->rate_limit_interval_usec == b->rate_limit_interval_usec &&
               a->rate_limit_burst == b->rate_limit_burst && a->mode == b->mode &&
               a->max_parallel_per_user == b->max_parallel_per_user && a->worker_stall_usec == b->worker_stall_usec &&
               a->keep_forwarded == b->keep_forwarded && a->forward_timeout_usec == b->forward_timeout_usec &&
               a->spool_max == b->spool_max && a->worker_zygote == b->worker_zygote;
}

/* A value other than the default for each key; a key missing here fails the test. */
static const char *const non_defaults[][2] = {
        { "Storage", "journal" },      { "Mode", "pipe" },
        { "Compress", "lz4" },         { "CompressLevel", "5" },
        { "ProcessSizeMax", "1G" },    { "ExternalSizeMax", "2G" }, { "SpoolMax", "100M" },
        { "JournalSizeMax", "3M" },    { "MaxUse", "1G" },
        { "KeepFree", "2G" },          { "EnterNamespace", "yes" },
        { "Directory", "/srv/cores" }, { "WorkerUser", "nobody" },
        { "SpareWorkers", "7" },       { "MaxParallel", "3" },
        { "TimeoutSec", "5min" },      { "MaxAgeSec", "2w" },
        { "RateLimitIntervalSec", "10s" }, { "RateLimitBurst", "99" },
        { "MaxParallelPerUser", "2" }, { "WorkerStallTimeoutSec", "1min" },
        { "KeepForwarded", "yes" },    { "ForwardTimeoutSec", "30s" },
        { "WorkerZygote", "yes" },
};

static const char *non_default(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(non_defaults); i++)
                if (strcmp(non_defaults[i][0], key) == 0)
                        return non_defaults[i][1];
        return NULL;
}

/* "Key=" puts every key back to its built-in default (systemd semantics). */
static void test_empty_resets(void) {
        char line[CONFIG_LINE_MAX];
        Config c, d;
        size_t n = 0;

        config_init_defaults(&d);
        for (const char *key; (key = config_key_name(n)); n++) {
                const char *v = non_default(key);

                if (!v) {
                        fprintf(stderr, "no non-default value for %s= in this test\n", key);
                        tests_failed++;
                        continue;
                }
                config_init_defaults(&c);
                snprintf(line, sizeof line, "%s=%s", key, v);
                CHECK_EQ(parse(&c, line), 0);
                if (config_same(&c, &d)) {
                        fprintf(stderr, "%s did not change the configuration\n", line);
                        tests_failed++;
                }
                snprintf(line, sizeof line, "%s= ", key);
                CHECK_EQ(parse(&c, line), 0);
                if (!config_same(&c, &d)) {
                        fprintf(stderr, "%s= did not reset the key to its default\n", key);
                        tests_failed++;
                }
        }
        CHECK_EQ(n, ELEMENTSOF(non_defaults));
        /* a reset is not a set: lz4 takes its own default level again */
        config_init_defaults(&c);
        CHECK_EQ(parse(&c, "CompressLevel=19"), 0);
        CHECK_EQ(parse(&c, "CompressLevel="), 0);
        CHECK(!c.compress_level_set);
}

enum { TIER_ETC, TIER_RUN, TIER_LIB, TIERS };

/* Stand-ins for /etc, /run and /usr/lib: ROOT/{etc,run,lib}/coredump.conf{,.d}. */
typedef struct Tree {
        char root[64];
        char main_file[TIERS][128];
        char dropins[TIERS][128];
        ConfigSearch search;
} Tree;

static void tree_make(Tree *t) {
        static const char *const names[TIERS] = { "etc", "run", "lib" };
        char d[96];

        snprintf(t->root, sizeof t->root, "/tmp/test-config-search.XXXXXX");
        CHECK(mkdtemp(t->root) != NULL);
        for (unsigned i = 0; i < TIERS; i++) {
                snprintf(d, sizeof d, "%s/%s", t->root, names[i]);
                CHECK_EQ(mkdir(d, 0755), 0);
                snprintf(t->main_file[i], sizeof t->main_file[i], "%s/coredump.conf", d);
                snprintf(t->dropins[i], sizeof t->dropins[i], "%s/coredump.conf.d", d);
                CHECK_EQ(mkdir(t->dropins[i], 0755), 0);
                t->search.main_files[i] = t->main_file[i];
                t->search.dropin_dirs[i] = t->dropins[i];
        }
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

static void tree_remove(Tree *t) {
        CHECK_EQ(nftw(t->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static const char *dropin(const Tree *t, unsigned tier, const char *name, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", t->dropins[tier], name);
        return buf;
}

static void put(const Tree *t, unsigned tier, const char *name, const char *text) {
        char p[256];
        write_file(dropin(t, tier, name, p, sizeof p), text);
}

static void put_link(const Tree *t, unsigned tier, const char *name, const char *target) {
        char p[256];
        CHECK_EQ(symlink(target, dropin(t, tier, name, p, sizeof p)), 0);
}

/* files is exactly the n paths of expected, in order */
static void check_files(char **files, const char *const *expected, size_t n) {
        size_t i = 0;

        CHECK(files != NULL);
        for (; files && files[i]; i++)
                if (i >= n || strcmp(files[i], expected[i]) != 0) {
                        fprintf(stderr, "applied file %zu is %s, expected %s\n", i, files[i],
                                i < n ? expected[i] : "none");
                        tests_failed++;
                }
        CHECK_EQ(i, n);
}

/* /etc hides /run hides /usr/lib, by file name; all survivors in lexical order of the names;
 * /dev/null masks; the first main file found is the only one read. */
static void test_precedence(void) {
        char e[5][256];
        Tree t = {};
        Config c;

        tree_make(&t);
        write_file(t.main_file[TIER_LIB], "[Coredump]\nStorage=none\nMaxAgeSec=1h\n");
        write_file(t.main_file[TIER_RUN], "[Coredump]\nStorage=journal\nSpareWorkers=3\nMaxUse=1G\n");
        put(&t, TIER_LIB, "10-a.conf", "[Coredump]\nMaxParallel=1\n");
        put(&t, TIER_RUN, "10-a.conf", "[Coredump]\nMaxParallel=2\n");
        put(&t, TIER_ETC, "10-a.conf", "[Coredump]\nMaxParallel=3\n");
        put(&t, TIER_RUN, "15-x.conf", "[Coredump]\nTimeoutSec=5min\n");
        put(&t, TIER_LIB, "20-b.conf", "[Coredump]\nRateLimitBurst=7\n");
        put_link(&t, TIER_ETC, "20-b.conf", "/dev/null");
        put(&t, TIER_LIB, "30-c.conf", "[Coredump]\nSpareWorkers=4\n");
        put_link(&t, TIER_ETC, "30-c.conf", "/nonexistent/30-c.conf"); /* dangling: hides nothing */
        put(&t, TIER_ETC, "40-d.conf", "[Coredump]\nSpareWorkers=5\n");
        put(&t, TIER_LIB, "50-e.conf", "[Coredump]\nSpareWorkers=6\nStorage=\n");
        put(&t, TIER_ETC, ".45-hidden.conf", "[Coredump]\nMaxParallel=9\n");
        put(&t, TIER_ETC, "60-notes.txt", "not a drop-in\n");

        {
                _cleanup_(config_files_freep) char **files = NULL;
                const char *const expected[] = {
                        t.main_file[TIER_RUN],
                        dropin(&t, TIER_ETC, "10-a.conf", e[0], sizeof e[0]),
                        dropin(&t, TIER_RUN, "15-x.conf", e[1], sizeof e[1]),
                        dropin(&t, TIER_LIB, "30-c.conf", e[2], sizeof e[2]),
                        dropin(&t, TIER_ETC, "40-d.conf", e[3], sizeof e[3]),
                        dropin(&t, TIER_LIB, "50-e.conf", e[4], sizeof e[4]),
                };

                CHECK_EQ(config_load_search(&c, &t.search, &files), 0);
                check_files(files, expected, ELEMENTSOF(expected));
                CHECK_EQ(c.max_parallel, 3);                    /* /etc's 10-a.conf */
                CHECK_EQ(c.timeout_usec, 300 * USEC_PER_SEC);   /* /run's own 15-x.conf */
                CHECK_EQ(c.rate_limit_burst, 10);               /* 20-b.conf masked */
                CHECK_EQ(c.spare_workers, 6);                   /* /usr/lib's 50 after /etc's 40 */
                CHECK_EQ(c.storage, STORAGE_EXTERNAL);          /* "Storage=" undid the main file */
                CHECK_EQ(c.max_use, UINT64_C(1) << 30);         /* /run's main file */
                CHECK_EQ(c.max_age_usec, UINT64_MAX);           /* not /usr/lib's main file */
        }
        {
                /* /etc's main file masked: no main file at all */
                _cleanup_(config_files_freep) char **files = NULL;

                CHECK_EQ(symlink("/dev/null", t.main_file[TIER_ETC]), 0);
                CHECK_EQ(config_load_search(&c, &t.search, &files), 0);
                CHECK(files && files[0] && strcmp(files[0], e[0]) == 0);
                CHECK_EQ(c.max_use, UINT64_MAX);
                CHECK_EQ(c.max_age_usec, UINT64_MAX);
        }
        {
                /* /etc's own main file is read instead of /run's */
                _cleanup_(config_files_freep) char **files = NULL;

                CHECK_EQ(unlink(t.main_file[TIER_ETC]), 0);
                write_file(t.main_file[TIER_ETC], "[Coredump]\nMaxUse=2G\n");
                CHECK_EQ(config_load_search(&c, &t.search, &files), 0);
                CHECK(files && files[0] && strcmp(files[0], t.main_file[TIER_ETC]) == 0);
                CHECK_EQ(c.max_use, UINT64_C(2) << 30);
        }
        {
                /* a bad value fails the load, and the list is not handed out */
                char **files = NULL;

                put(&t, TIER_RUN, "70-bad.conf", "[Coredump]\nKeepFree=lots\n");
                CHECK_EQ(config_load_search(&c, &t.search, &files), -EINVAL);
                CHECK(files == NULL);
        }
        tree_remove(&t);
}

/* At most CONFIG_DROPINS_MAX names, counted once however many directories have them. */
static void test_too_many(void) {
        _cleanup_(config_files_freep) char **files = NULL;
        char **none = NULL, name[32];
        Tree t = {};
        Config c;
        size_t n = 0;

        tree_make(&t);
        for (unsigned i = 0; i < CONFIG_DROPINS_MAX; i++) {
                snprintf(name, sizeof name, "%04u.conf", i);
                put(&t, TIER_LIB, name, "[Coredump]\n");
                put(&t, TIER_ETC, name, "[Coredump]\n");
        }
        CHECK_EQ(config_load_search(&c, &t.search, &files), 0);
        while (files && files[n])
                n++;
        CHECK_EQ(n, CONFIG_DROPINS_MAX);
        put(&t, TIER_RUN, "zzzz.conf", "[Coredump]\n");
        CHECK_EQ(config_load_search(&c, &t.search, &none), -E2BIG);
        CHECK(none == NULL);
        tree_remove(&t);
}

/* The built-in paths stand for the three directories; --config= and --config-dir= replace them. */
static void test_search_init(void) {
        ConfigSearch s;

        /* "(null)": a missing entry fails the check instead of crashing strcmp() */
        config_search_init(&s, CONFIG_FILE, CONFIG_DROPIN_DIR);
        CHECK_STREQ(s.main_files[0] ?: "(null)", CONFIG_FILE);
        CHECK_STREQ(s.main_files[1] ?: "(null)", CONFIG_FILE_RUN);
        CHECK_STREQ(s.main_files[2] ?: "(null)", CONFIG_FILE_LIB);
        CHECK_STREQ(s.dropin_dirs[0] ?: "(null)", CONFIG_DROPIN_DIR);
        CHECK_STREQ(s.dropin_dirs[1] ?: "(null)", CONFIG_DROPIN_DIR_RUN);
        CHECK_STREQ(s.dropin_dirs[2] ?: "(null)", CONFIG_DROPIN_DIR_LIB);

        config_search_init(&s, "/tmp/x/coredump.conf", "/tmp/x/coredump.conf.d");
        CHECK_STREQ(s.main_files[0] ?: "(null)", "/tmp/x/coredump.conf");
        CHECK(s.main_files[1] == NULL);
        CHECK_STREQ(s.dropin_dirs[0] ?: "(null)", "/tmp/x/coredump.conf.d");
        CHECK(s.dropin_dirs[1] == NULL);

        /* --config-dir= alone: the main file is still searched for */
        config_search_init(&s, CONFIG_FILE, "/tmp/x/coredump.conf.d");
        CHECK_STREQ(s.main_files[1] ?: "(null)", CONFIG_FILE_RUN);
        CHECK(s.dropin_dirs[1] == NULL);

        config_search_init(&s, "/tmp/x/coredump.conf", NULL);
        CHECK(s.dropin_dirs[0] == NULL);
}

int main(void) {
        test_values();
        test_worker_slots();
        test_per_user_above_total();
        test_load_one_dir();
        test_empty_resets();
        test_precedence();
        test_too_many();
        test_search_init();
        TESTS_DONE();
}
