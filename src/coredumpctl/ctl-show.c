/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verbs that show entries: list (table or JSON), info, and -F FIELD; every text an entry
 * carries is escaped on its way to a terminal. Writes to stdout (or the FILE given) only. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl-corefile.h"
#include "ctl-escape.h"
#include "ctl-format.h"
#include "json.h"
#include "ctl-pager.h"
#include "ctl-show.h"
#include "ctl-symbolize.h"
#include "ctl-table.h"
#include "log.h"
#include "parse-util.h"
#include "time-util.h"

#define INFO_INDENT "                " /* continuation lines of Message: */

static bool is_coredump(const Entry *e) {
        return entry_has_value(e, "MESSAGE_ID", SD_MESSAGE_COREDUMP_STR);
}

/* A field shown in a message: escaped, "n/a" if absent, "?" if out of memory. */
static char *shown(const char *v) {
        return escape_text(v ?: "n/a", ESCAPE_DEFAULT) ?: strdup("?");
}

static void warn_malformed(const char *pid, const char *uid, const char *gid, const char *sig, const char *comm) {
        _cleanup_free_ char *p = shown(pid), *u = shown(uid), *g = shown(gid), *s = shown(sig), *c = shown(comm);

        log_warning("Found a coredump entry without mandatory fields (PID=%s, UID=%s, GID=%s, SIGNAL=%s, COMM=%s), ignoring.",
                    p ?: "?", u ?: "?", g ?: "?", s ?: "?", c ?: "?");
}

/* An id column: a decimal number, never the entry's text as is (JSON prints numbers raw). */
static bool parse_id(const char *s, uint64_t max, uint64_t *ret) {
        return s && parse_uint64(s, ret) >= 0 && *ret <= max;
}

/* Whether the entries come from more than one machine (journals systemd-journal-remote received):
 * then list names each one's host. */
static bool spans_machines(const EntryList *l) {
        _cleanup_free_ char *first = NULL;

        for (size_t i = 0; i < l->n; i++) {
                _cleanup_free_ char *m = entry_machine(&l->items[i]);

                if (!m)
                        continue;
                if (!first)
                        first = TAKE_PTR(m);
                else if (strcmp(first, m) != 0)
                        return true;
        }
        return false;
}

static int host_cell(const CtlArgs *a, Table *t, const Entry *e) {
        _cleanup_free_ char *h = entry_hostname(e), *s = NULL;

        if (!h)
                return table_add(t, CELL_EMPTY, NULL, NULL);
        s = a->json != JSON_OFF ? TAKE_PTR(h) : escape_text(h, ESCAPE_DEFAULT);
        return s ? table_add(t, CELL_STRING, NULL, "%s", s) : -ENOMEM;
}

static int list_row(const CtlArgs *a, Table *t, const Entry *e, bool hosts) {
        _cleanup_free_ char *pid = entry_dup(e, "COREDUMP_PID"), *uid = entry_dup(e, "COREDUMP_UID"),
                            *gid = entry_dup(e, "COREDUMP_GID"), *sig = entry_dup(e, "COREDUMP_SIGNAL"),
                            *comm = entry_dup(e, "COREDUMP_COMM"), *exe = entry_dup(e, "COREDUMP_EXE"), *name = NULL;
        char ts[FORMAT_TIMESTAMP_MAX], signame[SIGNAL_NAME_MAX], size[FORMAT_BYTES_MAX];
        uint64_t npid, nuid, ngid;
        int signo = 0, r = 0;
        CoreFile cf;

        if (!parse_id(pid, INT32_MAX, &npid) || !parse_id(uid, UINT32_MAX - 1, &nuid) ||
            !parse_id(gid, UINT32_MAX - 1, &ngid) || !sig || !comm) {
                warn_malformed(pid, uid, gid, sig, comm);
                return 0;
        }
        /* JSON escapes what it prints itself; the table is text for a terminal */
        name = a->json != JSON_OFF ? strdup(exe ?: comm) : escape_text(exe ?: comm, ESCAPE_DEFAULT);
        if (!name)
                return -ENOMEM;
        if (!is_coredump(e) || parse_int_range(sig, 1, SIGRTMAX, &signo) < 0)
                signo = 0;
        corefile_analyze(a, e, &cf);
        if (a->json != JSON_OFF)
                r = table_add(t, CELL_NUMBER, NULL, "%" PRIu64, e->realtime);
        else
                r = table_add(t, CELL_STRING, NULL, "%s", format_timestamp(ts, sizeof ts, e->realtime));
        if (hosts)
                r = r ?: host_cell(a, t, e);
        r = r ?: table_add(t, CELL_NUMBER, NULL, "%" PRIu64, npid);
        r = r ?: table_add(t, CELL_NUMBER, NULL, "%" PRIu64, nuid);
        r = r ?: table_add(t, CELL_NUMBER, NULL, "%" PRIu64, ngid);
        if (signo == 0)
                r = r ?: table_add(t, CELL_EMPTY, NULL, NULL);
        else if (a->json != JSON_OFF)
                r = r ?: table_add(t, CELL_NUMBER, NULL, "%d", signo);
        else
                r = r ?: table_add(t, CELL_STRING, NULL, "SIG%s", signal_abbrev(signame, sizeof signame, signo));
        r = r ?: (cf.state ? table_add(t, CELL_STRING, cf.color, "%s", cf.state) : table_add(t, CELL_EMPTY, NULL, NULL));
        r = r ?: table_add(t, CELL_STRING, NULL, "%s", name);
        if (cf.size == UINT64_MAX)
                r = r ?: table_add(t, CELL_EMPTY, NULL, NULL);
        else if (a->json != JSON_OFF)
                r = r ?: table_add(t, CELL_NUMBER, NULL, "%" PRIu64, cf.size);
        else
                r = r ?: table_add(t, CELL_STRING, NULL, "%s", format_bytes(size, sizeof size, cf.size));
        return r;
}

