/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>

#include "config.h"
#include "build-config.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

#define DEFAULT_PROCESS_SIZE_MAX (UINT64_C(32) << 30)
#define DEFAULT_JOURNAL_SIZE_MAX (UINT64_C(767) << 20)
#define DEFAULT_ZSTD_LEVEL 3
#define LZ4_LEVEL_MAX 12
#define DEFAULT_SPARE_WORKERS 2
#define DEFAULT_MAX_PARALLEL 16
#define DEFAULT_CRASH_TIMEOUT_USEC (30 * 60 * USEC_PER_SEC)
/* A crash-looping program keeps at most 10 cores a minute; its other crashes are counted. */
#define DEFAULT_RATE_LIMIT_INTERVAL_USEC (60 * USEC_PER_SEC)
#define DEFAULT_RATE_LIMIT_BURST 10

void config_init_defaults(Config *c) {
        *c = (Config) {
                .storage = STORAGE_EXTERNAL,
                .compress = COMPRESSION_ZSTD,
                .compress_level = DEFAULT_ZSTD_LEVEL,
                .process_size_max = DEFAULT_PROCESS_SIZE_MAX,
                .external_size_max = DEFAULT_PROCESS_SIZE_MAX,
                .journal_size_max = DEFAULT_JOURNAL_SIZE_MAX,
                .max_use = UINT64_MAX,
                .keep_free = UINT64_MAX,
                .max_age_usec = UINT64_MAX,
                .spare_workers = DEFAULT_SPARE_WORKERS,
                .max_parallel = DEFAULT_MAX_PARALLEL,
                .timeout_usec = DEFAULT_CRASH_TIMEOUT_USEC,
                .rate_limit_interval_usec = DEFAULT_RATE_LIMIT_INTERVAL_USEC,
                .rate_limit_burst = DEFAULT_RATE_LIMIT_BURST,
        };
        snprintf(c->directory, sizeof c->directory, "%s", DEFAULT_STORAGE_DIR);
        snprintf(c->worker_user, sizeof c->worker_user, "%s", DEFAULT_WORKER_USER);
}

const char *storage_to_string(Storage s) {
        static const char *const t[] = { "none", "external", "journal" };
        return (unsigned) s < ELEMENTSOF(t) ? t[s] : "?";
}

const char *mode_to_string(CaptureMode m) {
        static const char *const t[] = { "auto", "socket", "pipe" };
        return (unsigned) m < ELEMENTSOF(t) ? t[m] : "?";
}

static int parse_mode(Config *c, const char *v) {
        for (CaptureMode m = MODE_AUTO; m <= MODE_PIPE; m++)
                if (strcmp(v, mode_to_string(m)) == 0) {
                        c->mode = m;
                        return 0;
                }
        return -EINVAL;
}

const char *compression_to_string(Compression c) {
        static const char *const t[] = { "none", "zstd", "lz4" };
        return (unsigned) c < ELEMENTSOF(t) ? t[c] : "?";
}

const char *compression_suffix(Compression c) {
        static const char *const t[] = { "", ".zst", ".lz4" };
        return (unsigned) c < ELEMENTSOF(t) ? t[c] : "";
}

typedef int (*key_parser)(Config *c, const char *v);

static int parse_storage(Config *c, const char *v) {
        for (Storage s = STORAGE_NONE; s <= STORAGE_JOURNAL; s++)
                if (strcmp(v, storage_to_string(s)) == 0) {
                        c->storage = s;
                        return 0;
                }
        return -EINVAL;
}

static int parse_compress(Config *c, const char *v) {
        int b = parse_boolean(v);

        if (b >= 0)
                c->compress = b ? COMPRESSION_ZSTD : COMPRESSION_NONE;
        else if (strcmp(v, "zstd") == 0)
                c->compress = COMPRESSION_ZSTD;
        else if (strcmp(v, "lz4") == 0)
                c->compress = COMPRESSION_LZ4;
        else
                return -EINVAL;
        return 0;
}

static int parse_compress_level(Config *c, const char *v) {
        /* Checked against the chosen algorithm once all files are read. */
        int r = parse_int_range(v, ZSTD_minCLevel(), ZSTD_maxCLevel(), &c->compress_level);
        if (r >= 0)
                c->compress_level_set = true;
        return r;
}

