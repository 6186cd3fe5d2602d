/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl list --group: entries grouped by COREDUMP_SIGNATURE (older entries: executable, signal
 * and top symbols), with counts, machines, first and last seen, as a table (entry text escaped).
 * Writes only to stdout (the pager). */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "crash-signature.h"
#include "ctl-escape.h"
#include "ctl-format.h"
#include "ctl-group.h"
#include "ctl-pager.h"
#include "ctl-table.h"
#include "log.h"
#include "parse-util.h"

typedef struct Group {
        char key[CRASH_SIGNATURE_SIZE]; /* COREDUMP_SIGNATURE, or "" for the entries without */
        char *exe;
        int signo;
        char signature[SIGNATURE_MAX];
        size_t count;
        uint64_t first, last;
        char **machines; /* distinct machine ids (or host names), at most GROUP_MACHINES_MAX */
        size_t n_machines;
} Group;

/* "#0  0x00007f... symbol (module + 0x12)": the symbol, unless it is "n/a". */
static bool frame_symbol(const char *line, size_t len, const char **ret, size_t *ret_len) {
        const char *p = line, *end = line + len, *sym;

        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        if (p >= end || *p != '#')
                return false;
        while (p < end && *p != ' ') /* "#n" */
                p++;
        while (p < end && *p == ' ')
                p++;
        while (p < end && *p != ' ') /* "0x..." */
                p++;
        while (p < end && *p == ' ')
                p++;
        sym = p;
        while (p < end && *p != ' ')
                p++;
        if (p == sym || (p - sym == 3 && memcmp(sym, "n/a", 3) == 0))
                return false;
        *ret = sym;
        *ret_len = (size_t) (p - sym);
        return true;
}

void stack_signature(const char *message, char *buf, size_t size) {
        const char *p = message ? strstr(message, "Stack trace of thread ") : NULL;
        size_t o = 0;
        unsigned n = 0;

        buf[0] = 0;
        if (!p || size == 0)
                return;
        p = strchr(p, '\n');
        while (p && *++p && n < SIGNATURE_FRAMES) {
                const char *eol = strchrnul(p, '\n'), *sym;
                size_t sl;

                if (eol == p) /* blank line: end of this thread's frames */
                        break;
                if (frame_symbol(p, (size_t) (eol - p), &sym, &sl)) {
                        int w = snprintf(buf + o, size - o, "%s%.*s", n > 0 ? " < " : "", (int) sl, sym);
                        if (w < 0 || (size_t) w >= size - o)
                                break;
                        o += (size_t) w;
                        n++;
                }
                p = *eol ? eol : NULL;
        }
}

/* An entry's stable signature: COREDUMP_SIGNATURE, computed from the trace where the entry has
 * none (systemd-coredump's, our older ones) exactly as the worker does; "" without a trace. */
static void entry_signature(const Entry *e, int signo, const char *msg, char key[CRASH_SIGNATURE_SIZE]) {
        _cleanup_free_ char *field = entry_dup(e, "COREDUMP_SIGNATURE"), *json = NULL, *exe = NULL;

        key[0] = 0;
        if (field && strlen(field) == CRASH_SIGNATURE_HEX && strspn(field, "0123456789abcdef") == CRASH_SIGNATURE_HEX) {
                memcpy(key, field, CRASH_SIGNATURE_SIZE);
                return;
        }
        json = entry_dup(e, "COREDUMP_PACKAGE_JSON");
        exe = entry_dup(e, "COREDUMP_EXE"); /* as the worker has it: none, not the comm */
        if (crash_signature(msg, json, exe, signo, key) < 0)
                key[0] = 0;
}

/* With a signature, that alone; else (older entries, no trace) program, signal and symbols. */
static Group *find_group(Group *g, size_t n, const char *key, const char *exe, int signo, const char *sig) {
        for (size_t i = 0; i < n; i++) {
                if (strcmp(g[i].key, key) != 0)
                        continue;
                if (key[0] || (g[i].signo == signo && strcmp(g[i].exe, exe) == 0 && strcmp(g[i].signature, sig) == 0))
                        return &g[i];
        }
        return NULL;
}

/* The machine an entry came from: journald's _MACHINE_ID, else the host name it recorded. */
static int add_machine(Group *g, const Entry *e) {
        _cleanup_free_ char *id = entry_machine(e) ?: strdup("");
        char **nm;

        if (!id)
                return -ENOMEM;
        for (size_t i = 0; i < g->n_machines; i++)
                if (strcmp(g->machines[i], id) == 0)
                        return 0;
        if (g->n_machines >= GROUP_MACHINES_MAX)
                return 0; /* shown as "GROUP_MACHINES_MAX+" */
        nm = reallocarray(g->machines, g->n_machines + 1, sizeof *nm);
        if (!nm)
                return -ENOMEM;
        g->machines = nm;
        g->machines[g->n_machines++] = TAKE_PTR(id);
        return 0;
}