int show_list(const CtlArgs *a, const EntryList *l) {
        /* systemd's columns; from several machines, each entry's host after the time */
        Table one = { .n_columns = 8, .names = { "time", "pid", "uid", "gid", "sig", "corefile", "exe", "size" },
                      .right = { false, true, true, true, false, false, false, true } };
        Table many = { .n_columns = 9, .names = { "time", "host", "pid", "uid", "gid", "sig", "corefile", "exe", "size" },
                       .right = { false, false, true, true, true, false, false, false, true } };
        bool hosts = spans_machines(l);
        Table t = hosts ? many : one;
        int r = 0;

        for (size_t i = 0; i < l->n && r >= 0; i++)
                r = list_row(a, &t, &l->items[i], hosts);
        if (r >= 0) {
                pager_open(a);
                r = table_print(&t, stdout, a->legend, a->json);
        }
        table_free(&t);
        return r < 0 ? log_error_errno(r, "Failed to print the table: %m") : 0;
}

static void print_value_escaped(FILE *f, const uint8_t *v, size_t len) {
        _cleanup_free_ char *s = strndup((const char *) v, len);

        /* a NUL inside ends the text: what follows it is not shown */
        escape_fputs(f, s ?: "?", ESCAPE_KEEP_LINES);
}

/* -F prints values as they are for scripts; on a terminal (or the pager on one) escaped. */
int show_field(const CtlArgs *a, const EntryList *l) {
        size_t nl = strlen(a->field);
        bool tty = isatty(STDOUT_FILENO);

        pager_open(a);
        for (size_t i = 0; i < l->n; i++) {
                const Entry *e = &l->items[i];
                size_t pos = 0;
                RecordField f;

                /* a field may appear more than once in an entry: print every occurrence */
                while (record_next(e->fields.buf, e->fields.len, &pos, &f) > 0)
                        if (f.name_len == nl && memcmp(f.name, a->field, nl) == 0) {
                                if (tty)
                                        print_value_escaped(stdout, f.value, f.value_len);
                                else
                                        fwrite(f.value, 1, f.value_len, stdout);
                                fputc('\n', stdout);
                        }
        }
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write: %m");
}

static void print_id_line(FILE *f, const char *label, const char *value, bool group) {
        char name[64];
        uint64_t id;

        if (!value)
                return;
        fprintf(f, "%14s: ", label);
        escape_fputs(f, value, ESCAPE_DEFAULT);
        if (parse_uint64(value, &id) >= 0 && id < UINT32_MAX) {
                fputs(" (", f);
                escape_fputs(f, group ? gid_name(name, sizeof name, (gid_t) id) : uid_name(name, sizeof name, (uid_t) id),
                             ESCAPE_DEFAULT);
                fputc(')', f);
        }
        fputc('\n', f);
}

/* "label: value" with the value escaped. */
static void print_line(FILE *f, const char *label, const char *value) {
        fprintf(f, "%14s: ", label);
        escape_fputs(f, value, ESCAPE_DEFAULT);
        fputc('\n', f);
}

