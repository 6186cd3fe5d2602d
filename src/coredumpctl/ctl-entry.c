/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Entries as coredumpctl holds them: the growing list, field lookups, the merge key, the fields
 * list output keeps. Pure: memory only, no I/O. */
#include <string.h>

#include "ctl.h"
#include "ctl-entry.h"
#include "parse-util.h"

#define ENTRIES_GROW_MIN 64U

void entry_free(Entry *e) {
        record_free(&e->fields);
        free(e->cursor);
        free(e->record_path);
        *e = (Entry) {};
}

void entry_list_free(EntryList *l) {
        for (size_t i = 0; i < l->n; i++)
                entry_free(&l->items[i]);
        free(l->items);
        *l = (EntryList) {};
}

Entry *entry_list_add(EntryList *l) {
        if (l->n >= ENTRIES_MAX)
                return NULL;
        if (l->n == l->cap) {
                size_t cap = MAX((size_t) ENTRIES_GROW_MIN, l->cap * 2);
                Entry *n = reallocarray(l->items, cap, sizeof *n);
                if (!n)
                        return NULL;
                l->items = n;
                l->cap = cap;
        }
        l->items[l->n] = (Entry) {};
        return &l->items[l->n++];
}

char *entry_dup(const Entry *e, const char *name) {
        RecordField f;
        char *s;

        if (!record_find(e->fields.buf, e->fields.len, name, &f))
                return NULL;
        s = malloc(f.value_len + 1);
        if (!s)
                return NULL;
        memcpy(s, f.value, f.value_len);
        s[f.value_len] = 0;
        return s;
}

bool entry_has(const Entry *e, const char *name) {
        RecordField f;
        return record_find(e->fields.buf, e->fields.len, name, &f) != NULL;
}

size_t entry_count(const Entry *e, const char *name) {
        size_t pos = 0, nl = strlen(name), n = 0;
        RecordField f;

        while (record_next(e->fields.buf, e->fields.len, &pos, &f) > 0)
                n += f.name_len == nl && memcmp(f.name, name, nl) == 0;
        return n;
}

bool entry_has_value(const Entry *e, const char *name, const char *value) {
        size_t pos = 0, nl = strlen(name), vl = strlen(value);
        RecordField f;

        while (record_next(e->fields.buf, e->fields.len, &pos, &f) > 0)
                if (f.name_len == nl && memcmp(f.name, name, nl) == 0 && f.value_len == vl &&
                    memcmp(f.value, value, vl) == 0)
                        return true;
        return false;
}

static uint64_t entry_u64(const Entry *e, const char *name, uint64_t fallback) {
        _cleanup_free_ char *s = entry_dup(e, name);
        uint64_t v;

        if (!s || parse_uint64(s, &v) < 0)
                return fallback;
        return v;
}

void entry_index(Entry *e) {
        e->pid = entry_u64(e, "COREDUMP_PID", 0);
        e->timestamp = entry_u64(e, "COREDUMP_TIMESTAMP", 0);
        if (e->realtime == 0)
                e->realtime = entry_u64(e, "__REALTIME_TIMESTAMP", e->timestamp);
}

char *entry_machine(const Entry *e) {
        return entry_dup(e, "_MACHINE_ID") ?: entry_dup(e, "COREDUMP_HOSTNAME") ?: entry_dup(e, "_HOSTNAME");
}

char *entry_hostname(const Entry *e) {
        /* journald's, about the writer's machine, before the crashed task's own (its UTS
         * namespace's: anything it chose) */
        char *h = entry_dup(e, "_HOSTNAME");

        if (h && h[0])
                return h;
        free(h);
        return entry_dup(e, "COREDUMP_HOSTNAME");
}

bool entry_field_listed(const char *name, size_t len, const char *extra) {
        static const char *const listed[] = {
                "MESSAGE_ID", "COREDUMP_PID", "COREDUMP_UID", "COREDUMP_GID", "COREDUMP_SIGNAL",
                "COREDUMP_EXE", "COREDUMP_COMM", "COREDUMP_FILENAME", "COREDUMP_TRUNCATED",
                "COREDUMP_TIMESTAMP", "__REALTIME_TIMESTAMP", "_BOOT_ID", "_UID",
                "_MACHINE_ID", "COREDUMP_HOSTNAME", "_HOSTNAME", /* the HOST column */
        };

        if (extra && strlen(extra) == len && memcmp(extra, name, len) == 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(listed); i++)
                if (strlen(listed[i]) == len && memcmp(listed[i], name, len) == 0)
                        return true;
        return false;
}
