/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the vacuum's choice of victims: pure, over a list of files already read (no I/O),
 * shared by coredumpd and coredumpctl. */
#pragma once

/* Who loses files when the store is past its limits, fairly: a victim always comes from the
 * owner using the most bytes (cores and records budgeted apart), its oldest file first, so one
 * user's flood deletes only that user's files until they are at par with the next one. The
 * file being kept (the core just stored, the newest record) is never chosen: when its owner is
 * the one using the most and has nothing else left, the choice stops there rather than delete
 * another owner's files for it. KeepFree= is pursued only while deleting cores can restore
 * it: a file system filled by something else does not empty the store. One sort and a heap of
 * owners: O(n log n) for n files. */

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
} VacuumBudget;

typedef struct VacuumPlanStats {
        bool keep_free_unreachable; /* below KeepFree= by more than all the cores that may go */
        bool stopped_at_keep;       /* the heaviest owner had only the kept file left */
} VacuumPlanStats;

/* Marks doomed the files the limits take; files already doomed count as gone (their bytes
 * free). A kept core larger than max_use alone is doomed too: it is not kept, and nothing else
 * goes for it. Returns 0, or -ENOMEM (nothing more doomed). */
int vacuum_plan(VacuumFile *f, size_t n, const VacuumBudget *b, VacuumPlanStats *ret);