static void print_str_line(FILE *f, const Entry *e, const char *label, const char *field) {
        _cleanup_free_ char *v = entry_dup(e, field);

        if (v)
                print_line(f, label, v);
}

static void print_signal(FILE *f, const Entry *e) {
        _cleanup_free_ char *sig = entry_dup(e, "COREDUMP_SIGNAL");
        char name[SIGNAL_NAME_MAX];
        int signo;

        if (!sig)
                return;
        if (is_coredump(e) && parse_int_range(sig, 1, SIGRTMAX, &signo) >= 0)
                fprintf(f, "%14s: %s (%s)\n", "Signal", sig, signal_abbrev(name, sizeof name, signo));
        else
                print_line(f, is_coredump(e) ? "Signal" : "Reason", sig);
}

static void print_timestamp(FILE *f, const Entry *e) {
        _cleanup_free_ char *ts = entry_dup(e, "COREDUMP_TIMESTAMP");
        char abs[FORMAT_TIMESTAMP_MAX], rel[FORMAT_TIMESTAMP_MAX];
        uint64_t u;

        if (!ts)
                return;
        if (parse_uint64(ts, &u) >= 0)
                fprintf(f, "%14s: %s (%s)\n", "Timestamp", format_timestamp(abs, sizeof abs, u),
                        format_timestamp_relative(rel, sizeof rel, u, now_usec(CLOCK_REALTIME)));
        else
                print_line(f, "Timestamp", ts);
}

static void print_storage(const CtlArgs *a, FILE *f, const Entry *e) {
        char size[FORMAT_BYTES_MAX];
        CoreFile cf;

        corefile_analyze(a, e, &cf);
        if (cf.path[0]) {
                fprintf(f, "%14s: %s", "Storage", cf.color ?: "");
                escape_fputs(f, cf.path, ESCAPE_DEFAULT);
                fprintf(f, " (%s)%s\n", cf.state, cf.color && *cf.color ? ansi_normal() : "");
                if (cf.size != UINT64_MAX)
                        fprintf(f, "%14s: %s\n", "Size on Disk", format_bytes(size, sizeof size, cf.size));
        } else
                fprintf(f, "%14s: %s\n", "Storage", e->core_in_journal ? "journal" : "none");
}

/* Whether a frame of the message is in a module but has no name ("n/a"): debug info could name it. */
static bool has_unnamed_frame(const char *message) {
        for (const char *p = message; p && *p;) {
                const char *eol = strchrnul(p, '\n');
                SymFrame fr;

                if (symbolize_parse_frame(p, (size_t) (eol - p), &fr) && fr.name_len == 3 &&
                    memcmp(p + fr.name_off, "n/a", 3) == 0 && !(fr.module_len == 3 && memcmp(p + fr.module_off, "n/a", 3) == 0))
                        return true;
                p = *eol ? eol + 1 : NULL;
        }
        return false;
}

/* info with DEBUGINFOD_URLS set: the message with its traces named again (NULL: as stored), and
 * in note what was found; without it NULL, and a note if a frame has no name. */
static char *symbolized(const CtlArgs *a, const Entry *e, const char *raw, char *note, size_t size) {
        _cleanup_free_ char *json = NULL;
        char *text = NULL;
        int r;

        if (!a->verb || strcmp(a->verb, "info") != 0 || !strstr(raw, "Stack trace of thread "))
                return NULL;
        if (!symbolize_enabled()) {
                if (has_unnamed_frame(raw))
                        snprintf(note, size, "frames without a name in the trace as stored: set DEBUGINFOD_URLS "
                                             "to look their debug info up by build-id");
                return NULL;
        }
        json = entry_dup(e, "COREDUMP_PACKAGE_JSON");
        r = symbolize_message(raw, json, a->root, &text, note, size);
        if (r < 0 && r != -EOPNOTSUPP)
                log_warning_errno(r, "Failed to look up the stack traces again, showing them as stored: %m");
        return text;
}

/* The message, stack traces and all: escaped but for its newlines and tabs, each line indented;
 * then the note of the lookup, if there was one. */
