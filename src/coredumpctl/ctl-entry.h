/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: one crash entry (its fields, where it came from) and the list of them. Pure data
 * structures, no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

typedef enum EntrySource {
        SOURCE_JOURNAL = 1 << 0,
        SOURCE_RECORD = 1 << 1,
} EntrySource;

/* One crash as coredumpctl sees it: its fields (without the core itself), where it came from. */
typedef struct Entry {
        Record fields;
        uint64_t realtime;     /* the journal's timestamp, or the record's */
        unsigned sources;      /* EntrySource bits */
        bool core_in_journal;  /* a COREDUMP= field exists (Storage=journal) */
        char *cursor;          /* journal cursor, to fetch COREDUMP= later */
        char *record_path;     /* the sidecar record, if one was read */
        uint64_t pid, timestamp; /* merge key: COREDUMP_PID, COREDUMP_TIMESTAMP */
        bool writer_root;      /* journal entries: logged by root (or by no local process: _UID absent) */
        bool needs_record;     /* journal entries: believed only if a record of the same crash confirms it */
        bool foreign;          /* journal entries: from files the local journald did not write (see
                                * journal_open_nth()); never name a file here, never merged with a record */
        size_t journal_set;    /* journal entries: the journal_open_nth() index they were read from */
} Entry;

typedef struct EntryList {
        Entry *items;
        size_t n, cap;
} EntryList;

void entry_list_free(EntryList *l);
/* Appends a zeroed entry; NULL on ENOMEM or past ENTRIES_MAX. */
Entry *entry_list_add(EntryList *l);
void entry_free(Entry *e);

/* The first value of name as a new NUL-terminated string (NUL bytes inside kept as is), or NULL
 * if absent or out of memory. */
char *entry_dup(const Entry *e, const char *name);
bool entry_has(const Entry *e, const char *name);
/* How many times the entry carries name. */
size_t entry_count(const Entry *e, const char *name);
/* Whether the entry carries name=value (any occurrence). */
bool entry_has_value(const Entry *e, const char *name, const char *value);
/* The machine the entry came from: _MACHINE_ID, else its host name; NULL if neither. */
char *entry_machine(const Entry *e);
/* Its host name: journald's _HOSTNAME, else COREDUMP_HOSTNAME (records: coredumpd's, or in pipe
 * mode the crashed task's); NULL if neither. */
char *entry_hostname(const Entry *e);
/* Fills realtime, pid and timestamp from the fields (after all fields are in). */
void entry_index(Entry *e);
/* Whether a field is kept for list output (the rest only for info/dump/debug). */
bool entry_field_listed(const char *name, size_t len, const char *extra);
