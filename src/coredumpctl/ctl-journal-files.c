/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which journal files coredumpctl reads, and whether the local journald wrote them (then their
 * _UID and _MACHINE_ID are journald's) or someone else did (another machine, a container, a
 * copy). Lists journal directories and opens journal files, with the invoking user's rights. */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl-corefile.h"
#include "ctl-escape.h"
#include "ctl-journal-files.h"
#include "log.h"

/* Where journald keeps its files, each with a directory per machine id. */
static const char *const journal_roots[] = { "/var/log/journal", "/run/log/journal" };

void journal_closep(sd_journal **j) {
        if (*j)
                sd_journal_close(*j);
}

/* Whether st is the local journald's own directory for this machine (under --root, that tree's). */
static bool is_local_dir(const CtlArgs *a, const struct stat *st) {
        char mid[MACHINE_ID_HEX + 1], rel[PATH_MAX], path[PATH_MAX];
        struct stat local;

        ctl_local_machine_id(a, mid);
        if (!mid[0])
                return false;
        for (size_t i = 0; i < ELEMENTSOF(journal_roots); i++) {
                snprintf(rel, sizeof rel, "%s/%s", journal_roots[i], mid);
                if (ctl_root_path(a, rel, path, sizeof path) >= 0 && stat(path, &local) >= 0 &&
                    S_ISDIR(local.st_mode) && local.st_dev == st->st_dev && local.st_ino == st->st_ino)
                        return true;
        }
        return false;
}

static bool path_is_local_dir(const CtlArgs *a, const char *dir) {
        struct stat st;

        return stat(dir, &st) >= 0 && S_ISDIR(st.st_mode) && is_local_dir(a, &st);
}

/* Whether every --file is in the local journald's own directory. */
static bool files_local(const CtlArgs *a) {
        for (size_t i = 0; i < a->n_files; i++) {
                char copy[PATH_MAX];

                if (snprintf(copy, sizeof copy, "%s", a->files[i]) >= (int) sizeof copy ||
                    !path_is_local_dir(a, dirname(copy)))
                        return false;
        }
        return true;
}

typedef struct FileList {
        char *paths[FOREIGN_JOURNAL_FILES_MAX + 1]; /* NULL-terminated */
        size_t n;
        bool cut;
} FileList;

static void file_list_free(FileList **p) {
        if (!*p)
                return;
        for (size_t i = 0; i < (*p)->n; i++)
                free((*p)->paths[i]);
        free(*p);
}

static bool journal_file_name(const char *name) {
        size_t l = strlen(name);

        return (l > strlen(".journal") && strcmp(name + l - strlen(".journal"), ".journal") == 0) ||
               (l > strlen(".journal~") && strcmp(name + l - strlen(".journal~"), ".journal~") == 0);
}

static void add_file(FileList *l, const char *dir, const char *name) {
        if (l->n >= FOREIGN_JOURNAL_FILES_MAX) {
                l->cut = true;
                return;
        }
        if (asprintf(&l->paths[l->n], "%s/%s", dir, name) >= 0)
                l->n++;
}

/* The journal files directly in dir (no deeper). */
static void add_dir_files(FileList *l, const char *dir) {
        DIR *d = opendir(dir);

        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));)
                if (journal_file_name(de->d_name))
                        add_file(l, dir, de->d_name);
        closedir(d);
}

/* The journal files in a journal root (under --root) that are not the local journald's own: in
 * its directory (top level) and in every subdirectory but the local machine's and its
 * namespaces' ("MACHINE_ID.NAMESPACE", which sd_journal_open() leaves out too). */
static void add_foreign_files(const CtlArgs *a, FileList *l, const char *root_rel) {
        char root[PATH_MAX], mid[MACHINE_ID_HEX + 1];
        DIR *d;

        if (ctl_root_path(a, root_rel, root, sizeof root) < 0 || !(d = opendir(root)))
                return;
        ctl_local_machine_id(a, mid);
        for (struct dirent *de; (de = readdir(d));) {
                char sub[PATH_MAX];
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                if (journal_file_name(de->d_name)) {
                        add_file(l, root, de->d_name);
                        continue;
                }
                if (mid[0] && strncmp(de->d_name, mid, MACHINE_ID_HEX) == 0 &&
                    (de->d_name[MACHINE_ID_HEX] == 0 || de->d_name[MACHINE_ID_HEX] == '.'))
                        continue;
                if (snprintf(sub, sizeof sub, "%s/%s", root, de->d_name) < (int) sizeof sub &&
                    stat(sub, &st) >= 0 && S_ISDIR(st.st_mode) && !is_local_dir(a, &st))
                        add_dir_files(l, sub);
        }
        closedir(d);
}

/* The local journald's own files under --root: its machine's directories in both roots. */
static void add_local_root_files(const CtlArgs *a, FileList *l) {
        char mid[MACHINE_ID_HEX + 1];

        ctl_local_machine_id(a, mid);
        if (!mid[0])
                return;
        for (size_t i = 0; i < ELEMENTSOF(journal_roots); i++) {
                char rel[PATH_MAX], dir[PATH_MAX];

                snprintf(rel, sizeof rel, "%s/%s", journal_roots[i], mid);
                if (ctl_root_path(a, rel, dir, sizeof dir) >= 0)
                        add_dir_files(l, dir);
        }
}

static int open_list(const FileList *l, sd_journal **ret) {
        int r;

        if (l->n == 0)
                return 0;
        if (l->cut)
                log_warning("More than %u journal files of other machines: only the first are read.",
                            FOREIGN_JOURNAL_FILES_MAX);
        r = sd_journal_open_files(ret, (const char **) l->paths, 0);
        if (r < 0)
                return log_debug_errno(r, "Failed to open the journal files of other machines: %m"), 0;
        return 1;
}

static int open_explicit(const CtlArgs *a, sd_journal **ret, bool *ret_foreign) {
        int r;

        if (a->directory) {
                r = sd_journal_open_directory(ret, a->directory, 0);
                if (r < 0)
                        return log_error_errno(r, "Failed to open journals in directory: %s: %m", a->directory);
                *ret_foreign = !path_is_local_dir(a, a->directory);
        } else {
                r = sd_journal_open_files(ret, (const char **) a->files, 0);
                if (r < 0)
                        return log_error_errno(r, "Failed to open journal files: %m");
                *ret_foreign = !files_local(a);
        }
        return 1;
}

int journal_open_nth(const CtlArgs *a, unsigned index, sd_journal **ret, bool *ret_foreign) {
        _cleanup_(file_list_free) FileList *l = NULL;
        int r;

        *ret = NULL;
        *ret_foreign = index > 0;
        if (a->directory || a->n_files > 0)
                return index == 0 ? open_explicit(a, ret, ret_foreign) : 0;
        if (index == 0 && !a->root) {
                r = sd_journal_open(ret, SD_JOURNAL_LOCAL_ONLY);
                if (r < 0)
                        return log_debug_errno(r, "Failed to open the journal: %m"), 0;
                return 1;
        }
        if (index > 1 || (index == 1 && !a->all && !a->root))
                return 0;
        l = calloc(1, sizeof *l);
        if (!l)
                return log_error_errno(-ENOMEM, "Out of memory");
        if (index == 0)
                add_local_root_files(a, l);
        else
                for (size_t i = 0; i < ELEMENTSOF(journal_roots); i++)
                        add_foreign_files(a, l, journal_roots[i]);
        return open_list(l, ret);
}
