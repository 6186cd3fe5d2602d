/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store's vacuum: lists core.* and record/suppressed.*.export under a dirfd and deletes what
 * vacuum-plan.c chooses. Shared (coredumpd, coredumpctl): unlinks only in that dirfd. */
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
#include "vacuum-plan.h"
#include "vacuum.h"

#define NAME_FIELDS_MAX 8U
#define NAME_COPY_MAX 256U /* longer names are not ours */

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

/* The owner and crash time of a record: record.COMM.UID.BOOT.PID.USEC.export (as its core's
 * name), or of a summary: suppressed.BOOT.USEC.HASH.export (nobody's: UID_INVALID). */
static int record_owner(const char *name, uid_t *ret_uid, uint64_t *ret_usec) {
        char copy[NAME_COPY_MAX], *field[NAME_FIELDS_MAX];

        if (strncmp(name, "record.", 7) == 0) {
                if (snprintf(copy, sizeof copy, "core.%s", name + 7) >= (int) sizeof copy)
                        return -EINVAL;
                return vacuum_parse_name(copy, ret_uid, ret_usec);
        }
        if (strlen(name) >= sizeof copy)
                return -EINVAL;
        snprintf(copy, sizeof copy, "%s", name);
        *ret_uid = UID_INVALID;
        return split_name(copy, field) == 5 ? parse_uint64(field[2], ret_usec) : -EINVAL;
}

static bool is_core(const struct dirent *de) {
        return strncmp(de->d_name, "core.", 5) == 0;
}

static bool is_record(const struct dirent *de) {
        size_t l = strlen(de->d_name);
        return (strncmp(de->d_name, "record.", 7) == 0 || strncmp(de->d_name, "suppressed.", 11) == 0) && l > 11 &&
               strcmp(de->d_name + l - 7, ".export") == 0;
}

static void free_files(VacuumFile *f, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(f[i].name);
        free(f);
}

/* Who owns a file and when it crashed, from its name: core.COMM.UID..., record.COMM.UID... (as
 * its core's name); a summary (suppressed.BOOT.USEC.HASH.export) is nobody's (UID_INVALID). A
 * name that says neither: the file's owner and mtime. */
static void describe(const char *name, const struct stat *st, VacuumFile *f) {
        int r;

        r = f->record ? record_owner(name, &f->uid, &f->usec) : vacuum_parse_name(name, &f->uid, &f->usec);
        if (r < 0) {
                f->uid = st->st_uid;
                f->usec = (uint64_t) st->st_mtim.tv_sec * USEC_PER_SEC;
        }
        f->bytes = (uint64_t) st->st_blocks * 512;
}

static void count(VacuumStats *stats, const VacuumFile *f) {
        if (f->record) {
                stats->n_records++;
                stats->bytes_records += f->bytes;
        } else {
                stats->n_cores++;
                stats->bytes_cores += f->bytes;
        }
}

/* Appends f to *files (which grows by doubling). */
static int append(VacuumFile **files, size_t *n, size_t *cap, const VacuumFile *f) {
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 64;
                VacuumFile *nf = reallocarray(*files, c, sizeof *nf);
                if (!nf)
                        return -ENOMEM;
                *files = nf;
                *cap = c;
        }
        (*files)[(*n)++] = *f;
        return 0;
}

