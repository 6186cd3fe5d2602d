/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump.conf: finds the main file and the drop-ins the way systemd does and parses them over
 * the defaults. Reads configuration files and directories, nothing else. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
/* A worker never waits this long without running while its core streams or its journal entry
 * goes out (the kernel sends as fast as it reads); one that does was stopped or is stuck. */
#define DEFAULT_WORKER_STALL_USEC (30 * USEC_PER_SEC)
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
                .forward_timeout_usec = FORWARD_TIMEOUT_DEFAULT_USEC,
                .max_parallel_per_user = PARALLEL_PER_USER_DEFAULT,
                .worker_stall_usec = DEFAULT_WORKER_STALL_USEC,
                .spool_max = UINT64_MAX,
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
/* "infinity" asks for the cap (a quarter of the memory); UINT64_MAX itself means the default */
static int parse_spool_max(Config *c, const char *v) {
        int r = parse_size(v, &c->spool_max);

        if (r >= 0 && c->spool_max == UINT64_MAX)
                c->spool_max = UINT64_MAX - 1;
        return r;
}

uint64_t config_spool_max(const Config *c, uint64_t physical) {
        if (c->spool_max == UINT64_MAX)
                return physical / SPOOL_DEFAULT_SHARE;
        return MIN(c->spool_max, physical / SPOOL_CAP_SHARE);
}

#define BOOL_KEY(name, field)                               \
        static int parse_##name(Config *c, const char *v) { \
                int b = parse_boolean(v);                   \
                if (b < 0)                                  \
                        return b;                           \
                c->field = b;                               \
                return 0;                                   \
        }
BOOL_KEY(enter_namespace, enter_namespace)
BOOL_KEY(keep_forwarded, keep_forwarded)
BOOL_KEY(worker_zygote, worker_zygote)

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

static int parse_max_parallel_per_user(Config *c, const char *v) {
        int n, r;

        if (strcmp(v, "infinity") == 0) {
                c->max_parallel_per_user = PARALLEL_PER_USER_INFINITY;
                return 0;
        }
        /* 0 would refuse every crash: an error, not a way of saying "no cap" */
        r = parse_int_range(v, 1, PARALLEL_CRASHES_MAX, &n);
        if (r >= 0)
                c->max_parallel_per_user = (unsigned) n;
        return r;
}