#define SIZE_KEY(name, field)                                      \
        static int parse_##name(Config *c, const char *v) {        \
                return parse_size(v, &c->field);                   \
        }
SIZE_KEY(process_size_max, process_size_max)
SIZE_KEY(journal_size_max, journal_size_max)
SIZE_KEY(max_use, max_use)
SIZE_KEY(keep_free, keep_free)

SIZE_KEY(external_size_max, external_size_max)

static int parse_enter_namespace(Config *c, const char *v) {
        int b = parse_boolean(v);
        if (b < 0)
                return b;
        c->enter_namespace = b;
        return 0;
}

static int parse_directory(Config *c, const char *v) {
        if (v[0] != '/' || strlen(v) >= sizeof c->directory || strstr(v, "/../") ||
            (strlen(v) >= 3 && strcmp(v + strlen(v) - 3, "/..") == 0))
                return -EINVAL;
        snprintf(c->directory, sizeof c->directory, "%s", v);
        return 0;
}

static int parse_worker_user(Config *c, const char *v) {
        size_t l = strlen(v);

        if (l == 0 || l > USER_NAME_MAX)
                return -EINVAL;
        for (size_t i = 0; i < l; i++)
                if (!isalnum((unsigned char) v[i]) && !strchr("-_.", v[i]))
                        return -EINVAL;
        memcpy(c->worker_user, v, l + 1);
        return 0;
}

static int parse_spare_workers(Config *c, const char *v) {
        int n, r = parse_int_range(v, 0, SPARE_WORKERS_MAX, &n);
        if (r >= 0)
                c->spare_workers = (unsigned) n;
        return r;
}

static int parse_max_parallel(Config *c, const char *v) {
        int n, r = parse_int_range(v, 1, PARALLEL_CRASHES_MAX, &n);
        if (r >= 0)
                c->max_parallel = (unsigned) n;
        return r;
}

/* A time span within [min, max]: -ERANGE outside ("infinity" is outside unless max is it). */
static int parse_sec_range(const char *v, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t u;
        int r = parse_sec(v, &u);

        if (r < 0)
                return r;
        if (u < min || u > max)
                return -ERANGE;
        *ret = u;
        return 0;
}

static int parse_timeout(Config *c, const char *v) {
        return parse_sec_range(v, CRASH_TIMEOUT_MIN_USEC, CRASH_TIMEOUT_MAX_USEC, &c->timeout_usec);
}

static int parse_max_age(Config *c, const char *v) {
        if (strcmp(v, "infinity") == 0) {
                c->max_age_usec = UINT64_MAX;
                return 0;
        }
        return parse_sec_range(v, 1, MAX_AGE_MAX_USEC, &c->max_age_usec);
}

static int parse_rate_limit_interval(Config *c, const char *v) {
        return parse_sec_range(v, 0, RATE_LIMIT_INTERVAL_MAX_USEC, &c->rate_limit_interval_usec);
}

static int parse_rate_limit_burst(Config *c, const char *v) {
        int n, r = parse_int_range(v, 0, RATE_LIMIT_BURST_MAX, &n);
        if (r >= 0)
                c->rate_limit_burst = (unsigned) n;
        return r;
}

static const struct {
        const char *key;
        key_parser parse;
} keys[] = {
        { "Storage", parse_storage },
        { "Mode", parse_mode },
        { "Compress", parse_compress },
        { "CompressLevel", parse_compress_level },
        { "ProcessSizeMax", parse_process_size_max },
        { "ExternalSizeMax", parse_external_size_max },
        { "JournalSizeMax", parse_journal_size_max },
        { "MaxUse", parse_max_use },
        { "KeepFree", parse_keep_free },
        { "EnterNamespace", parse_enter_namespace },
        { "Directory", parse_directory },
        { "WorkerUser", parse_worker_user },
        { "SpareWorkers", parse_spare_workers },
        { "MaxParallel", parse_max_parallel },
        { "TimeoutSec", parse_timeout },
        { "MaxAgeSec", parse_max_age },
        { "RateLimitIntervalSec", parse_rate_limit_interval },
        { "RateLimitBurst", parse_rate_limit_burst },
};

static char *strstrip(char *s) {
        char *e;

        while (isspace((unsigned char) *s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char) e[-1]))
                *--e = 0;
        return s;
}

