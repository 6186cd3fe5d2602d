/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the entry sources: the journal, the sidecar records, and both merged. Read-only,
 * with the invoking user's privileges. */
#pragma once

#include <stdbool.h>

#include "ctl-entry.h"
#include "ctl-match.h"
#include "ctl.h"

/* How much of each entry to keep: the list columns only, or every field (info, dump, debug). */
typedef enum CollectMode {
        COLLECT_LIST,
        COLLECT_FULL,
} CollectMode;

/* Journal fields longer than this are cut when read (the core itself, if in the journal, is
 * fetched separately); the backtrace in MESSAGE stays well below it. */
#define JOURNAL_DATA_THRESHOLD_LIST 4096U
#define JOURNAL_DATA_THRESHOLD_FULL (2U << 20)
/* A sidecar record file larger than this is not a record coredumpd wrote. */
#define RECORD_FILE_MAX (RECORD_MAX + (1U << 20))

/* Coredump entries of the journal(s) selected by the arguments that pass the matches. A missing
 * journal is not an error (records may still exist): returns 0 with nothing added. */
int source_journal(const CtlArgs *a, const MatchSet *m, CollectMode mode, EntryList *out);
/* The sidecar records in the storage directory that pass the matches. Records the caller may not
 * read are skipped (counted in *ret_inaccessible). */
int source_records(const CtlArgs *a, const MatchSet *m, CollectMode mode, EntryList *out, unsigned *ret_inaccessible);
/* Both, merged (an entry in both counts once, from the journal), filtered by --since/--until,
 * ordered by time (newest first with -r), cut to -n. */
int collect_entries(const CtlArgs *a, const MatchSet *m, CollectMode mode, EntryList *out);
/* Parses one journal export entry (a sidecar record file's bytes, untrusted) into e: -EBADMSG if
 * malformed or not a coredump entry; extra names a field kept besides the list's (or NULL). */
int entry_from_export(Entry *e, const uint8_t *buf, size_t len, CollectMode mode, const char *extra);
/* Reads the COREDUMP= field of a journal entry (by cursor) into a new buffer. */
int journal_read_core(const CtlArgs *a, const Entry *e, void **ret, size_t *ret_len);
