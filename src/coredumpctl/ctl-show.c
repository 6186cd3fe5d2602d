/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The verbs that show entries: list (table or JSON), info, and -F FIELD. */
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "ctl-corefile.h"
#include "ctl-format.h"
#include "json.h"
#include "ctl-pager.h"
#include "ctl-show.h"
#include "ctl-table.h"
#include "log.h"
#include "parse-util.h"
#include "time-util.h"

#define INFO_INDENT "                " /* continuation lines of Message: */

static bool is_coredump(const Entry *e) {
        return entry_has_value(e, "MESSAGE_ID", SD_MESSAGE_COREDUMP_STR);
}

static int list_row(const CtlArgs *a, Table *t, const Entry *e) {
        _cleanup_free_ char *pid = entry_dup(e, "COREDUMP_PID"), *uid = entry_dup(e, "COREDUMP_UID"),
                            *gid = entry_dup(e, "COREDUMP_GID"), *sig = entry_dup(e, "COREDUMP_SIGNAL"),
                            *comm = entry_dup(e, "COREDUMP_COMM"), *exe = entry_dup(e, "COREDUMP_EXE");
        char ts[FORMAT_TIMESTAMP_MAX], signame[SIGNAL_NAME_MAX], size[FORMAT_BYTES_MAX];
        int signo = 0, r = 0;
        CoreFile cf;

        if (!pid || !uid || !gid || !sig || !comm) {
                log_warning("Found a coredump entry without mandatory fields (PID=%s, UID=%s, GID=%s, SIGNAL=%s, COMM=%s), ignoring.",
                            pid ?: "n/a", uid ?: "n/a", gid ?: "n/a", sig ?: "n/a", comm ?: "n/a");
                return 0;
        }
        if (!is_coredump(e) || parse_int_range(sig, 1, SIGRTMAX, &signo) < 0)
                signo = 0;
        corefile_analyze(a, e, &cf);
        if (a->json != JSON_OFF)
                r = table_add(t, CELL_NUMBER, NULL, "%" PRIu64, e->realtime);
        else
                r = table_add(t, CELL_STRING, NULL, "%s", format_timestamp(ts, sizeof ts, e->realtime));
        r = r ?: table_add(t, CELL_NUMBER, NULL, "%s", pid);
        r = r ?: table_add(t, CELL_NUMBER, NULL, "%s", uid);
        r = r ?: table_add(t, CELL_NUMBER, NULL, "%s", gid);
        if (signo == 0)
                r = r ?: table_add(t, CELL_EMPTY, NULL, NULL);
        else if (a->json != JSON_OFF)
                r = r ?: table_add(t, CELL_NUMBER, NULL, "%d", signo);
        else
                r = r ?: table_add(t, CELL_STRING, NULL, "SIG%s", signal_abbrev(signame, sizeof signame, signo));
        r = r ?: (cf.state ? table_add(t, CELL_STRING, cf.color, "%s", cf.state) : table_add(t, CELL_EMPTY, NULL, NULL));
        r = r ?: table_add(t, CELL_STRING, NULL, "%s", exe ?: comm);
        if (cf.size == UINT64_MAX)
                r = r ?: table_add(t, CELL_EMPTY, NULL, NULL);
        else if (a->json != JSON_OFF)
                r = r ?: table_add(t, CELL_NUMBER, NULL, "%" PRIu64, cf.size);
        else
                r = r ?: table_add(t, CELL_STRING, NULL, "%s", format_bytes(size, sizeof size, cf.size));
        return r;
}

int show_list(const CtlArgs *a, const EntryList *l) {
        Table t = { .n_columns = 8, .names = { "time", "pid", "uid", "gid", "sig", "corefile", "exe", "size" },
                    .right = { false, true, true, true, false, false, false, true } };
        int r = 0;

        for (size_t i = 0; i < l->n && r >= 0; i++)
                r = list_row(a, &t, &l->items[i]);
        if (r >= 0) {
                pager_open(a);
                r = table_print(&t, stdout, a->legend, a->json);
        }
        table_free(&t);
        return r < 0 ? log_error_errno(r, "Failed to print the table: %m") : 0;
}

