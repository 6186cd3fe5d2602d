/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the vacuum's choice of victims: pure, over a list of files already read (no I/O),
 * shared by coredumpd and coredumpctl. */
#pragma once

/* Who loses files when the store is past its limits. For a crash (the vacuum before and after
 * its core is stored), only files that crash may displace (vacuum_may_displace): a crash of an
 * unprivileged uid never costs another owner a file; a crash of a system uid (root, services)
 * takes from the unprivileged owners first (the oldest file of the one using the most bytes),
 * then its own oldest. Without a crash (the periodic vacuum, coredumpctl vacuum: the
 * administrator's) a victim comes from any owner, the one using the most first, so one user's
 * flood is trimmed before anyone else's (records_users_first: all the unprivileged owners'
 * records before any system uid's). Cores and records are budgeted apart. The file being
 * kept (the core just stored, the newest record) is never chosen: when its owner is the one
 * using the most and has nothing else left (or, for a crash, nothing it may displace is left),
 * the choice stops there. KeepFree= is pursued only while deleting the cores that may go can
 * restore it: a file system filled by something else does not empty the store. One sort and a
 * heap of owners: O(n log n) for n files. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct VacuumFile {
        char *name;       /* the caller's (the plan does not look at it) */
        uid_t uid;        /* the owner its name carries (UID_INVALID: summaries, an owner of their own) */
        uint64_t usec;    /* its crash time */
        uint64_t bytes;   /* allocated on disk */
        bool record;      /* a record or summary, not a core */
        bool keep;        /* never a victim (counts for its owner all the same) */
        bool doomed;      /* set by the plan (or before it: too old) */
} VacuumFile;

typedef struct VacuumBudget {
        uint64_t max_use;   /* cores may use this much */
        uint64_t keep_free; /* the file system should keep this much free */
        uint64_t avail;     /* free on the file system now */
        uint64_t records;   /* records may use this much */
        bool for_crash;     /* only what a crash of crash_uid may displace goes */
        uid_t crash_uid;
        bool records_users_first; /* records (without a crash): the unprivileged owners' first */
} VacuumBudget;

typedef struct VacuumPlanStats {
        bool keep_free_unreachable; /* below KeepFree= by more than all the cores that may go */
        bool stopped_at_keep;       /* the heaviest owner had only the kept file left (for a crash:
                                     * nothing it may displace was left), still past the limits */
} VacuumPlanStats;

/* Owners up to this uid are system users (root and services: store.h's SYSTEM_UID_MAX). */
#define VACUUM_PRIVILEGED_UID_MAX 999

/* Whether a crash of uid actor may have files of owner deleted to make room: its own, and for a
 * system uid an unprivileged owner's (summaries, UID_INVALID, count as unprivileged). */
bool vacuum_may_displace(uid_t actor, uid_t owner);

/* Marks doomed the files the limits take; files already doomed count as gone (their bytes
 * free). A kept core larger than max_use alone (for a crash: beside the cores it may not
 * displace) is doomed too: it is not kept, and nothing else goes for it. Returns 0, or -ENOMEM
 * (nothing more doomed). */
int vacuum_plan(VacuumFile *f, size_t n, const VacuumBudget *b, VacuumPlanStats *ret);
