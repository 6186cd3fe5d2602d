/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of list --group and of the stack signature it groups by (pure). Prints only to
 * stdout. */
#pragma once

#include "ctl-entry.h"
#include "ctl.h"

/* How many frames of the crashing thread make a stack signature, and how long it may get. */
#define SIGNATURE_FRAMES 3U
#define SIGNATURE_MAX 512U
/* Distinct machines counted per group; more show as "N+" */
#define GROUP_MACHINES_MAX 4096U

/* list --group: one row per COREDUMP_SIGNATURE (entries without one and no trace to compute it
 * from: per program, signal and top symbols) with count, machines, first and last seen. */
int show_groups(const CtlArgs *a, const EntryList *l);
/* The signature of an entry: the first SIGNATURE_FRAMES symbols of the first stack trace in
 * MESSAGE joined by " < ", or "" without one (pure: exported for tests). */
void stack_signature(const char *message, char *buf, size_t size);
