/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl's command line: options, the verb and its matches, -A split as a shell would.
 * Pure parsing: touches no file (--help and --version print to stdout). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "build-config.h"
#include "ctl-time.h"
#include "ctl.h"
#include "log.h"
#include "parse-util.h"

/* The -A string is split like a shell would (quotes, backslash), into at most this much. */
#define DEBUGGER_ARGS_TEXT_MAX 4096U

enum {
        ARG_VERSION = 0x100,
        ARG_NO_PAGER,
        ARG_NO_LEGEND,
        ARG_JSON,
        ARG_DEBUGGER,
        ARG_FILE,
        ARG_ROOT,
        ARG_ALL,
        ARG_STORAGE,
        ARG_CONFIG,
        ARG_GROUP,
        ARG_MAX_USE,
        ARG_KEEP_FREE,
        ARG_OLDER_THAN,
        ARG_CONTROL,
};

static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, ARG_VERSION },
        { "no-pager", no_argument, NULL, ARG_NO_PAGER },
        { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
        { "quiet", no_argument, NULL, 'q' },
        { "json", required_argument, NULL, ARG_JSON },
        { "reverse", no_argument, NULL, 'r' },
        { "since", required_argument, NULL, 'S' },
        { "until", required_argument, NULL, 'U' },
        { "field", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "debugger", required_argument, NULL, ARG_DEBUGGER },
        { "debugger-arguments", required_argument, NULL, 'A' },
        { "file", required_argument, NULL, ARG_FILE },
        { "directory", required_argument, NULL, 'D' },
        { "root", required_argument, NULL, ARG_ROOT },
        { "all", no_argument, NULL, ARG_ALL },
        { "storage", required_argument, NULL, ARG_STORAGE },
        { "config", required_argument, NULL, ARG_CONFIG },
        { "group", no_argument, NULL, ARG_GROUP },
        { "max-use", required_argument, NULL, ARG_MAX_USE },
        { "keep-free", required_argument, NULL, ARG_KEEP_FREE },
        { "older-than", required_argument, NULL, ARG_OLDER_THAN },
        { "control", required_argument, NULL, ARG_CONTROL },
        {}
};

static void help(void) {
        printf("%s [OPTIONS...] COMMAND ...\n\n"
               "List or retrieve coredumps from the journal and from coredump-socket's records.\n\n"
               "Commands:\n"
               "  list [MATCHES...]    List available coredumps (default)\n"
               "  info [MATCHES...]    Show detailed information about one or more coredumps\n"
               "  dump [MATCHES...]    Print first matching coredump to stdout\n"
               "  debug [MATCHES...]   Start a debugger for the first matching coredump\n"
               "  gdb [MATCHES...]     Same as debug\n"
               "  delete MATCHES...    Delete the matching cores (your own; root: anyone's)\n"
               "  vacuum               Delete the oldest cores to honour the size limits (root)\n"
               "  disk-usage           Show the disk space taken by stored cores\n"
               "  help                 Show this help\n\n"
               "Options:\n"
               "  -h --help                    Show this help\n"
               "     --version                 Print version string\n"
               "     --no-pager                Do not pipe output into a pager\n"
               "     --no-legend               Do not print the column headers\n"
               "     --json=pretty|short|off   Generate JSON output\n"
               "     --debugger=DEBUGGER       Use the given debugger\n"
               "  -A --debugger-arguments=ARGS Pass the given arguments to the debugger\n"
               "  -n INT                       Show maximum number of rows\n"
               "  -1                           Show information about most recent entry only\n"
               "  -S --since=DATE              Only print coredumps since the date\n"
               "  -U --until=DATE              Only print coredumps until the date\n"
               "  -r --reverse                 Show the newest entries first\n"
               "  -F --field=FIELD             List all values a certain field takes\n"
               "  -o --output=FILE             Write output to FILE\n"
               "     --file=PATH               Use journal file\n"
               "  -D --directory=DIR           Use journal files from directory\n"
               "     --root=PATH               Operate on an alternate filesystem root\n"
               "     --all                     Look at all journal files instead of local ones\n"
               "  -q --quiet                   Do not show info messages and privilege warning\n"
               "     --storage=DIR             Read records and cores from DIR (default: Directory=)\n"
               "     --config=FILE             Read the configuration from FILE\n"
               "     --group                   list: group crashes by program and stack signature\n"
               "     --max-use=BYTES           vacuum: keep at most this much\n"
               "     --keep-free=BYTES         vacuum: keep this much free on the file system\n"
               "     --older-than=TIMESPAN     vacuum: delete cores older than this\n"
               "     --control=PATH            delete: coredumpd's control socket\n"
               "\nSee the coredumpctl(1) man page for details.\n",
               program_invocation_short_name);
}

