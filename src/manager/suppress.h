/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the summaries of suppressed crashes. Manager (root): writes only to the store and to
 * journald's socket. */
#pragma once

#include "crash-limit.h"

typedef struct Manager Manager;

/* A window of a limit ended with crashes suppressed: one summary entry says how many, whose
 * and why — in the log, in the journal (never waiting for journald) and as
 * suppressed.*.export in the storage directory. */
void suppress_summary(const LimitBucket *b, void *userdata /* Manager */);

/* The summary's record (exported for tests). */
int suppress_record(const LimitBucket *b, const Manager *m, Record *ret);
