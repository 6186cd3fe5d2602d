/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <sys/stat.h>

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

int main(void) {
        char dir[] = "/tmp/test-config.XXXXXX", path[256], dropins[256];
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
        CHECK_EQ(parse(&c, "RateLimitBurst=1000000"), -ERANGE);
        CHECK_EQ(parse(&c, "RateLimitIntervalSec=30d"), -ERANGE);
        CHECK_EQ(parse(&c, "RateLimitIntervalSec=soon"), -EINVAL);
        CHECK_EQ(parse(&c, "MaxAgeSec=0"), -ERANGE);
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
        /* lz4 levels are checked against lz4's range */
        write_file(d2, "[Coredump]\nCompress=lz4\nCompressLevel=19\n");
        CHECK_EQ(config_load(&c, path, dropins), -EINVAL);
        /* a missing main file is fine */
        unlink(d1);
        unlink(d2);
        CHECK_EQ(config_load(&c, "/nonexistent/coredump.conf", dropins), 0);

        unlink(path);
        rmdir(dropins);
        rmdir(dir);
        TESTS_DONE();
}