static int add_to_groups(Group **groups, size_t *n, const Entry *e) {
        _cleanup_free_ char *exe = entry_dup(e, "COREDUMP_EXE") ?: entry_dup(e, "COREDUMP_COMM");
        _cleanup_free_ char *sig = entry_dup(e, "COREDUMP_SIGNAL"), *msg = entry_dup(e, "MESSAGE");
        char signature[SIGNATURE_MAX], key[CRASH_SIGNATURE_SIZE];
        int signo = 0;
        Group *g;

        if (!exe)
                return 0;
        if (!sig || parse_int_range(sig, 1, SIGRTMAX, &signo) < 0)
                signo = 0;
        stack_signature(msg, signature, sizeof signature);
        entry_signature(e, signo, msg, key);
        g = find_group(*groups, *n, key, exe, signo, signature);
        if (!g) {
                Group *ng = reallocarray(*groups, *n + 1, sizeof *ng);
                if (!ng)
                        return -ENOMEM;
                *groups = ng;
                g = &ng[(*n)++];
                *g = (Group) { .exe = TAKE_PTR(exe), .signo = signo, .first = e->realtime };
                memcpy(g->key, key, sizeof g->key);
                snprintf(g->signature, sizeof g->signature, "%s", signature);
        }
        g->count++;
        g->first = MIN(g->first, e->realtime);
        g->last = MAX(g->last, e->realtime);
        return add_machine(g, e);
}

static int group_row(const CtlArgs *a, Table *t, const Group *g) {
        char first[FORMAT_TIMESTAMP_MAX], last[FORMAT_TIMESTAMP_MAX], name[SIGNAL_NAME_MAX];
        bool json = a->json != JSON_OFF;
        /* JSON escapes what it prints itself; the table is text for a terminal */
        _cleanup_free_ char *exe = json ? strdup(g->exe) : escape_text(g->exe, ESCAPE_DEFAULT),
                            *sig = json ? strdup(g->signature) : escape_text(g->signature, ESCAPE_DEFAULT);
        int r;

        if (!exe || !sig)
                return -ENOMEM;
        r = table_add(t, CELL_NUMBER, NULL, "%zu", g->count);
        r = r ?: (g->n_machines >= GROUP_MACHINES_MAX && !json
                          ? table_add(t, CELL_STRING, NULL, "%zu+", g->n_machines)
                          : table_add(t, CELL_NUMBER, NULL, "%zu", g->n_machines));
        r = r ?: (json ? table_add(t, CELL_NUMBER, NULL, "%" PRIu64, g->first)
                       : table_add(t, CELL_STRING, NULL, "%s", format_timestamp(first, sizeof first, g->first)));
        r = r ?: (json ? table_add(t, CELL_NUMBER, NULL, "%" PRIu64, g->last)
                       : table_add(t, CELL_STRING, NULL, "%s", format_timestamp(last, sizeof last, g->last)));
        if (g->signo == 0)
                r = r ?: table_add(t, CELL_EMPTY, NULL, NULL);
        else
                r = r ?: (json ? table_add(t, CELL_NUMBER, NULL, "%d", g->signo)
                               : table_add(t, CELL_STRING, NULL, "SIG%s", signal_abbrev(name, sizeof name, g->signo)));
        r = r ?: table_add(t, CELL_STRING, NULL, "%s", exe);
        r = r ?: (g->key[0] ? table_add(t, CELL_STRING, NULL, "%s", g->key) : table_add(t, CELL_EMPTY, NULL, NULL));
        r = r ?: (sig[0] ? table_add(t, CELL_STRING, NULL, "%s", sig) : table_add(t, CELL_EMPTY, NULL, NULL));
        return r;
}

int show_groups(const CtlArgs *a, const EntryList *l) {
        Table t = { .n_columns = 8, .names = { "count", "machines", "first", "last", "sig", "exe", "signature", "frames" },
                    .right = { true, true, false, false, false, false, false, false } };
        Group *groups = NULL;
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; i < l->n && r >= 0; i++)
                r = add_to_groups(&groups, &n, &l->items[i]);
        for (size_t i = 0; i < n && r >= 0; i++)
                r = group_row(a, &t, &groups[i]);
        if (r >= 0) {
                pager_open(a);
                r = table_print(&t, stdout, a->legend, a->json);
        }
        for (size_t i = 0; i < n; i++) {
                free(groups[i].exe);
                for (size_t j = 0; j < groups[i].n_machines; j++)
                        free(groups[i].machines[j]);
                free(groups[i].machines);
        }
        free(groups);
        table_free(&t);
        return r < 0 ? log_error_errno(r, "Failed to group the coredumps: %m") : 0;
}