/* Lists every core and record of the store (no cap: each is counted, and each may go). */
static int scan(int dirfd, VacuumFile **ret, size_t *ret_n, VacuumStats *stats) {
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        VacuumFile *files = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int r = 0;
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
        while (r == 0 && (de = readdir(d))) {
                VacuumFile f = { .record = is_record(de) };
                struct stat st;

                if ((!is_core(de) && !f.record) || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                describe(de->d_name, &st, &f);
                f.name = strdup(de->d_name);
                r = f.name ? append(&files, &n, &cap, &f) : -ENOMEM;
                if (r < 0)
                        free(f.name);
                else
                        count(stats, &f);
        }
        closedir(d);
        if (r < 0) {
                free_files(files, n);
                return r;
        }
        *ret = files;
        *ret_n = n;
        return 0;
}

int vacuum_usage(int dirfd, VacuumStats *ret) {
        VacuumFile *f = NULL;
        size_t n = 0;
        int r = scan(dirfd, &f, &n, ret);

        free_files(f, n);
        return r;
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi) {
        return v < lo ? lo : v > hi ? hi : v;
}

bool vacuum_effective_limits(int dirfd, const VacuumLimits *l, uint64_t *max_use, uint64_t *keep_free,
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

bool vacuum_over_limits(int dirfd, const VacuumLimits *l, uint64_t used, uint64_t records) {
        uint64_t max_use, keep_free, avail;

        return vacuum_effective_limits(dirfd, l, &max_use, &keep_free, &avail) &&
               (used > max_use || (!l->keep_free_off && avail < keep_free) ||
                records > MAX(max_use / VACUUM_RECORDS_SHARE, l->records_min));
}

uint64_t vacuum_core_room(uint64_t max_use, uint64_t keep_free, uint64_t avail, uint64_t in_flight, uint64_t held) {
        uint64_t taken = in_flight > UINT64_MAX - held ? UINT64_MAX : in_flight + held;
        uint64_t by_use = max_use > taken ? max_use - taken : 0;
        uint64_t by_free = avail > keep_free ? avail - keep_free : 0;

        return MIN(by_use, by_free);
}

static int cmp_uid(const void *a, const void *b) {
        const VacuumFile *x = a, *y = b;
        return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static uint64_t add_saturated(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Adds the cores of f (sorted by owner) up by owner into o (room for n): how many owners. */
static size_t sum_by_owner(const VacuumFile *f, size_t n, VacuumOwner *o) {
        size_t n_owners = 0;

        for (size_t i = 0; i < n; i++) {
                if (f[i].record)
                        continue;
                if (n_owners == 0 || o[n_owners - 1].uid != f[i].uid)
                        o[n_owners++] = (VacuumOwner) { .uid = f[i].uid };
                o[n_owners - 1].bytes = add_saturated(o[n_owners - 1].bytes, f[i].bytes);
        }
        return n_owners;
}

int vacuum_owners(int dirfd, VacuumOwner **ret, size_t *ret_n) {
        VacuumFile *f = NULL;
        VacuumOwner *o, *shrunk;
        VacuumStats s;
        size_t n = 0, n_owners;
        int r = scan(dirfd, &f, &n, &s);

        if (r < 0)
                return r;
        *ret = NULL;
        *ret_n = 0;
        if (n == 0)
                return 0;
        /* sorted by owner, each owner's cores add up in one entry: O(files log files) */
        qsort(f, n, sizeof *f, cmp_uid);
        o = calloc(n, sizeof *o);
        if (!o) {
                free_files(f, n);
                return -ENOMEM;
        }
        n_owners = sum_by_owner(f, n, o);
        free_files(f, n);
        if (n_owners == 0) {
                free(o);
                return 0;
        }
        shrunk = reallocarray(o, n_owners, sizeof *o); /* kept while the daemon runs: no slack */
        *ret = shrunk ?: o;
        *ret_n = n_owners;
        return 0;
}

uint64_t vacuum_held_of(const VacuumOwner *o, size_t n, uid_t uid) {
        uint64_t held = 0;

        for (size_t i = 0; i < n; i++)
                if (!vacuum_may_displace(uid, o[i].uid))
                        held = add_saturated(held, o[i].bytes);
        return held;
}

int vacuum_held(int dirfd, uid_t uid, uint64_t *ret) {
        VacuumOwner *o = NULL;
        size_t n = 0;
        int r = vacuum_owners(dirfd, &o, &n);

        if (r >= 0)
                *ret = vacuum_held_of(o, n, uid);
        free(o);
        return r;
}

static int cmp_age(const void *a, const void *b) {
        const VacuumFile *x = a, *y = b;
        return x->usec < y->usec ? -1 : x->usec > y->usec;
}

static int delete_file(int dirfd, VacuumFile *f, VacuumStats *s, VacuumReport report, void *userdata) {
        if (unlinkat(dirfd, f->name, 0) < 0 && errno != ENOENT)
                return negative_errno();
        if (report)
                report(f->name, f->bytes, userdata);
        s->bytes_freed += f->bytes;
        if (f->record) {
                s->n_records_deleted++;
                s->bytes_records -= MIN(s->bytes_records, f->bytes);
                s->n_records--;
        } else {
                s->n_deleted++;
                s->bytes_cores -= MIN(s->bytes_cores, f->bytes);
                s->n_cores--;
        }
        return 0;
}

static bool too_old(const VacuumLimits *l, const VacuumFile *f) {
        if (f->record && l->max_age_cores_only)
                return false;
        return l->max_age_usec != UINT64_MAX && l->now_usec > f->usec && l->now_usec - f->usec > l->max_age_usec;
}

/* f is sorted oldest first: marks the core named keep, dooms what is past the maximum age, then
 * marks the newest record left (it may be the record of the crash being stored: the budget
 * never takes it). */
static void mark_kept_and_old(VacuumFile *f, size_t n, const VacuumLimits *l, const char *keep) {
        size_t newest_record = SIZE_MAX;

        for (size_t i = 0; i < n; i++) {
                if (!f[i].record && keep && strcmp(f[i].name, keep) == 0)
                        f[i].keep = true;
                else if (too_old(l, &f[i]))
                        f[i].doomed = true;
                else if (f[i].record)
                        newest_record = i;
        }
        if (newest_record != SIZE_MAX)
                f[newest_record].keep = true;
}

/* What the limits take, chosen by vacuum_plan(); nothing if the file system cannot be asked. */
static int plan(int dirfd, const VacuumLimits *l, VacuumFile *f, size_t n, VacuumStats *s) {
        VacuumBudget b = {};
        VacuumPlanStats ps;
        int r;

        if (!vacuum_effective_limits(dirfd, l, &b.max_use, &b.keep_free, &b.avail))
                return 0;
        b.records = MAX(b.max_use / VACUUM_RECORDS_SHARE, l->records_min);
        b.for_crash = l->for_crash;
        b.crash_uid = l->crash_uid;
        b.records_users_first = l->records_users_first;
        if (l->keep_free_off)
                b.keep_free = 0;
        r = vacuum_plan(f, n, &b, &ps);
        s->keep_free_unreachable = ps.keep_free_unreachable;
        s->stopped_at_keep = ps.stopped_at_keep;
        return r;
}

int vacuum_run(int dirfd, const VacuumLimits *l, const char *keep, VacuumReport report, void *userdata,
               VacuumStats *ret) {
        VacuumFile *f = NULL;
        size_t n = 0;
        int r;

        r = scan(dirfd, &f, &n, ret);
        if (r < 0)
                return r;
        if (n > 0)
                qsort(f, n, sizeof *f, cmp_age);
        mark_kept_and_old(f, n, l, keep);
        r = plan(dirfd, l, f, n, ret);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (f[i].doomed) {
                        r = delete_file(dirfd, &f[i], ret, report, userdata);
                        if (f[i].keep && !f[i].record)
                                ret->keep_deleted = true;
                }
        free_files(f, n);
        return r;
}
