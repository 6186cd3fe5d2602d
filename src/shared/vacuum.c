/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store's vacuum: lists core.* and record/suppressed.*.export under a dirfd and deletes the
 * oldest until the limits hold. Shared (coredumpd, coredumpctl): unlinks only in that dirfd. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "macro.h"
#include "parse-util.h"
#include "vacuum.h"

#define NAME_FIELDS_MAX 8U
#define NAME_COPY_MAX 256U /* longer names are not ours */

typedef struct StoredCore {
        char *name;
        uid_t uid;
        uint64_t usec, bytes;
        bool record; /* record.*.export or suppressed.*.export, not a core */
} StoredCore;

/* Splits copy (modified) at dots into at most NAME_FIELDS_MAX fields; returns how many. */
static size_t split_name(char *copy, char *field[NAME_FIELDS_MAX]) {
        char *save = NULL;
        size_t n = 0;

        for (char *t = strtok_r(copy, ".", &save); t && n < NAME_FIELDS_MAX; t = strtok_r(NULL, ".", &save))
                field[n++] = t;
        return n;
}

int vacuum_parse_name(const char *name, uid_t *ret_uid, uint64_t *ret_usec) {
        char copy[NAME_COPY_MAX], *field[NAME_FIELDS_MAX];
        size_t n;
        uint64_t uid;

        if (strncmp(name, "core.", 5) != 0 || strlen(name) >= sizeof copy)
                return -EINVAL;
        snprintf(copy, sizeof copy, "%s", name);
        n = split_name(copy, field);
        /* core COMM UID BOOT PID USEC [ext] */
        if (n < 6 || parse_uint64(field[2], &uid) < 0 || uid >= UINT32_MAX || parse_uint64(field[5], ret_usec) < 0)
                return -EINVAL;
        *ret_uid = (uid_t) uid;
        return 0;
}

/* The crash time of a record: record.COMM.UID.BOOT.PID.USEC.export (as its core's name) or
 * suppressed.BOOT.USEC.HASH.export. */
static int record_usec(const char *name, uint64_t *ret) {
        char copy[NAME_COPY_MAX], *field[NAME_FIELDS_MAX];
        uid_t uid;

        if (strncmp(name, "record.", 7) == 0) {
                if (snprintf(copy, sizeof copy, "core.%s", name + 7) >= (int) sizeof copy)
                        return -EINVAL;
                return vacuum_parse_name(copy, &uid, ret);
        }
        if (strlen(name) >= sizeof copy)
                return -EINVAL;
        snprintf(copy, sizeof copy, "%s", name);
        return split_name(copy, field) == 5 ? parse_uint64(field[2], ret) : -EINVAL;
}

static bool is_core(const struct dirent *de) {
        return strncmp(de->d_name, "core.", 5) == 0;
}

static bool is_record(const struct dirent *de) {
        size_t l = strlen(de->d_name);
        return (strncmp(de->d_name, "record.", 7) == 0 || strncmp(de->d_name, "suppressed.", 11) == 0) && l > 11 &&
               strcmp(de->d_name + l - 7, ".export") == 0;
}

static void free_cores(StoredCore *c, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(c[i].name);
        free(c);
}

/* Lists the cores and the records of the store. */
static int scan(int dirfd, StoredCore **ret, size_t *ret_n, VacuumStats *stats) {
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        StoredCore *cores = NULL;
        struct dirent *de;
        size_t n = 0;
        DIR *d;

        *stats = (VacuumStats) {};
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return negative_errno();
        }
        rewinddir(d);
        while ((de = readdir(d)) && n < VACUUM_FILES_MAX) {
                struct stat st;
                StoredCore c = {};

                if ((!is_core(de) && !is_record(de)) || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                c.record = is_record(de);
                if (c.record) {
                        stats->n_records++;
                        stats->bytes_records += (uint64_t) st.st_blocks * 512;
                } else {
                        stats->n_cores++;
                        stats->bytes_cores += (uint64_t) st.st_blocks * 512;
                }
                if (c.record ? record_usec(de->d_name, &c.usec) < 0
                             : vacuum_parse_name(de->d_name, &c.uid, &c.usec) < 0) {
                        c.uid = st.st_uid;
                        c.usec = (uint64_t) st.st_mtim.tv_sec * USEC_PER_SEC;
                }
                c.bytes = (uint64_t) st.st_blocks * 512;
                c.name = strdup(de->d_name);
                StoredCore *nc = c.name ? reallocarray(cores, n + 1, sizeof *nc) : NULL;
                if (!nc) {
                        free(c.name);
                        free_cores(cores, n);
                        closedir(d);
                        return -ENOMEM;
                }
                cores = nc;
                cores[n++] = c;
        }
        closedir(d);
        *ret = cores;
        *ret_n = n;
        return 0;
}

int vacuum_usage(int dirfd, VacuumStats *ret) {
        StoredCore *c = NULL;
        size_t n = 0;
        int r = scan(dirfd, &c, &n, ret);

        free_cores(c, n);
        return r;
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi) {
        return v < lo ? lo : v > hi ? hi : v;
}

/* MaxUse= and KeepFree= in bytes for the file system of dirfd, and its free bytes; false if it
 * cannot be asked. */