int config_parse_line(Config *c, const char *file, unsigned line, char *text, bool *in_section) {
        char *l = strstrip(text), *eq, *key, *value;
        int r;

        if (l[0] == 0 || l[0] == '#' || l[0] == ';')
                return 0;
        if (l[0] == '[') {
                size_t n = strlen(l);
                if (l[n - 1] != ']') {
                        log_error("%s:%u: Invalid section header '%s'", file, line, l);
                        return -EINVAL;
                }
                *in_section = strcmp(l, "[Coredump]") == 0;
                if (!*in_section)
                        log_warning("%s:%u: Unknown section '%s', ignoring.", file, line, l);
                return 0;
        }
        if (!*in_section)
                return 0;

        eq = strchr(l, '=');
        if (!eq) {
                log_error("%s:%u: Missing '=' in '%s'", file, line, l);
                return -EINVAL;
        }
        *eq = 0;
        key = strstrip(l);
        value = strstrip(eq + 1);

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                if (strcmp(key, keys[i].key) != 0)
                        continue;
                r = keys[i].parse(c, value);
                if (r < 0)
                        return log_error_errno(r, "%s:%u: Invalid value for %s=: '%s' (%m)", file, line, key, value);
                return 0;
        }
        log_warning("%s:%u: Unknown key '%s' in section [Coredump], ignoring.", file, line, key);
        return 0;
}

static int config_parse_file(Config *c, const char *path, bool missing_ok) {
        _cleanup_(fclosep_) FILE *f = NULL;
        char buf[CONFIG_LINE_MAX];
        bool in_section = false;
        unsigned line = 0;
        int ret = 0;

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT && missing_ok)
                        return 0;
                return log_error_errno(negative_errno(), "Failed to open %s: %m", path);
        }
        while (fgets(buf, sizeof buf, f)) {
                line++;
                if (!strchr(buf, '\n') && !feof(f)) {
                        log_error("%s:%u: Line too long (more than %d bytes)", path, line, CONFIG_LINE_MAX - 2);
                        return -EINVAL;
                }
                if (config_parse_line(c, path, line, buf, &in_section) < 0)
                        ret = -EINVAL;
        }
        if (ferror(f))
                return log_error_errno(-EIO, "Failed to read %s: %m", path);
        return ret;
}

static int has_conf_suffix(const struct dirent *de) {
        size_t l = strlen(de->d_name);
        return de->d_name[0] != '.' && l > 5 && strcmp(de->d_name + l - 5, ".conf") == 0;
}

static int config_parse_dropins(Config *c, const char *dir) {
        struct dirent **list = NULL;
        int n, ret = 0;

        n = scandir(dir, &list, has_conf_suffix, alphasort);
        if (n < 0) {
                if (errno == ENOENT)
                        return 0;
                return log_error_errno(negative_errno(), "Failed to read %s: %m", dir);
        }
        if (n > (int) CONFIG_DROPINS_MAX) {
                log_error("%s: %d drop-ins, more than %u; refusing.", dir, n, CONFIG_DROPINS_MAX);
                ret = -E2BIG;
        }
        for (int i = 0; i < n; i++) {
                char path[PATH_MAX];
                if (ret == 0 && snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) < (int) sizeof path &&
                    config_parse_file(c, path, false) < 0)
                        ret = -EINVAL;
                free(list[i]);
        }
        free(list);
        return ret;
}

static int config_check(Config *c) {
        if (c->compress == COMPRESSION_LZ4 && c->compress_level_set &&
            (c->compress_level < 0 || c->compress_level > LZ4_LEVEL_MAX)) {
                log_error("CompressLevel=%d is out of range for lz4 (0..%d)", c->compress_level, LZ4_LEVEL_MAX);
                return -EINVAL;
        }
        if (c->compress == COMPRESSION_LZ4 && !c->compress_level_set)
                c->compress_level = 0;
        return 0;
}

int config_load(Config *c, const char *main_file, const char *dropin_dir) {
        int r = 0;

        config_init_defaults(c);
        if (main_file && config_parse_file(c, main_file, true) < 0)
                r = -EINVAL;
        if (dropin_dir && config_parse_dropins(c, dropin_dir) < 0)
                r = -EINVAL;
        if (config_check(c) < 0)
                r = -EINVAL;
        return r;
}
