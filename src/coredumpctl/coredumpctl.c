/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl's main(): parses the arguments, picks the verb and runs it on the matching entries.
 * Runs with the invoking user's privileges; all file access is in the ctl-*.c verbs it calls. */
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl-delete.h"
#include "ctl-dump.h"
#include "ctl-format.h"
#include "ctl-group.h"
#include "ctl-match.h"
#include "ctl-pager.h"
#include "ctl-show.h"
#include "ctl-source.h"
#include "ctl-vacuum.h"
#include "ctl.h"
#include "log.h"

typedef enum VerbKind {
        VERB_LIST,
        VERB_INFO,
        VERB_DUMP,
        VERB_DEBUG,
        VERB_DELETE,
        VERB_VACUUM,
        VERB_DISK_USAGE,
} VerbKind;

static const struct {
        const char *name;
        VerbKind kind;
} verbs[] = {
        { "list", VERB_LIST },     { "info", VERB_INFO },     { "dump", VERB_DUMP },
        { "debug", VERB_DEBUG },   { "gdb", VERB_DEBUG },     { "delete", VERB_DELETE },
        { "vacuum", VERB_VACUUM }, { "disk-usage", VERB_DISK_USAGE },
};

static int find_verb(const char *name, VerbKind *ret) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0) {
                        *ret = verbs[i].kind;
                        return 0;
                }
        return log_error_errno(-EINVAL, "Unknown command verb '%s'.", name);
}

/* The verbs over matching entries. */
static int run_on_entries(const CtlArgs *a, VerbKind kind) {
        _cleanup_(entry_list_free) EntryList l = {};
        _cleanup_(match_set_free) MatchSet m = {};
        CtlArgs sel = *a;
        CollectMode mode = kind == VERB_LIST && !a->group ? COLLECT_LIST : COLLECT_FULL;
        int r;

        r = match_set_parse(&m, a->matches, a->n_matches);
        if (r < 0)
                return r;
        /* info without a match, dump and debug: the most recent entry; they look at all to say
         * when more than one matched */
        if (kind == VERB_INFO && a->n_matches == 0) {
                sel.rows_max = 1;
                sel.reverse = true;
        }
        if (kind == VERB_DUMP || kind == VERB_DEBUG) {
                sel.reverse = false;
                sel.rows_max = SIZE_MAX;
        }
        r = collect_entries(&sel, &m, mode, &l);
        if (r < 0)
                return r;
        if (kind == VERB_LIST && a->field)
                return show_field(a, &l);
        if (l.n == 0) {
                if (!a->quiet)
                        log_notice("No coredumps found.");
                return -ESRCH;
        }
        switch (kind) {
        case VERB_LIST:
                return a->group ? show_groups(a, &l) : show_list(a, &l);
        case VERB_INFO:
                return a->field ? show_field(a, &l) : show_info(a, &l);
        case VERB_DUMP:
                return verb_dump(a, &l);
        case VERB_DEBUG:
                return verb_debug(a, &l);
        case VERB_DELETE:
                return verb_delete(a, &l);
        default:
                return -EINVAL;
        }
}

static int run(int argc, char **argv) {
        VerbKind kind = VERB_LIST;
        CtlArgs a;
        int r;

        r = ctl_parse_args(&a, argc, argv);
        if (r <= 0)
                return r;
        r = find_verb(a.verb, &kind);
        if (r < 0)
                return r;
        colors_init(STDOUT_FILENO);
        if (kind == VERB_VACUUM)
                return verb_vacuum(&a);
        if (kind == VERB_DISK_USAGE)
                return verb_disk_usage(&a);
        if (kind == VERB_DELETE && a.n_matches == 0)
                return log_error_errno(-EINVAL, "delete needs a match (e.g. a PID, COREDUMP_UID=%u), it never deletes everything.",
                                       (unsigned) getuid());
        return run_on_entries(&a, kind);
}

int main(int argc, char **argv) {
        int r;

        setlocale(LC_ALL, "");
        log_setup_plain();
        r = run(argc, argv);
        pager_close();
        /* a debugger's own exit status passes through */
        return r < 0 ? EXIT_FAILURE : r;
}