unsigned config_max_parallel_per_user(const Config *c) {
        if (c->max_parallel_per_user != PARALLEL_PER_USER_DEFAULT)
                return c->max_parallel_per_user;
        return MAX(c->max_parallel / PARALLEL_PER_USER_SHARE, 1U);
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

static int parse_forward_timeout(Config *c, const char *v) {
        return parse_sec_range(v, FORWARD_TIMEOUT_MIN_USEC, FORWARD_TIMEOUT_MAX_USEC, &c->forward_timeout_usec);
}

static int parse_worker_stall(Config *c, const char *v) {
        if (strcmp(v, "infinity") == 0) {
                c->worker_stall_usec = WORKER_STALL_INFINITY;
                return 0;
        }
        return parse_sec_range(v, WORKER_STALL_MIN_USEC, WORKER_STALL_MAX_USEC, &c->worker_stall_usec);
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

/* The fields a key sets, so that "Key=" can put them back to their defaults. */
typedef struct ConfigField {
        size_t offset, size;
} ConfigField;
#define FIELD(f) { offsetof(Config, f), sizeof(((Config *) NULL)->f) }
#define KEY_FIELDS_MAX 2

static const struct {
        const char *key;
        key_parser parse;
        ConfigField fields[KEY_FIELDS_MAX]; /* an unused one has size 0 */
} keys[] = {
        { "Storage", parse_storage, { FIELD(storage) } },
        { "Mode", parse_mode, { FIELD(mode) } },
        { "Compress", parse_compress, { FIELD(compress) } },
        { "CompressLevel", parse_compress_level, { FIELD(compress_level), FIELD(compress_level_set) } },
        { "ProcessSizeMax", parse_process_size_max, { FIELD(process_size_max) } },
        { "ExternalSizeMax", parse_external_size_max, { FIELD(external_size_max) } },
        { "JournalSizeMax", parse_journal_size_max, { FIELD(journal_size_max) } },
        { "MaxUse", parse_max_use, { FIELD(max_use) } },
        { "KeepFree", parse_keep_free, { FIELD(keep_free) } },
        { "EnterNamespace", parse_enter_namespace, { FIELD(enter_namespace) } },
        { "Directory", parse_directory, { FIELD(directory) } },
        { "WorkerUser", parse_worker_user, { FIELD(worker_user) } },
        { "SpareWorkers", parse_spare_workers, { FIELD(spare_workers) } },
        { "WorkerZygote", parse_worker_zygote, { FIELD(worker_zygote) } },
        { "MaxParallel", parse_max_parallel, { FIELD(max_parallel) } },
        { "MaxParallelPerUser", parse_max_parallel_per_user, { FIELD(max_parallel_per_user) } },
        { "WorkerStallTimeoutSec", parse_worker_stall, { FIELD(worker_stall_usec) } },
        { "SpoolMax", parse_spool_max, { FIELD(spool_max) } },
        { "TimeoutSec", parse_timeout, { FIELD(timeout_usec) } },
        { "KeepForwarded", parse_keep_forwarded, { FIELD(keep_forwarded) } },
        { "ForwardTimeoutSec", parse_forward_timeout, { FIELD(forward_timeout_usec) } },
        { "MaxAgeSec", parse_max_age, { FIELD(max_age_usec) } },
        { "RateLimitIntervalSec", parse_rate_limit_interval, { FIELD(rate_limit_interval_usec) } },
        { "RateLimitBurst", parse_rate_limit_burst, { FIELD(rate_limit_burst) } },
};

const char *config_key_name(size_t i) {
        return i < ELEMENTSOF(keys) ? keys[i].key : NULL;
}

/* "Key=" with no value: systemd's way of saying "forget what earlier lines and files set". */
static void reset_key(Config *c, size_t k) {
        Config d;

        config_init_defaults(&d);
        for (size_t i = 0; i < KEY_FIELDS_MAX && keys[k].fields[i].size > 0; i++)
                memcpy((char *) c + keys[k].fields[i].offset, (const char *) &d + keys[k].fields[i].offset,
                       keys[k].fields[i].size);
}

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
                if (value[0] == 0) {
                        reset_key(c, i);
                        return 0;
                }
                r = keys[i].parse(c, value);
                if (r < 0)
                        return log_error_errno(r, "%s:%u: Invalid value for %s=: '%s' (%m)", file, line, key, value);
                return 0;
        }
        log_warning("%s:%u: Unknown key '%s' in section [Coredump], ignoring.", file, line, key);
        return 0;
}

