/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the user's matches, resolved to journal fields and tested with journal semantics.
 * No I/O (getcwd() only). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ctl-entry.h"
#include "ctl.h"

/* A match as the user typed it, resolved to FIELD=value the way systemd's coredumpctl does:
 * "FIELD=value" as is, a path (contains '/') → COREDUMP_EXE (made absolute), a PID →
 * COREDUMP_PID, any other word → COREDUMP_COMM. */
typedef struct Match {
        char *field;
        char *value;
} Match;

typedef struct MatchSet {
        Match items[MATCHES_MAX];
        size_t n;
} MatchSet;

void match_set_free(MatchSet *s);
int match_set_parse(MatchSet *s, char **args, size_t n_args);
/* Journal semantics: values of the same field are alternatives, different fields must all hold. */
bool match_set_test(const MatchSet *s, const Entry *e);
