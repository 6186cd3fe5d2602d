/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: building a crash's record and checking the worker's RESULT (untrusted). Manager
 * (root): no I/O beyond a sealed memfd. */
#pragma once

#include "proto.h"
#include "record-fields.h"

typedef struct Crash Crash;

/* The record's base: what the kernel guaranteed (pidfd info, accept time) and, if /proc could
 * be confirmed to be this very process, what /proc said. */
int crash_record_base(Crash *c, Record *ret);
/* The record sealed into a memfd (read-only for the worker). */
int crash_record_memfd(const Record *r);
/* The worker's RESULT, checked, plus what the manager knows, as the record's final facts. */
void crash_facts(Crash *c, const MsgResult *res, const char *filename, CoreFacts *ret);
