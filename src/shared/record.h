/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the crash record and its serialised and export forms. Shared: no I/O except writing
 * an export to a given fd. */
#pragma once

/* A crash record: an ordered list of journal fields (NAME, binary-safe value). Built by the
 * manager from what it trusts, handed to the worker in a sealed memfd, extended with what only
 * the core tells, and written to the journal and, in journal export format, beside the core.
 *
 * Serialised form (also valid journal export format, binary field syntax):
 *   NAME '\n' le64(len) value '\n'   ...one per field */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Bounds: a record never grows past RECORD_MAX; a field longer than its max_len argument is cut. */
#define RECORD_MAX (8U << 20)
#define FIELD_NAME_MAX 64U

typedef struct Record {
        uint8_t *buf;
        size_t len, cap;
        bool overflow; /* something did not fit: the record says so in COREDUMP_RECORD_TRUNCATED */
} Record;

void record_free(Record *r);
/* Adds a field; a valid name is [A-Z0-9_], starting with a letter or '_'. Values longer than
 * max_len are cut to it (max_len 0 = no field cap, only RECORD_MAX). */
int record_add(Record *r, const char *name, const void *value, size_t len, size_t max_len);
int record_add_str(Record *r, const char *name, const char *value);
int record_addf(Record *r, const char *name, const char *fmt, ...) _printf_(3, 4);

typedef struct RecordField {
        const char *name;
        size_t name_len;
        const uint8_t *value;
        size_t value_len;
} RecordField;

/* Pure: the next field at *pos of a serialised record; 1 if one was read, 0 at the end,
 * -EBADMSG if the bytes are not a well-formed record. */
int record_next(const uint8_t *buf, size_t len, size_t *pos, RecordField *ret);
/* The value of the first field called name, or NULL. */
const RecordField *record_find(const uint8_t *buf, size_t len, const char *name, RecordField *ret);
bool record_field_name_valid(const char *name, size_t len);

/* Writes the record as one journal export entry (text form where the value allows, binary
 * otherwise), ending with the blank line. Fields whose name starts with "_CDS_" are internal
 * and skipped. */
int record_write_export(const uint8_t *buf, size_t len, int fd);