int show_field(const CtlArgs *a, const EntryList *l) {
        size_t nl = strlen(a->field);

        pager_open(a);
        for (size_t i = 0; i < l->n; i++) {
                const Entry *e = &l->items[i];
                size_t pos = 0;
                RecordField f;

                /* a field may appear more than once in an entry: print every occurrence */
                while (record_next(e->fields.buf, e->fields.len, &pos, &f) > 0)
                        if (f.name_len == nl && memcmp(f.name, a->field, nl) == 0) {
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
        if (parse_uint64(value, &id) >= 0 && id < UINT32_MAX)
                fprintf(f, "%14s: %s (%s)\n", label, value,
                        group ? gid_name(name, sizeof name, (gid_t) id) : uid_name(name, sizeof name, (uid_t) id));
        else
                fprintf(f, "%14s: %s\n", label, value);
}

static void print_str_line(FILE *f, const Entry *e, const char *label, const char *field) {
        _cleanup_free_ char *v = entry_dup(e, field);

        if (v)
                fprintf(f, "%14s: %s\n", label, v);
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
                fprintf(f, "%14s: %s\n", is_coredump(e) ? "Signal" : "Reason", sig);
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
                fprintf(f, "%14s: %s\n", "Timestamp", ts);
}

static void print_storage(const CtlArgs *a, FILE *f, const Entry *e) {
        char size[FORMAT_BYTES_MAX];
        CoreFile cf;

        corefile_analyze(a, e, &cf);
        if (cf.path[0]) {
                fprintf(f, "%14s: %s%s (%s)%s\n", "Storage", cf.color ?: "", cf.path, cf.state,
                        cf.color && *cf.color ? ansi_normal() : "");
                if (cf.size != UINT64_MAX)
                        fprintf(f, "%14s: %s\n", "Size on Disk", format_bytes(size, sizeof size, cf.size));
        } else
                fprintf(f, "%14s: %s\n", "Storage", e->core_in_journal ? "journal" : "none");
}

static void print_message(FILE *f, const Entry *e) {
        _cleanup_free_ char *m = entry_dup(e, "MESSAGE");
        size_t end;

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
}

void show_info_entry(const CtlArgs *a, FILE *f, const Entry *e, bool need_space) {
        _cleanup_free_ char *pid = entry_dup(e, "COREDUMP_PID"), *comm = entry_dup(e, "COREDUMP_COMM"),
                            *exe = entry_dup(e, "COREDUMP_EXE"), *pkg = entry_dup(e, "COREDUMP_PACKAGE_NAME"),
                            *ver = entry_dup(e, "COREDUMP_PACKAGE_VERSION"),
                            *uid = entry_dup(e, "COREDUMP_UID"), *gid = entry_dup(e, "COREDUMP_GID"),
                            *owner = entry_dup(e, "COREDUMP_OWNER_UID");

        if (need_space)
                fputc('\n', f);
        fprintf(f, "%14s: %s%s%s", "PID", ansi_highlight(), pid ?: "n/a", ansi_normal());
        fprintf(f, comm ? " (%s)\n" : "%s\n", comm ?: "");
        print_str_line(f, e, "TID", "COREDUMP_TID");
        print_id_line(f, "UID", uid, false);
        print_id_line(f, "GID", gid, true);
        print_signal(f, e);
        print_timestamp(f, e);
        print_str_line(f, e, "Command Line", "COREDUMP_CMDLINE");
        if (exe)
                fprintf(f, "%14s: %s%s%s\n", "Executable", ansi_highlight(), exe, ansi_normal());
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
        if (pkg && ver)
                fprintf(f, "%14s: %s/%s\n", "Package", pkg, ver);
        show_build_id(f, e, exe);
        print_message(f, e);
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
        fprintf(l->f, "%14s: %s\n", "build-id", build_id);
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