/* Parses one file over c; every problem is logged with file:line. */
static int config_parse_file(Config *c, const char *path) {
        _cleanup_(fclosep_) FILE *f = NULL;
        char buf[CONFIG_LINE_MAX];
        bool in_section = false;
        unsigned line = 0;
        int ret = 0;

        f = fopen(path, "re");
        if (!f)
                return log_error_errno(negative_errno(), "Failed to open %s: %m", path);
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

/* 1 if path (below dirfd) is /dev/null or a symlink to it: systemd's way of switching a file
 * off; 0 if it is anything else; negative errno if there is nothing (-ENOENT, also for a dangling
 * symlink) or it cannot be looked at. */
static int path_masked(int dirfd, const char *path) {
        struct stat st;

        if (fstatat(dirfd, path, &st, 0) < 0)
                return negative_errno();
        return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

/* The paths applied so far, in order; paths is NULL when the caller did not ask for them. */
typedef struct Applied {
        char **paths; /* room for CONFIG_FILES_MAX and the terminating NULL */
        size_t n;
} Applied;

static int applied_add(Applied *a, const char *path) {
        if (!a->paths)
                return 0;
        if (a->n >= CONFIG_FILES_MAX)
                return log_error_errno(-E2BIG, "%s: more than %u configuration files", path, CONFIG_FILES_MAX);
        a->paths[a->n] = strdup(path);
        if (!a->paths[a->n])
                return log_error_errno(-ENOMEM, "Out of memory");
        a->n++;
        return 0;
}

void config_files_free(char **files) {
        for (char **p = files; p && *p; p++)
                free(*p);
        free(files);
}

/* The first main file that exists is read, unless it is masked: then none is. */
static int parse_main_file(Config *c, const ConfigSearch *s, Applied *a) {
        for (size_t i = 0; i < CONFIG_SEARCH_DIRS_MAX && s->main_files[i]; i++) {
                const char *path = s->main_files[i];
                int r = path_masked(AT_FDCWD, path);

                if (r == -ENOENT || r == -EACCES) /* EACCES: see dropins_scan() */
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to access %s: %m", path);
                if (r > 0)
                        return 0;
                r = applied_add(a, path);
                return r < 0 ? r : config_parse_file(c, path);
        }
        return 0;
}

typedef struct Dropin {
        char name[NAME_MAX + 1];
        unsigned dir; /* index in ConfigSearch.dropin_dirs */
        bool masked;
} Dropin;

static bool is_conf_name(const char *name) {
        size_t l = strlen(name);
        return name[0] != '.' && l > 5 && strcmp(name + l - 5, ".conf") == 0;
}

static bool dropins_contain(const Dropin *list, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i].name, name) == 0)
                        return true;
        return false;
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

/* Adds the *.conf names of dirs[index] that no directory before it has. */
static int dropins_scan(Dropin *list, size_t *n, const char *const *dirs, unsigned index) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = opendir(dirs[index]);
        /* EACCES: coredumpctl run by a user, and /run/coredump-socket is root's only */
        if (!d && (errno == ENOENT || errno == EACCES))
                return log_debug_errno(negative_errno(), "Not reading %s: %m", dirs[index]), 0;
        if (!d)
                return log_error_errno(negative_errno(), "Failed to open %s: %m", dirs[index]);
        while ((errno = 0, de = readdir(d))) {
                int masked;

                if (!is_conf_name(de->d_name) || dropins_contain(list, *n, de->d_name))
                        continue;
                masked = path_masked(dirfd(d), de->d_name);
                if (masked == -ENOENT)
                        continue; /* gone, or a dangling symlink: hides nothing */
                if (masked < 0)
                        return log_error_errno(masked, "Failed to access %s/%s: %m", dirs[index], de->d_name);
                if (*n >= CONFIG_DROPINS_MAX)
                        return log_error_errno(-E2BIG, "%s: more than %u drop-ins with the directories before it, "
                                               "refusing them all.", dirs[index], CONFIG_DROPINS_MAX);
                list[*n] = (Dropin) { .dir = index, .masked = masked > 0 };
                snprintf(list[*n].name, sizeof list[*n].name, "%s", de->d_name);
                (*n)++;
        }
        if (errno != 0)
                return log_error_errno(negative_errno(), "Failed to read %s: %m", dirs[index]);
        return 0;
}

static int dropin_cmp(const void *a, const void *b) {
        return strcmp(((const Dropin *) a)->name, ((const Dropin *) b)->name);
}

