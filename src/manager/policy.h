/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: take, record only or count only for a crash, and the summaries' timer. Manager
 * (root); no I/O of its own. */
#pragma once

typedef struct Crash Crash;
typedef struct Manager Manager;

typedef enum PolicyVerdict {
        POLICY_TAKE,        /* take the core (COREDUMP_KERNEL|COREDUMP_WAIT) */
        POLICY_RECORD_ONLY, /* refuse the core, record the crash in full */
        POLICY_COUNT_ONLY,  /* refuse the core, count it for its limit's summary (nothing read) */
} PolicyVerdict;

/* What to answer the kernel's request, decided before a byte of the core is sent: the rate
 * limits per executable and service, MaxParallel= cores in flight, and whether anything would
 * use a core of the process's size (ProcessSizeMax=). why says why not (for the record). */
PolicyVerdict policy_decide(Crash *c, const char **why);
/* Arms the timer that writes the summaries of limit windows that ended. */
void policy_schedule_summaries(Manager *m);
