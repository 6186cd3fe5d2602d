/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Matches resolved systemd's way (FIELD=value; a path: COREDUMP_EXE; a PID; else COREDUMP_COMM)
 * and entries tested against them. Pure but for getcwd() to make a path absolute. */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "ctl-match.h"
#include "log.h"
#include "parse-util.h"

void match_set_free(MatchSet *s) {
        for (size_t i = 0; i < s->n; i++) {
                free(s->items[i].field);
                free(s->items[i].value);
        }
        s->n = 0;
}

static bool is_pid(const char *s) {
        uint64_t v;
        return parse_uint64(s, &v) >= 0 && v > 0 && v <= INT_MAX;
}

static int absolute_path(const char *p, char **ret) {
        char cwd[PATH_MAX];

        if (p[0] == '/')
                return (*ret = strdup(p)) ? 0 : -ENOMEM;
        if (!getcwd(cwd, sizeof cwd))
                return negative_errno();
        if (asprintf(ret, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", p) < 0)
                return -ENOMEM;
        return 0;
}

static int match_parse(Match *m, const char *arg) {
        const char *eq = strchr(arg, '=');
        int r;

        if (eq) {
                if (!record_field_name_valid(arg, (size_t) (eq - arg)))
                        return log_error_errno(-EINVAL, "Failed to add match \"%s\": invalid field name", arg);
                m->field = strndup(arg, (size_t) (eq - arg));
                m->value = strdup(eq + 1);
        } else if (strchr(arg, '/')) {
                r = absolute_path(arg, &m->value);
                if (r < 0)
                        return log_error_errno(r, "Failed to make \"%s\" absolute: %m", arg);
                m->field = strdup("COREDUMP_EXE");
        } else {
                m->field = strdup(is_pid(arg) ? "COREDUMP_PID" : "COREDUMP_COMM");
                m->value = strdup(arg);
        }
        if (!m->field || !m->value)
                return log_error_errno(-ENOMEM, "Out of memory");
        log_debug("Adding match: %s=%s", m->field, m->value);
        return 0;
}

int match_set_parse(MatchSet *s, char **args, size_t n_args) {
        if (n_args > MATCHES_MAX)
                return log_error_errno(-E2BIG, "Too many matches (at most %u).", MATCHES_MAX);
        for (size_t i = 0; i < n_args; i++) {
                int r = match_parse(&s->items[s->n++], args[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool match_set_test(const MatchSet *s, const Entry *e) {
        for (size_t i = 0; i < s->n; i++) {
                bool seen = false, hit = false;

                /* Handle each field once, at its first occurrence. */
                for (size_t k = 0; k < i && !seen; k++)
                        seen = strcmp(s->items[k].field, s->items[i].field) == 0;
                if (seen)
                        continue;
                for (size_t k = i; k < s->n && !hit; k++)
                        hit = strcmp(s->items[k].field, s->items[i].field) == 0 &&
                              entry_has_value(e, s->items[k].field, s->items[k].value);
                if (!hit)
                        return false;
        }
        return true;
}
