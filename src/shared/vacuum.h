/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the store's size and age limits. Shared by coredumpd (root) and coredumpctl vacuum
 * (the invoking user): deletes only inside the directory fd given. */
#pragma once

/* Keeping the store within bounds: while the cores use more than MaxUse= or the file system has
 * less than KeepFree= free, delete cores by vacuum-plan.h's rule. For a crash (for_crash: the
 * vacuum before its core is written and the one after, with the core just stored kept), only
 * files that crash may displace: a user's crash deletes only that user's older files, a system
 * uid's those of the user using the most, then its own; never the core just stored, and never
 * for KeepFree= when the cores that may go could not restore it. Otherwise (the periodic vacuum,
 * coredumpctl vacuum) the oldest core of the owner using the most; plus ours, cores older than a
 * maximum age. Records (record.*.export, suppressed.*.export) outlive their cores, so the crash
 * is still listed, its core "missing", but they are bounded too (a crash loop's history must
 * not fill the disk): older than the maximum age, or past their budget of
 * 1/VACUUM_RECORDS_SHARE of MaxUse= (at least records_min), by the same rule. Every file of the
 * store is listed and counted (no cap; about 100 bytes of memory each while the vacuum runs).
 * Used by coredumpctl vacuum and the daemon. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define VACUUM_MAX_USE_LOWER (UINT64_C(1) << 20)   /* 1 MiB */
#define VACUUM_MAX_USE_UPPER (UINT64_C(4) << 30)   /* 4 GiB */
#define VACUUM_KEEP_FREE_UPPER (UINT64_C(4) << 30) /* 4 GiB */
#define VACUUM_KEEP_FREE_LOWER (UINT64_C(1) << 20) /* 1 MiB */
/* Records may take this fraction (1/N) of MaxUse=, and at least VACUUM_RECORDS_MIN: a few
 * thousand crashes' history even where MaxUse= is small. */
#define VACUUM_RECORDS_SHARE 4U
#define VACUUM_RECORDS_MIN (UINT64_C(64) << 20)

typedef struct VacuumLimits {
        uint64_t max_use;   /* UINT64_MAX: 10% of the file system, within [1 MiB, 4 GiB] */
        uint64_t keep_free; /* UINT64_MAX: 15% of the file system, within [1 MiB, 4 GiB] */
        uint64_t max_age_usec; /* UINT64_MAX: no age limit */
        bool max_age_cores_only; /* records older than max_age_usec stay (coredumpctl vacuum --older-than) */
        uint64_t records_min; /* the records' budget is at least this (VACUUM_RECORDS_MIN; 0 in tests) */
        uint64_t now_usec;
        bool for_crash;      /* making room for a crash of crash_uid: only what it may displace */
        uid_t crash_uid;
        bool keep_free_off;  /* KeepFree= is not pursued (the periodic vacuum: a user may fill the disk) */
        bool records_users_first; /* records over their budget: every unprivileged owner's before any
                                   * system uid's (the periodic vacuum: records are written past the
                                   * budget without a vacuum after them) */
} VacuumLimits;

typedef struct VacuumStats {
        unsigned n_cores, n_records, n_deleted, n_records_deleted;
        uint64_t bytes_cores, bytes_records, bytes_freed;
        bool keep_free_unreachable; /* below KeepFree= by more than the cores that may go: none went for it */
        bool stopped_at_keep;       /* the owner using the most had only the core just stored left */
        bool keep_deleted;          /* the core just stored alone was past MaxUse=: deleted */
} VacuumStats;

/* Called for each core or record deleted (name, bytes on disk) so the caller can say so. */
typedef void (*VacuumReport)(const char *name, uint64_t bytes, void *userdata);

/* What the store in dirfd holds (bytes are allocated blocks, as du counts them). */
int vacuum_usage(int dirfd, VacuumStats *ret);
/* MaxUse= and KeepFree= in bytes for the file system of dirfd, and its free bytes; false if it
 * cannot be asked. */
bool vacuum_effective_limits(int dirfd, const VacuumLimits *l, uint64_t *max_use, uint64_t *keep_free,
                             uint64_t *avail);
/* Pure: the most a new core may take on disk: what MaxUse= leaves beside the cores in flight
 * (what each was granted, or holds if more) and the stored cores its crash may not displace
 * (held; the others make room through the vacuum), and what the file system has above
 * KeepFree=. */
uint64_t vacuum_core_room(uint64_t max_use, uint64_t keep_free, uint64_t avail, uint64_t in_flight, uint64_t held);
/* The bytes on disk of one owner's stored cores. */
typedef struct VacuumOwner {
        uid_t uid;
        uint64_t bytes;
} VacuumOwner;
/* The stored cores' bytes by owner (records not counted): *ret_n entries in *ret (malloc'd,
 * ordered by uid; NULL and 0 for none). Scans the store (O(files log files)). */
int vacuum_owners(int dirfd, VacuumOwner **ret, size_t *ret_n);
/* Pure: of those, what a crash of uid may not displace (vacuum_may_displace). */
uint64_t vacuum_held_of(const VacuumOwner *o, size_t n, uid_t uid);
/* What the stored cores a crash of uid may not displace take on disk: vacuum_owners, then
 * vacuum_held_of. */
int vacuum_held(int dirfd, uid_t uid, uint64_t *ret);
/* Whether cores using used bytes and records using records bytes, with the file system of dirfd
 * as it is, break the limits. */
bool vacuum_over_limits(int dirfd, const VacuumLimits *l, uint64_t used, uint64_t records);
/* Deletes cores (then records) until the limits hold; the core named keep (may be NULL) only if
 * it alone is past MaxUse= (ret->keep_deleted). */
int vacuum_run(int dirfd, const VacuumLimits *l, const char *keep, VacuumReport report, void *userdata,
               VacuumStats *ret);
/* The owner uid and crash time a stored core's name carries (core.COMM.UID.BOOT.PID.USEC[.ext]). */
int vacuum_parse_name(const char *name, uid_t *ret_uid, uint64_t *ret_usec);