static bool effective_limits(int dirfd, const VacuumLimits *l, uint64_t *max_use, uint64_t *keep_free,
                             uint64_t *avail) {
        struct statvfs sv;
        uint64_t size;

        if (fstatvfs(dirfd, &sv) < 0)
                return false;
        size = (uint64_t) sv.f_blocks * sv.f_frsize;
        *avail = (uint64_t) sv.f_bavail * sv.f_frsize;
        *max_use = l->max_use != UINT64_MAX ? l->max_use : clamp(size / 10, VACUUM_MAX_USE_LOWER, VACUUM_MAX_USE_UPPER);
        *keep_free = l->keep_free != UINT64_MAX ? l->keep_free
                                                : clamp(size * 3 / 20, VACUUM_KEEP_FREE_LOWER, VACUUM_KEEP_FREE_UPPER);
        return true;
}

bool vacuum_over_limits(int dirfd, const VacuumLimits *l, uint64_t used) {
        uint64_t max_use, keep_free, avail;

        return effective_limits(dirfd, l, &max_use, &keep_free, &avail) && (used > max_use || avail < keep_free);
}

static int cmp_age(const void *a, const void *b) {
        const StoredCore *x = a, *y = b;
        return x->usec < y->usec ? -1 : x->usec > y->usec;
}

/* Distinct owners tracked per pass; beyond that the rest are considered in a later pass. */
#define VACUUM_UIDS_MAX 1024U

typedef struct UidCount {
        uid_t uid;
        size_t count;
        StoredCore *oldest;
} UidCount;

/* The oldest core of the uid with the most cores; c is sorted oldest first, so among uids with
 * equal counts the one whose oldest core comes first wins. */
static StoredCore *pick_victim(StoredCore *c, size_t n, const char *keep) {
        static UidCount u[VACUUM_UIDS_MAX];
        size_t n_u = 0, best = SIZE_MAX;

        for (size_t i = 0; i < n; i++) {
                size_t k;

                if (!c[i].name || c[i].record || (keep && strcmp(c[i].name, keep) == 0))
                        continue;
                for (k = 0; k < n_u && u[k].uid != c[i].uid; k++)
                        ;
                if (k == n_u) {
                        if (n_u == VACUUM_UIDS_MAX)
                                continue;
                        u[n_u++] = (UidCount) { .uid = c[i].uid, .oldest = &c[i] };
                }
                u[k].count++;
        }
        for (size_t k = 0; k < n_u; k++)
                if (best == SIZE_MAX || u[k].count > u[best].count ||
                    (u[k].count == u[best].count && u[k].oldest < u[best].oldest))
                        best = k;
        return best == SIZE_MAX ? NULL : u[best].oldest;
}

static int delete_core(int dirfd, StoredCore *c, VacuumStats *s, VacuumReport report, void *userdata) {
        if (unlinkat(dirfd, c->name, 0) < 0 && errno != ENOENT)
                return negative_errno();
        if (report)
                report(c->name, c->bytes, userdata);
        s->bytes_freed += c->bytes;
        if (c->record) {
                s->n_records_deleted++;
                s->bytes_records -= MIN(s->bytes_records, c->bytes);
                s->n_records--;
        } else {
                s->n_deleted++;
                s->bytes_cores -= MIN(s->bytes_cores, c->bytes);
                s->n_cores--;
        }
        free(c->name);
        c->name = NULL;
        return 0;
}

static bool too_old(const VacuumLimits *l, const StoredCore *c) {
        if (c->record && l->max_age_cores_only)
                return false;
        return l->max_age_usec != UINT64_MAX && l->now_usec > c->usec && l->now_usec - c->usec > l->max_age_usec;
}

/* Records past their budget (a share of MaxUse=, at least records_min) go oldest first, never
 * the newest (it may be the record of the crash being stored). */
static int vacuum_records(int dirfd, const VacuumLimits *l, StoredCore *c, size_t n, VacuumStats *s,
                          VacuumReport report, void *userdata) {
        uint64_t max_use, keep_free, avail, budget;
        size_t newest = SIZE_MAX;
        int r = 0;

        if (!effective_limits(dirfd, l, &max_use, &keep_free, &avail))
                return 0;
        for (size_t i = 0; i < n; i++)
                if (c[i].record)
                        newest = i;
        budget = MAX(max_use / VACUUM_RECORDS_SHARE, l->records_min);
        for (size_t i = 0; r >= 0 && i < newest && s->bytes_records > budget; i++)
                if (c[i].record && c[i].name)
                        r = delete_core(dirfd, &c[i], s, report, userdata);
        return r;
}

int vacuum_run(int dirfd, const VacuumLimits *l, const char *keep, VacuumReport report, void *userdata,
               VacuumStats *ret) {
        StoredCore *c = NULL, *v;
        size_t n = 0;
        int r;

        r = scan(dirfd, &c, &n, ret);
        if (r < 0)
                return r;
        if (n > 0)
                qsort(c, n, sizeof *c, cmp_age);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if ((!keep || strcmp(c[i].name, keep) != 0) && too_old(l, &c[i]))
                        r = delete_core(dirfd, &c[i], ret, report, userdata);
        while (r >= 0 && vacuum_over_limits(dirfd, l, ret->bytes_cores) &&
               (v = pick_victim(c, n, keep)))
                r = delete_core(dirfd, v, ret, report, userdata);
        if (r >= 0)
                r = vacuum_records(dirfd, l, c, n, ret, report, userdata);
        free_cores(c, n);
        return r;
}