/* Shell-like word splitting for -A: whitespace separates, quotes and backslash protect. */
static int split_args(CtlArgs *a, const char *s) {
        static char text[DEBUGGER_ARGS_TEXT_MAX];
        size_t o = 0;
        char quote = 0;
        bool in_word = false;

        a->n_debugger_args = 0;
        for (;; s++) {
                char c = *s;
                if (!quote && (c == 0 || c == ' ' || c == '\t' || c == '\n')) {
                        if (in_word) {
                                text[o++] = 0;
                                in_word = false;
                        }
                        if (c == 0)
                                break;
                        continue;
                }
                if (c == 0)
                        return log_error_errno(-EINVAL, "Unbalanced quotes in --debugger-arguments=");
                if (o + 2 >= sizeof text || (!in_word && a->n_debugger_args >= DEBUGGER_ARGS_MAX))
                        return log_error_errno(-E2BIG, "--debugger-arguments= is too long");
                if (!in_word) {
                        a->debugger_args[a->n_debugger_args++] = text + o;
                        in_word = true;
                }
                if (quote && c == quote)
                        quote = 0;
                else if (!quote && (c == '\'' || c == '"'))
                        quote = c;
                else if (c == '\\' && quote != '\'' && s[1])
                        text[o++] = *++s;
                else
                        text[o++] = c;
        }
        return 0;
}

static int parse_option(CtlArgs *a, int c, const char *arg) {
        uint64_t v;
        int r;

        switch (c) {
        case ARG_NO_PAGER: a->pager = false; return 0;
        case ARG_NO_LEGEND: a->legend = false; return 0;
        case 'q': a->quiet = true; return 0;
        case 'r': a->reverse = true; return 0;
        case ARG_ALL: a->all = true; return 0;
        case ARG_GROUP: a->group = true; return 0;
        case 'F': a->field = arg; return 0;
        case 'o': a->output = arg; return 0;
        case ARG_DEBUGGER: a->debugger = arg; return 0;
        case 'A': return split_args(a, arg);
        case 'D': a->directory = arg; return 0;
        case ARG_ROOT: a->root = arg; return 0;
        case ARG_STORAGE: a->storage = arg; return 0;
        case ARG_CONFIG: a->config = arg; return 0;
        case ARG_CONTROL: a->control = arg; return 0;
        case '1': a->rows_max = 1; a->reverse = true; return 0;
        case ARG_FILE:
                if (a->n_files >= MATCHES_MAX)
                        return log_error_errno(-E2BIG, "Too many --file= options.");
                a->files[a->n_files++] = arg;
                return 0;
        case ARG_JSON:
                if (strcmp(arg, "pretty") == 0)
                        a->json = JSON_PRETTY;
                else if (strcmp(arg, "short") == 0)
                        a->json = JSON_SHORT;
                else if (strcmp(arg, "off") == 0)
                        a->json = JSON_OFF;
                else
                        return log_error_errno(-EINVAL, "Unknown argument to --json=: %s (pretty, short, off)", arg);
                return 0;
        case 'n':
                if (parse_uint64(arg, &v) < 0 || v == 0 || v > SIZE_MAX / 2)
                        return log_error_errno(-EINVAL, "Invalid numeric parameter to -n: %s", arg);
                a->rows_max = (size_t) v;
                return 0;
        case 'S':
        case 'U':
                r = parse_timestamp(arg, c == 'S' ? &a->since : &a->until);
                if (r < 0)
                        return log_error_errno(r, "Failed to parse timestamp: %s", arg);
                return 0;
        case ARG_MAX_USE:
        case ARG_KEEP_FREE:
                if (parse_size(arg, c == ARG_MAX_USE ? &a->max_use : &a->keep_free) < 0)
                        return log_error_errno(-EINVAL, "Invalid size: %s", arg);
                return 0;
        case ARG_OLDER_THAN:
                if (parse_sec(arg, &a->older_than_usec) < 0)
                        return log_error_errno(-EINVAL, "Invalid time span: %s", arg);
                return 0;
        default:
                return -EINVAL; /* getopt has said what was wrong */
        }
}

int ctl_parse_args(CtlArgs *a, int argc, char **argv) {
        int c, r;

        *a = (CtlArgs) {
                .pager = true, .legend = true, .rows_max = SIZE_MAX,
                .since = USEC_INFINITY, .until = USEC_INFINITY,
                .max_use = UINT64_MAX, .keep_free = UINT64_MAX, .older_than_usec = UINT64_MAX,
        };
        while ((c = getopt_long(argc, argv, "hA:o:F:1D:rS:U:qn:", options, NULL)) >= 0) {
                if (c == 'h') {
                        help();
                        return 0;
                }
                if (c == ARG_VERSION) {
                        printf("coredumpctl (coredump-socket) %s\n", PACKAGE_VERSION);
                        return 0;
                }
                r = parse_option(a, c, optarg);
                if (r < 0)
                        return r;
        }
        if (a->since != USEC_INFINITY && a->until != USEC_INFINITY && a->since > a->until)
                return log_error_errno(-EINVAL, "--since= must be before --until=.");
        if (!!a->directory + !!a->root + (a->n_files > 0) > 1)
                return log_error_errno(-EINVAL, "Please specify either --root=, --file= or -D/--directory=, not several.");
        a->verb = optind < argc ? argv[optind] : "list";
        a->matches = optind < argc ? argv + optind + 1 : argv + argc;
        a->n_matches = optind < argc ? (size_t) (argc - optind - 1) : 0;
        if (strcmp(a->verb, "help") == 0) {
                help();
                return 0;
        }
        return 1;
}
