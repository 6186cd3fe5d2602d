/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The entries a verb works on: journal and sidecar records merged (one crash counted once), then
 * --since/--until, order and -n. No I/O of its own beyond the two sources it calls. */
#include <string.h>

#include "ctl-source.h"
#include "log.h"

static int cmp_key(const Entry *x, const Entry *y) {
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->timestamp != y->timestamp)
                return x->timestamp < y->timestamp ? -1 : 1;
        return 0;
}

static int cmp_key_ptr(const void *a, const void *b) {
        return cmp_key(*(Entry *const *) a, *(Entry *const *) b);
}

static int cmp_time(const void *a, const void *b) {
        const Entry *x = a, *y = b;

        if (x->realtime != y->realtime)
                return x->realtime < y->realtime ? -1 : 1;
        return cmp_key(x, y);
}

/* Whether both entries carry name with the same value; absent in both counts as the same,
 * absent in one only as different unless either_may_lack. */
static bool same_field(const Entry *x, const Entry *y, const char *name, bool either_may_lack) {
        _cleanup_free_ char *a = entry_dup(x, name), *b = entry_dup(y, name);

        if (!a || !b)
                return either_may_lack || (!a && !b);
        return strcmp(a, b) == 0;
}

/* Same crash: same PID and crash timestamp (the key), the same crashing uid, and where both say,
 * the same boot and core file. Anyone may log an entry with the PID and time of someone else's
 * crash: the uid keeps a user's entry from standing in for root's record. */
static bool same_crash(const Entry *j, const Entry *r) {
        return j->timestamp != 0 && cmp_key(j, r) == 0 && same_field(j, r, "COREDUMP_UID", false) &&
               same_field(j, r, "_BOOT_ID", true) && same_field(j, r, "COREDUMP_FILENAME", true);
}

static Entry *find_in_journal(Entry **index, size_t n, const Entry *r) {
        Entry **hit = n > 0 ? bsearch(&r, index, n, sizeof *index, cmp_key_ptr) : NULL;

        if (!hit)
                return NULL;
        /* bsearch lands on one of possibly several equal keys */
        while (hit > index && cmp_key(hit[-1], r) == 0)
                hit--;
        /* an entry whose file the local journald did not write neither takes over a record
         * coredumpd wrote here nor hides it: both are listed */
        for (; hit < index + n && cmp_key(*hit, r) == 0; hit++)
                if (!(*hit)->foreign && same_crash(*hit, r))
                        return *hit;
        return NULL;
}

/* The fields of a journal entry that a record confirmed but that someone other than root logged:
 * the record's (coredumpd wrote it), plus the fields journald itself added that the record lacks
 * (_PID, _COMM, ... of the writer: names starting with '_', which no client can set). */
static int take_record_fields(Entry *j, const Entry *r) {
        Record merged = {};
        size_t pos = 0;
        RecordField f;
        int e = 0;

        merged.buf = malloc(MAX(r->fields.len, (size_t) 1));
        if (!merged.buf)
                return -ENOMEM;
        memcpy(merged.buf, r->fields.buf, r->fields.len);
        merged.len = merged.cap = r->fields.len;
        while (e >= 0 && record_next(j->fields.buf, j->fields.len, &pos, &f) > 0) {
                char name[FIELD_NAME_MAX + 1];

                if (f.name[0] != '_' || f.name_len > FIELD_NAME_MAX)
                        continue;
                memcpy(name, f.name, f.name_len);
                name[f.name_len] = 0;
                if (!record_find(merged.buf, merged.len, name, &(RecordField) {}))
                        e = record_add(&merged, name, f.value, f.value_len, 0);
        }
        if (e < 0 && e != -E2BIG) {
                record_free(&merged);
                return e;
        }
        record_free(&j->fields);
        j->fields = merged;
        return 0;
}

/* Records whose crash the journal has too are folded into the journal's entry (the record's fields
 * win unless root logged the entry); the rest are moved to the end of the journal's list. */
static int merge(EntryList *journal, EntryList *records) {
        _cleanup_free_ Entry **index = reallocarray(NULL, MAX(journal->n, (size_t) 1), sizeof *index);
        size_t n_journal = journal->n;

        if (!index)
                return -ENOMEM;
        for (size_t i = 0; i < n_journal; i++)
                index[i] = &journal->items[i];
        qsort(index, n_journal, sizeof *index, cmp_key_ptr);
        for (size_t i = 0; i < records->n; i++) {
                Entry *r = &records->items[i], *j = find_in_journal(index, n_journal, r);

                if (!j)
                        continue;
                if (!j->writer_root && take_record_fields(j, r) < 0)
                        return -ENOMEM;
                j->needs_record = false; /* confirmed */
                j->sources |= SOURCE_RECORD;
                if (!j->record_path)
                        j->record_path = TAKE_PTR(r->record_path);
                entry_free(r);
                r->sources = 0; /* folded */
        }
        /* the index is not used past here: appending may move the journal's array */
        for (size_t i = 0; i < records->n; i++) {
                Entry *e;

                if (records->items[i].sources == 0)
                        continue;
                e = entry_list_add(journal);
                if (!e)
                        return -ENOMEM;
                *e = records->items[i];
                records->items[i] = (Entry) {};
        }
        return 0;
}

/* Journal entries believed only with a record of the same crash, and none was found: gone. */
static void drop_unconfirmed(EntryList *l) {
        size_t k = 0;

        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].needs_record) {
                        log_debug("Skipping the entry of PID %llu: logged by the worker user about a user's crash "
                                  "that no record confirms.", (unsigned long long) l->items[i].pid);
                        entry_free(&l->items[i]);
                } else
                        l->items[k++] = l->items[i];
        }
        l->n = k;
}

static bool in_time_range(const CtlArgs *a, const Entry *e) {
        return (a->since == USEC_INFINITY || e->realtime >= a->since) &&
               (a->until == USEC_INFINITY || e->realtime <= a->until);
}

/* --since/--until, order, -n: what is left in l. */
static void select_entries(const CtlArgs *a, EntryList *l) {
        size_t k = 0;

        for (size_t i = 0; i < l->n; i++) {
                if (in_time_range(a, &l->items[i]))
                        l->items[k++] = l->items[i];
                else
                        entry_free(&l->items[i]);
        }
        l->n = k;
        if (l->n > 0)
                qsort(l->items, l->n, sizeof *l->items, cmp_time);
        if (a->reverse)
                for (size_t i = 0; i < l->n / 2; i++) {
                        Entry t = l->items[i];
                        l->items[i] = l->items[l->n - 1 - i];
                        l->items[l->n - 1 - i] = t;
                }
        while (a->rows_max != SIZE_MAX && l->n > a->rows_max)
                entry_free(&l->items[--l->n]);
}

int collect_entries(const CtlArgs *a, const MatchSet *m, CollectMode mode, EntryList *out) {
        _cleanup_(entry_list_free) EntryList records = {};
        unsigned inaccessible = 0;
        int r;

        r = source_journal(a, m, mode, out);
        if (r < 0)
                return r;
        /* -D and --file name journals explicitly: records too only if --storage= says where */
        if (a->n_files == 0 && (!a->directory || a->storage)) {
                r = source_records(a, m, mode, &records, &inaccessible);
                if (r < 0)
                        return r;
                if (inaccessible > 0)
                        log_debug("%u records are not readable by this user, skipped.", inaccessible);
                r = merge(out, &records);
                if (r < 0)
                        return log_error_errno(r, "Out of memory");
        }
        drop_unconfirmed(out);
        select_entries(a, out);
        return 0;
}