static void print_message(const CtlArgs *a, FILE *f, const Entry *e) {
        _cleanup_free_ char *raw = entry_dup(e, "MESSAGE"), *named = NULL, *m = NULL;
        char note[SYMBOLIZE_NOTE_MAX] = "";
        size_t end;

        if (!raw)
                return;
        named = symbolized(a, e, raw, note, sizeof note);
        m = escape_text(named ?: raw, ESCAPE_KEEP_LINES);
        if (!m)
                return;
        end = strlen(m);
        while (end > 0 && strchr(" \t\n", m[end - 1]))
                m[--end] = 0;
        fprintf(f, "%14s: ", "Message");
        for (const char *p = m; *p; p++) {
                fputc(*p, f);
                if (*p == '\n')
                        fputs(INFO_INDENT, f);
        }
        fputc('\n', f);
        if (note[0])
                print_line(f, "Debug Info", note);
}

void show_info_entry(const CtlArgs *a, FILE *f, const Entry *e, bool need_space) {
        _cleanup_free_ char *pid = entry_dup(e, "COREDUMP_PID"), *comm = entry_dup(e, "COREDUMP_COMM"),
                            *exe = entry_dup(e, "COREDUMP_EXE"), *pkg = entry_dup(e, "COREDUMP_PACKAGE_NAME"),
                            *ver = entry_dup(e, "COREDUMP_PACKAGE_VERSION"),
                            *uid = entry_dup(e, "COREDUMP_UID"), *gid = entry_dup(e, "COREDUMP_GID"),
                            *owner = entry_dup(e, "COREDUMP_OWNER_UID");

        if (need_space)
                fputc('\n', f);
        fprintf(f, "%14s: %s", "PID", ansi_highlight());
        escape_fputs(f, pid ?: "n/a", ESCAPE_DEFAULT);
        fputs(ansi_normal(), f);
        if (comm) {
                fputs(" (", f);
                escape_fputs(f, comm, ESCAPE_DEFAULT);
                fputc(')', f);
        }
        fputc('\n', f);
        print_str_line(f, e, "TID", "COREDUMP_TID");
        print_id_line(f, "UID", uid, false);
        print_id_line(f, "GID", gid, true);
        print_signal(f, e);
        print_timestamp(f, e);
        print_str_line(f, e, "Command Line", "COREDUMP_CMDLINE");
        if (exe) {
                fprintf(f, "%14s: %s", "Executable", ansi_highlight());
                escape_fputs(f, exe, ESCAPE_DEFAULT);
                fprintf(f, "%s\n", ansi_normal());
        }
        print_str_line(f, e, "Control Group", "COREDUMP_CGROUP");
        print_str_line(f, e, "Unit", "COREDUMP_UNIT");
        print_str_line(f, e, "User Unit", "COREDUMP_USER_UNIT");
        print_str_line(f, e, "Slice", "COREDUMP_SLICE");
        print_str_line(f, e, "Session", "COREDUMP_SESSION");
        print_id_line(f, "Owner UID", owner, false);
        print_str_line(f, e, "Boot ID", "_BOOT_ID");
        print_str_line(f, e, "Machine ID", "_MACHINE_ID");
        print_str_line(f, e, "Hostname", "COREDUMP_HOSTNAME");
        print_storage(a, f, e);
        if (pkg && ver) {
                fprintf(f, "%14s: ", "Package");
                escape_fputs(f, pkg, ESCAPE_DEFAULT);
                fputc('/', f);
                escape_fputs(f, ver, ESCAPE_DEFAULT);
                fputc('\n', f);
        }
        show_build_id(f, e, exe);
        print_message(a, f, e);
}

int show_info(const CtlArgs *a, const EntryList *l) {
        pager_open(a);
        for (size_t i = 0; i < l->n; i++)
                show_info_entry(a, stdout, &l->items[i], i > 0);
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write: %m");
}

typedef struct BuildIdLookup {
        const char *exe_base;
        FILE *f;
        bool done;
} BuildIdLookup;

static const char *base_name(const char *p) {
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

static void build_id_member(const char *key, const char *build_id, void *userdata) {
        BuildIdLookup *l = userdata;

        /* as systemd: the module whose file name is the executable's */
        if (l->done || !build_id || strcmp(base_name(key), l->exe_base) != 0)
                return;
        print_line(l->f, "build-id", build_id);
        l->done = true;
}

void show_build_id(FILE *f, const Entry *e, const char *exe) {
        _cleanup_free_ char *json = entry_dup(e, "COREDUMP_PACKAGE_JSON");
        BuildIdLookup l = { .f = f };

        if (!exe || !json)
                return;
        l.exe_base = base_name(exe);
        if (json_object_scan(json, strlen(json), "buildId", build_id_member, &l) < 0)
                log_warning("Failed to parse COREDUMP_PACKAGE_JSON, ignoring.");
}
