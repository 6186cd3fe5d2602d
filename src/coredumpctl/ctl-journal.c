/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The journal source: coredump entries (kept if their writer may speak of that crash) and, by
 * cursor, a core kept in the journal. Reads journals with the invoking user's rights; writes nothing. */
#include <pwd.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "ctl-corefile.h"
#include "ctl-escape.h"
#include "ctl-journal-files.h"
#include "ctl-source.h"
#include "log.h"
#include "parse-util.h"
#include "record-fields.h"
#include "uid-class.h"

static int add_matches(sd_journal *j, const MatchSet *m) {
        int r;

        r = sd_journal_add_match(j, "MESSAGE_ID=" SD_MESSAGE_COREDUMP_STR, 0);
        if (r >= 0)
                r = sd_journal_add_match(j, "MESSAGE_ID=" SD_MESSAGE_BACKTRACE_STR, 0);
        for (size_t i = 0; r >= 0 && i < m->n; i++) {
                _cleanup_free_ char *s = NULL;
                if (asprintf(&s, "%s=%s", m->items[i].field, m->items[i].value) < 0)
                        return -ENOMEM;
                r = sd_journal_add_match(j, s, 0);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to add journal matches: %m");
        return 0;
}

/* One "NAME=value" data object into the entry. */
static int entry_add_data(Entry *e, const void *d, size_t l, CollectMode mode, const char *extra) {
        const char *eq = memchr(d, '=', l);
        char name[FIELD_NAME_MAX + 1];
        size_t nl;

        if (!eq)
                return 0;
        nl = (size_t) (eq - (const char *) d);
        if (nl == 0 || nl > FIELD_NAME_MAX)
                return 0;
        memcpy(name, d, nl);
        name[nl] = 0;
        if (strcmp(name, "COREDUMP") == 0) {
                e->core_in_journal = true;
                return 0;
        }
        if (mode == COLLECT_LIST && !entry_field_listed(name, nl, extra))
                return 0;
        /* E2BIG: the entry is larger than any record; keep what fitted. */
        (void) record_add(&e->fields, name, eq + 1, l - nl - 1, 0);
        return 0;
}

typedef enum EntryTrust {
        TRUST_NONE,        /* dropped */
        TRUST_FULL,        /* believed */
        TRUST_IF_RECORDED, /* believed only if a record coredumpd wrote confirms the crash */
} EntryTrust;

/* Fields every verb reads one value of (the first): an entry with two of one is not believed, so a
 * journal match on the second value cannot select what is shown and acted on as the first. */
static const char *const single_fields[] = {
        "COREDUMP_UID", "COREDUMP_PID", "COREDUMP_TIMESTAMP", "COREDUMP_FILENAME", "COREDUMP_EXE", "_BOOT_ID",
};

static bool fields_single(const Entry *e) {
        for (size_t i = 0; i < ELEMENTSOF(single_fields); i++)
                if (entry_count(e, single_fields[i]) > 1)
                        return false;
        return true;
}

static uid_t uid_of(const char *name) {
        struct passwd *pw = getpwnam(name);
        return pw ? pw->pw_uid : UID_INVALID;
}

/* The collectors' own users, looked up once: ours (WorkerUser=) and systemd-coredump's. */
static void collectors(const CtlArgs *a, uid_t *ret_ours, uid_t *ret_systemd) {
        static bool resolved;
        static uid_t ours = UID_INVALID, systemds = UID_INVALID;
        Config c;

        if (!resolved) {
                if (ctl_load_config(a, &c) >= 0)
                        ours = uid_of(c.worker_user);
                systemds = uid_of("systemd-coredump");
                resolved = true;
        }
        *ret_ours = ours;
        *ret_systemd = systemds;
}

/* Machines (times their workers' uids, if one changed) told apart: more are not believed. */
#define ANNOUNCED_MAX 4096U
/* a uid in decimal and its NUL */
#define DECIMAL_UID_MAX 11U

/* Which uid the workers of each machine log as, as that machine's coredumpd (root) told its
 * journal at start and at each reload that changed it (announce_workers()); read once per run,
 * for entries of other machines. */
typedef struct Announced {
        char machine[MACHINE_ID_HEX + 1];
        uid_t uid;
} Announced;

static Announced announced[ANNOUNCED_MAX];
static size_t n_announced;

/* The value of field in the current entry, NUL-terminated in buf; false if absent or too long. */
static bool current_value(sd_journal *j, const char *field, char *buf, size_t size) {
        size_t n = strlen(field), l;
        const void *d;

        if (sd_journal_get_data(j, field, &d, &l) < 0 || l <= n + 1 || l - n - 1 >= size)
                return false;
        memcpy(buf, (const char *) d + n + 1, l - n - 1);
        buf[l - n - 1] = 0;
        return true;
}

static void announced_add(const char *machine, const char *uid) {
        uint64_t u;

        if (strlen(machine) != MACHINE_ID_HEX || parse_uint64(uid, &u) < 0 || u >= UID_INVALID)
                return;
        for (size_t i = 0; i < n_announced; i++)
                if (announced[i].uid == (uid_t) u && strcmp(announced[i].machine, machine) == 0)
                        return;
        if (n_announced >= ANNOUNCED_MAX)
                return;
        snprintf(announced[n_announced].machine, sizeof announced[n_announced].machine, "%s", machine);
        announced[n_announced++].uid = (uid_t) u;
}

static void announced_load_from(sd_journal *j) {
        if (sd_journal_add_match(j, "MESSAGE_ID=" MESSAGE_COREDUMP_WORKERS_STR, 0) < 0 ||
            sd_journal_add_match(j, "_UID=0", 0) < 0) /* root said it: the only word taken */
                return;
        while (sd_journal_next(j) > 0) {
                char machine[MACHINE_ID_HEX + 2], uid[DECIMAL_UID_MAX];

                if (current_value(j, "_MACHINE_ID", machine, sizeof machine) &&
                    current_value(j, WORKERS_UID_FIELD, uid, sizeof uid))
                        announced_add(machine, uid);
        }
}

static void announced_load(const CtlArgs *a) {
        static bool loaded;
        bool foreign;

        if (loaded)
                return;
        loaded = true;
        for (size_t i = 0; i < journal_sets(a); i++) {
                _cleanup_(journal_closep) sd_journal *j = NULL;

                if (journal_open_nth(a, i, &j, &foreign) > 0)
                        announced_load_from(j);
        }
}

/* An entry from another machine (systemd-journal-remote's), or from any file the local journald
 * did not write, was written by a uid of that machine, which says nothing about this one's users:
 * believed if that machine's coredumpd, as root, announced the writer as its workers' uid (a
 * service account there running a collector by hand is not). Such an entry never names a file
 * here (ctl-corefile.c), so believing it only lists it. */
static bool remote_worker(const CtlArgs *a, const Entry *e, uint64_t writer) {
        _cleanup_free_ char *machine = entry_dup(e, "_MACHINE_ID");

        if (!machine || writer >= UID_INVALID)
                return false;
        announced_load(a);
        for (size_t i = 0; i < n_announced; i++)
                if (announced[i].uid == (uid_t) writer && strcmp(announced[i].machine, machine) == 0)
                        return true;
        return false;
}

/* Anyone can log an entry with the coredump MESSAGE_ID; _UID (journald's, not forgeable) says who
 * did. Who may speak of whose crash (coredumpctl(1), "Which entries are believed"):
 *   root: any crash (coredumpd's summaries; systemd-coredump without its user);
 *   a person's uid (uid_is_personal(): not a system user, nobody or a DynamicUser= uid): their own
 *     crashes only, as our worker runs as the crashing user for a plain user dump and
 *     systemd-coredump for every non-system user;
 *   our WorkerUser= and systemd-coredump: crashes of the other uids, which always go to them (a
 *     process running as nobody or a recycled DynamicUser= uid is not believed about them);
 *   our WorkerUser= about a regular user's crash (one that changed credentials, whose dump is not the
 *     user's): only if a record of the same crash confirms it (see collect_entries()).
 * An entry without _UID was not logged by a local process (the kernel, audit) and is believed as
 * such; one from another machine or from a file the local journald did not write (e->foreign), see
 * remote_worker(): there _UID is whatever the file's writer put, and no uid of this machine. */
static EntryTrust entry_trust(const CtlArgs *a, const Entry *e) {
        _cleanup_free_ char *w = entry_dup(e, "_UID"), *c = entry_dup(e, "COREDUMP_UID");
        uint64_t writer, crashed;
        uid_t ours, systemds;

        if (!w)
                return TRUST_FULL; /* for a foreign entry: believed as another machine's, see judge_entry() */
        if (parse_uint64(w, &writer) < 0)
                return TRUST_NONE;
        if (writer == 0)
                return TRUST_FULL;
        if (!fields_single(e))
                return TRUST_NONE;
        if (!c || parse_uint64(c, &crashed) < 0 || crashed >= UID_INVALID)
                return TRUST_NONE;
        if (writer == crashed && uid_is_personal((uid_t) crashed))
                return TRUST_FULL;
        /* no record of that machine is here to confirm a worker's word about a regular user */
        if (e->foreign || entry_from_other_machine(a, e))
                return remote_worker(a, e, writer) && !uid_is_personal((uid_t) crashed) ? TRUST_FULL : TRUST_NONE;
        collectors(a, &ours, &systemds);
        if (writer != ours && writer != systemds)
                return TRUST_NONE;
        if (!uid_is_personal((uid_t) crashed))
                return TRUST_FULL;
        return writer == ours ? TRUST_IF_RECORDED : TRUST_NONE;
}

static int read_entry(sd_journal *j, CollectMode mode, const CtlArgs *a, size_t source, bool foreign, Entry *e) {
        const void *d;
        size_t l;
        int r;

        r = sd_journal_get_realtime_usec(j, &e->realtime);
        if (r < 0)
                return r;
        SD_JOURNAL_FOREACH_DATA(j, d, l) {
                r = entry_add_data(e, d, l, mode, a->field);
                if (r < 0)
                        return r;
        }
        e->sources = SOURCE_JOURNAL;
        e->journal_set = source;
        e->foreign = foreign;
        if (e->core_in_journal) {
                r = sd_journal_get_cursor(j, &e->cursor);
                if (r < 0)
                        return r;
        }
        entry_index(e);
        return 0;
}

/* Keeps the entry (0, marked as its trust says) or refuses it (-EPERM). */
static int judge_entry(const CtlArgs *a, Entry *e) {
        _cleanup_free_ char *w = entry_dup(e, "_UID");
        EntryTrust t = entry_trust(a, e);
        uint64_t writer;

        if (t == TRUST_NONE) {
                log_debug("Skipping a coredump entry of PID %llu logged by uid %s, who may not speak of that crash.",
                          (unsigned long long) e->pid, w && !escape_needed(w, ESCAPE_DEFAULT) ? w : "?");
                return -EPERM;
        }
        /* root of this machine: what its journald says, never what another file's writer put */
        e->writer_root = !e->foreign && (!w || (parse_uint64(w, &writer) >= 0 && writer == 0));
        e->needs_record = t == TRUST_IF_RECORDED;
        return 0;
}

/* The coredump entries of one set of journal files (journal_open_nth()) into out. */
static int source_journal_set(const CtlArgs *a, const MatchSet *m, CollectMode mode, sd_journal *j, size_t index,
                              bool foreign, EntryList *out) {
        int r;

        r = add_matches(j, m);
        if (r < 0)
                return r;
        (void) sd_journal_set_data_threshold(j, a->field ? 0 :
                                             mode == COLLECT_FULL ? JOURNAL_DATA_THRESHOLD_FULL : JOURNAL_DATA_THRESHOLD_LIST);
        for (;;) {
                Entry *e;

                r = sd_journal_next(j);
                if (r < 0)
                        return log_error_errno(r, "Failed to iterate through the journal: %m");
                if (r == 0)
                        return 0;
                e = entry_list_add(out);
                if (!e)
                        return log_error_errno(-ENOMEM, "Too many coredump entries or out of memory");
                r = read_entry(j, mode, a, index, foreign, e);
                if (r < 0)
                        log_warning_errno(r, "Skipping an unreadable journal entry: %m");
                else
                        r = judge_entry(a, e);
                if (r < 0) {
                        entry_free(e);
                        out->n--;
                }
        }
}

int source_journal(const CtlArgs *a, const MatchSet *m, CollectMode mode, EntryList *out) {
        for (size_t i = 0; i < journal_sets(a); i++) {
                _cleanup_(journal_closep) sd_journal *j = NULL;
                bool foreign;
                int r;

                r = journal_open_nth(a, i, &j, &foreign);
                if (r < 0)
                        return r;
                if (r > 0 && (r = source_journal_set(a, m, mode, j, i, foreign, out)) < 0)
                        return r;
        }
        return 0;
}

int journal_read_core(const CtlArgs *a, const Entry *e, void **ret, size_t *ret_len) {
        _cleanup_(journal_closep) sd_journal *j = NULL;
        bool foreign;
        const void *d;
        size_t l;
        int r;

        if (!e->cursor)
                return -ENOENT;
        r = journal_open_nth(a, e->journal_set, &j, &foreign);
        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        r = sd_journal_seek_cursor(j, e->cursor);
        if (r >= 0)
                r = sd_journal_next(j);
        if (r > 0) /* the seek lands next to a cursor that is gone: then it is another entry */
                r = sd_journal_test_cursor(j, e->cursor);
        if (r == 0)
                r = -ESTALE;
        if (r < 0)
                return log_error_errno(r, "Failed to find the journal entry again: %m");
        (void) sd_journal_set_data_threshold(j, 0);
        r = sd_journal_get_data(j, "COREDUMP", &d, &l);
        if (r < 0)
                return log_error_errno(r, "Failed to retrieve COREDUMP field: %m");
        l -= strlen("COREDUMP=");
        *ret = malloc(MAX(l, (size_t) 1));
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, (const char *) d + strlen("COREDUMP="), l);
        *ret_len = l;
        return 0;
}