/* Every drop-in that survives precedence and masking, in lexical order of the names. */
static int parse_dropins(Config *c, const ConfigSearch *s, Applied *a) {
        _cleanup_free_ Dropin *list = NULL;
        size_t n = 0;
        int r, ret = 0;

        if (!s->dropin_dirs[0])
                return 0;
        list = calloc(CONFIG_DROPINS_MAX, sizeof *list);
        if (!list)
                return log_error_errno(-ENOMEM, "Out of memory");
        for (unsigned i = 0; i < CONFIG_SEARCH_DIRS_MAX && s->dropin_dirs[i]; i++) {
                r = dropins_scan(list, &n, s->dropin_dirs, i);
                if (r < 0)
                        return r;
        }
        qsort(list, n, sizeof *list, dropin_cmp);
        for (size_t i = 0; i < n; i++) {
                const char *dir = s->dropin_dirs[list[i].dir];
                char path[PATH_MAX];

                if (list[i].masked)
                        continue;
                if (snprintf(path, sizeof path, "%s/%s", dir, list[i].name) >= (int) sizeof path)
                        return log_error_errno(-ENAMETOOLONG, "%s/%s: path too long", dir, list[i].name);
                r = applied_add(a, path);
                if (r < 0)
                        return r;
                r = config_parse_file(c, path);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

static int config_check(Config *c) {
        /* checked here, not at parse time: a drop-in may still choose another algorithm */
        if (c->compress == COMPRESSION_LZ4 && !HAVE_LZ4) {
                log_error("Compress=lz4: this build has no lz4 support (built with -Dlz4=disabled); use zstd or no");
                return -EOPNOTSUPP;
        }
        if (c->compress == COMPRESSION_LZ4 && c->compress_level_set &&
            (c->compress_level < 0 || c->compress_level > LZ4_LEVEL_MAX)) {
                log_error("CompressLevel=%d is out of range for lz4 (0..%d)", c->compress_level, LZ4_LEVEL_MAX);
                return -EINVAL;
        }
        if (c->compress == COMPRESSION_LZ4 && !c->compress_level_set)
                c->compress_level = 0;
        /* checked here, once every file is read: a drop-in may change either key */
        if (c->max_parallel_per_user != PARALLEL_PER_USER_INFINITY && c->max_parallel_per_user > c->max_parallel) {
                log_error("MaxParallelPerUser=%u is more than MaxParallel=%u (\"infinity\" for no per-user cap)",
                          c->max_parallel_per_user, c->max_parallel);
                return -EINVAL;
        }
        return 0;
}

void config_search_init(ConfigSearch *ret, const char *main_file, const char *dropin_dir) {
        static const ConfigSearch standard = {
                .main_files = { CONFIG_FILE, CONFIG_FILE_RUN, CONFIG_FILE_LIB },
                .dropin_dirs = { CONFIG_DROPIN_DIR, CONFIG_DROPIN_DIR_RUN, CONFIG_DROPIN_DIR_LIB },
        };

        *ret = (ConfigSearch) { .main_files = { main_file }, .dropin_dirs = { dropin_dir } };
        if (main_file && strcmp(main_file, CONFIG_FILE) == 0)
                memcpy(ret->main_files, standard.main_files, sizeof ret->main_files);
        if (dropin_dir && strcmp(dropin_dir, CONFIG_DROPIN_DIR) == 0)
                memcpy(ret->dropin_dirs, standard.dropin_dirs, sizeof ret->dropin_dirs);
}

int config_load_search(Config *c, const ConfigSearch *s, char ***ret_files) {
        _cleanup_(config_files_freep) char **paths = NULL;
        Applied a = {};
        int r, ret;

        if (ret_files) {
                paths = calloc(CONFIG_FILES_MAX + 1, sizeof *paths);
                if (!paths)
                        return log_error_errno(-ENOMEM, "Out of memory");
                a.paths = paths;
        }
        config_init_defaults(c);
        ret = parse_main_file(c, s, &a);
        r = parse_dropins(c, s, &a);
        if (r < 0 && ret >= 0)
                ret = r;
        r = config_check(c);
        if (r < 0 && ret >= 0)
                ret = r;
        if (ret < 0)
                return ret;
        if (ret_files)
                *ret_files = TAKE_PTR(paths);
        return 0;
}

int config_load(Config *c, const char *main_file, const char *dropin_dir) {
        ConfigSearch s;

        config_search_init(&s, main_file, dropin_dir);
        return config_load_search(c, &s, NULL);
}
