/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the last fields of a crash record, added the same way by manager and worker. Shared,
 * pure: no I/O. */
#pragma once

/* The last fields of a crash record, added by the same code on both sides of the boundary:
 * the worker for the journal entry, the manager for the record kept beside the core. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"

#define SD_MESSAGE_COREDUMP_STR "fc2e22bc6ee647b6b90729ab34a250b1"
/* ours: the summary of crashes whose cores a limit refused (see crash-limit.h) */
#define MESSAGE_COREDUMP_SUPPRESSED_STR "44a599742dfc4659a9825d09da683686"
/* ours: coredumpd (root) says which uid its workers log as, so that coredumpctl on a central
 * machine believes that uid's entries of this machine (ctl-journal.c) */
#define MESSAGE_COREDUMP_WORKERS_STR "9aa2e6ef52d9486daa6682c12982eb32"
#define WORKERS_UID_FIELD "COREDUMP_SOCKET_WORKER_UID"
#define THREAD_NAME_MAX 64
#define PROCESSING_ERROR_MAX 256

/* What the core told (checked by the manager) and what the manager did with it. Fixed size:
 * travels in the COMMIT message. */
#define FORWARDED_TO_MAX 256 /* a unit name (UNIT_NAME_MAX) */

typedef struct CoreFacts {
        uint32_t has_signal, has_code, has_tid, truncated;
        int32_t signal;
        int32_t code;
        int32_t tid;
        uint32_t n_threads;
        char comm[17];                       /* NT_PRPSINFO pr_fname, printable */
        char thread_name[THREAD_NAME_MAX];   /* from /proc at crash time */
        char filename[PATH_MAX];             /* "" if not stored */
        char processing_error[PROCESSING_ERROR_MAX]; /* why not, when it went wrong after the job */
        char forwarded_to[FORWARDED_TO_MAX];         /* the unit whose container's collector took it */
        char forward_error[PROCESSING_ERROR_MAX];    /* why it could not go there */
} CoreFacts;

/* Appends the final fields (signal and its name, code, TID, thread name, file name, why there
 * is no file, truncation, MESSAGE_ID, PRIORITY, MESSAGE) to r, whose base fields came from the
 * manager. */
int record_finalize(Record *r, const CoreFacts *f);
/* The analysis fields a worker may add: the stack trace text (appended to MESSAGE by
 * record_finalize) and the package fields. */
#define ANALYSIS_STACK_FIELD "_CDS_STACK_TRACE"
#define ANALYSIS_BYTES_MAX ((1U << 20) + (256U << 10) + 4096U)
/* Adds the fields of a worker's analysis (a serialised record) to r after checking them: only
 * the analysis fields, each at most once, no NUL bytes. -EBADMSG if anything else is there. */
int record_merge_analysis(Record *r, const uint8_t *buf, size_t len);

/* "SIGSEGV" etc., or NULL. */
const char *signal_name(int sig, char *buf, size_t size);
/* Keeps only printable ASCII of a string that came from a core (in place). */
void string_sanitize(char *s);
