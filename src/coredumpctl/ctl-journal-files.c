/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which journal files coredumpctl reads, and whether the local journald wrote them (then their
 * _UID and _MACHINE_ID are journald's) or someone else did (another machine, a container, a
 * copy). Lists journal directories and opens journal files, with the invoking user's rights;
 * another writer's file is opened as a regular file only, one at a time. */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl-corefile.h"
#include "ctl-journal-files.h"
#include "fd-util.h"
#include "log.h"

/* Where journald keeps its files, each with a directory per machine id. */
static const char *const journal_roots[] = { "/var/log/journal", "/run/log/journal" };

typedef enum SetKind {
        SET_LOCAL_DIR,   /* the local journald's own directory */
        SET_FOREIGN,     /* one file of another writer's */
        SET_EXPLICIT,    /* -D or --file, as given */
} SetKind;

typedef struct JournalSet {
        SetKind kind;
        char *path; /* the directory, or the file */
} JournalSet;

/* The sets of one run, listed once. */
static JournalSet sets[FOREIGN_JOURNAL_FILES_MAX + ELEMENTSOF(journal_roots) + 1];
static size_t n_sets;
static bool listed, cut;

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

static bool journal_file_name(const char *name) {
        size_t l = strlen(name);

        return (l > strlen(".journal") && strcmp(name + l - strlen(".journal"), ".journal") == 0) ||
               (l > strlen(".journal~") && strcmp(name + l - strlen(".journal~"), ".journal~") == 0);
}

static void add_set(SetKind kind, const char *dir, const char *name) {
        if (n_sets >= ELEMENTSOF(sets)) {
                cut = true;
                return;
        }
        if ((name ? asprintf(&sets[n_sets].path, "%s/%s", dir, name) : asprintf(&sets[n_sets].path, "%s", dir)) < 0)
                return;
        sets[n_sets++].kind = kind;
}

/* The journal files directly in dir, each a set of its own. */
static void add_dir_files(const char *dir) {
        DIR *d = opendir(dir);

        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));)
                if (journal_file_name(de->d_name))
                        add_set(SET_FOREIGN, dir, de->d_name);
        closedir(d);
}

/* The journal files in a journal root (under --root) that are not the local journald's own: in
 * its directory (top level) and in every subdirectory but the local machine's and its
 * namespaces' ("MACHINE_ID.NAMESPACE", which journalctl leaves out too). */
static void add_foreign(const CtlArgs *a, const char *root_rel) {
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
                        add_set(SET_FOREIGN, root, de->d_name);
                        continue;
                }
                if (mid[0] && strncmp(de->d_name, mid, MACHINE_ID_HEX) == 0 &&
                    (de->d_name[MACHINE_ID_HEX] == 0 || de->d_name[MACHINE_ID_HEX] == '.'))
                        continue;
                if (snprintf(sub, sizeof sub, "%s/%s", root, de->d_name) < (int) sizeof sub &&
                    stat(sub, &st) >= 0 && S_ISDIR(st.st_mode) && !is_local_dir(a, &st))
                        add_dir_files(sub);
        }
        closedir(d);
}

/* The local journald's own directories: its machine's in both roots (under --root, that tree's). */
static void add_local(const CtlArgs *a) {
        char mid[MACHINE_ID_HEX + 1];

        ctl_local_machine_id(a, mid);
        if (!mid[0])
                return;
        for (size_t i = 0; i < ELEMENTSOF(journal_roots); i++) {
                char rel[PATH_MAX], dir[PATH_MAX];
                struct stat st;

                snprintf(rel, sizeof rel, "%s/%s", journal_roots[i], mid);
                if (ctl_root_path(a, rel, dir, sizeof dir) >= 0 && stat(dir, &st) >= 0 && S_ISDIR(st.st_mode))
                        add_set(SET_LOCAL_DIR, dir, NULL);
        }
}

static void list_sets(const CtlArgs *a) {
        if (listed)
                return;
        listed = true;
        if (a->directory || a->n_files > 0) {
                add_set(SET_EXPLICIT, "", NULL);
                return;
        }
        add_local(a);
        if (a->all || a->root)
                for (size_t i = 0; i < ELEMENTSOF(journal_roots); i++)
                        add_foreign(a, journal_roots[i]);
        if (cut)
                log_warning("More than %u journal files of other machines: only the first are read.",
                            FOREIGN_JOURNAL_FILES_MAX);
}

size_t journal_sets(const CtlArgs *a) {
        list_sets(a);
        return n_sets;
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

/* Another writer's file: a regular file, reached without following a symlink at its end (a
 * container's journal directory can hold a FIFO or a device named like a journal), opened once. */
static int open_foreign(const char *path, sd_journal **ret) {
        _cleanup_close_ int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), fd = -EBADF;
        int r;

        if (pfd < 0)
                return negative_errno();
        fd = fd_reopen_regular(pfd, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return fd;
        r = sd_journal_open_files_fd(ret, &fd, 1, 0);
        if (r >= 0)
                TAKE_FD(fd); /* the journal's now */
        return r;
}

int journal_open_nth(const CtlArgs *a, size_t index, sd_journal **ret, bool *ret_foreign) {
        const JournalSet *s;
        int r;

        *ret = NULL;
        *ret_foreign = true;
        if (index >= journal_sets(a))
                return 0;
        s = &sets[index];
        switch (s->kind) {
        case SET_EXPLICIT:
                return open_explicit(a, ret, ret_foreign);
        case SET_LOCAL_DIR:
                *ret_foreign = false;
                r = sd_journal_open_directory(ret, s->path, 0);
                break;
        default:
                r = open_foreign(s->path, ret);
                break;
        }
        if (r < 0) /* one file the other sets do not need: skipped, as journalctl skips it */
                return log_debug_errno(r, "Skipping the journal %s: %m", s->path), 0;
        return 1;
}
