/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the verbs that show entries: list, info, -F FIELD, and the build-id line. They
 * write only to stdout (through the pager). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "ctl-entry.h"
#include "ctl.h"

int show_list(const CtlArgs *a, const EntryList *l);
int show_info(const CtlArgs *a, const EntryList *l);
int show_field(const CtlArgs *a, const EntryList *l);
void show_info_entry(const CtlArgs *a, FILE *f, const Entry *e, bool need_space);
/* "build-id: <hex>" of the module of COREDUMP_PACKAGE_JSON that is the executable. */
void show_build_id(FILE *f, const Entry *e, const char *exe);
