/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl list --group: entries grouped by executable, signal and stack signature, with counts
 * and first and last seen, as a table (entry text escaped). Writes only to stdout (the pager). */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "ctl-escape.h"
#include "ctl-format.h"
#include "ctl-group.h"
#include "ctl-pager.h"
#include "ctl-table.h"
#include "log.h"
#include "parse-util.h"

typedef struct Group {
        char *exe;
        int signo;
        char signature[SIGNATURE_MAX];
        size_t count;
        uint64_t first, last;
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

static Group *find_group(Group *g, size_t n, const char *exe, int signo, const char *sig) {
        for (size_t i = 0; i < n; i++)
                if (g[i].signo == signo && strcmp(g[i].exe, exe) == 0 && strcmp(g[i].signature, sig) == 0)
                        return &g[i];
        return NULL;
}

static int add_to_groups(Group **groups, size_t *n, const Entry *e) {
        _cleanup_free_ char *exe = entry_dup(e, "COREDUMP_EXE") ?: entry_dup(e, "COREDUMP_COMM");
        _cleanup_free_ char *sig = entry_dup(e, "COREDUMP_SIGNAL"), *msg = entry_dup(e, "MESSAGE");
        char signature[SIGNATURE_MAX];
        int signo = 0;
        Group *g;

        if (!exe)
                return 0;
        if (!sig || parse_int_range(sig, 1, SIGRTMAX, &signo) < 0)
                signo = 0;
        stack_signature(msg, signature, sizeof signature);
        g = find_group(*groups, *n, exe, signo, signature);
        if (!g) {
                Group *ng = reallocarray(*groups, *n + 1, sizeof *ng);
                if (!ng)
                        return -ENOMEM;
                *groups = ng;
                g = &ng[(*n)++];
                *g = (Group) { .exe = TAKE_PTR(exe), .signo = signo, .first = e->realtime };
                snprintf(g->signature, sizeof g->signature, "%s", signature);
        }
        g->count++;
        g->first = MIN(g->first, e->realtime);
        g->last = MAX(g->last, e->realtime);
        return 0;
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
        r = r ?: (sig[0] ? table_add(t, CELL_STRING, NULL, "%s", sig) : table_add(t, CELL_EMPTY, NULL, NULL));
        return r;
}

int show_groups(const CtlArgs *a, const EntryList *l) {
        Table t = { .n_columns = 6, .names = { "count", "first", "last", "sig", "exe", "signature" },
                    .right = { true, false, false, false, false, false } };
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
        for (size_t i = 0; i < n; i++)
                free(groups[i].exe);
        free(groups);
        table_free(&t);
        return r < 0 ? log_error_errno(r, "Failed to group the coredumps: %m") : 0;
}
