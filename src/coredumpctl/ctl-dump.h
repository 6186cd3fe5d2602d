/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of coredumpctl dump and debug (the invoking user's privileges): creates only --output
 * or an unnamed temporary file, and runs the debugger. */
#pragma once

#include "ctl-entry.h"
#include "ctl.h"

/* dump: the most recent matching core, uncompressed, to --output or stdout (never a terminal). */
int verb_dump(const CtlArgs *a, const EntryList *l);
/* debug/gdb: the debugger on the most recent matching core; returns the debugger's exit status
 * (positive) or a negative errno. */
int verb_debug(const CtlArgs *a, const EntryList *l);
