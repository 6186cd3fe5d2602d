/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An entry's COREFILE state (present, missing, inaccessible, ...): where its core is, whether it is
 * that crash's core at all, in a store the configuration names, and whether the invoking user may
 * read it; and the one descriptor dump and debug read it through. Opens only names directly in a
 * store directory, without following a symlink; reads nothing. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coredump-name.h"
#include "ctl-corefile.h"
#include "ctl-format.h"
#include "fd-util.h"
#include "parse-util.h"

/* The length of dir without the slashes at its end. */
static size_t dir_len(const char *dir, size_t len) {
        while (len > 1 && dir[len - 1] == '/')
                len--;
        return len;
}

static bool same_dir(const char *x, size_t xl, const char *y) {
        xl = dir_len(x, xl);
        return xl == dir_len(y, strlen(y)) && memcmp(x, y, xl) == 0;
}

/* The configuration's Directory= (or ""), read once per run: every entry asks. */
static const char *configured_store(const CtlArgs *a) {
        static char dir[PATH_MAX];
        static bool loaded;
        Config c;

        if (!loaded) {
                loaded = true;
                if (ctl_load_config(a, &c) >= 0)
                        snprintf(dir, sizeof dir, "%s", c.directory);
        }
        return dir;
}

/* The store directory the entry's file name (as the entry gives it, not under --root) is directly
 * in, opened O_PATH: --storage= (a path of this machine, compared with the entry's under --root)
 * or else the configuration's Directory=, or systemd-coredump's, character for character as the
 * collector wrote it; those two resolved inside the --root tree. Root owns it (or the caller
 * does) and no one else can write to it, so nobody but its owner puts a name there. -EREMOTE: the
 * name is in no store. */
static int open_store(const CtlArgs *a, const char *filename, size_t dlen) {
        _cleanup_close_ int fd = -EBADF;
        char rooted[PATH_MAX];
        struct stat st;

        if (a->storage && ctl_root_path(a, filename, rooted, sizeof rooted) >= 0 &&
            same_dir(rooted, strlen(rooted) - strlen(filename) + dlen, a->storage))
                fd = open(a->storage, O_PATH | O_DIRECTORY | O_CLOEXEC);
        else if (!a->storage && configured_store(a)[0] && same_dir(filename, dlen, configured_store(a)))
                fd = fd_open_beneath(a->root, configured_store(a));
        else if (same_dir(filename, dlen, SYSTEMD_COREDUMP_DIR))
                fd = fd_open_beneath(a->root, SYSTEMD_COREDUMP_DIR);
        else
                return -EREMOTE;
        if (fd < 0)
                return fd == -ENOENT ? -ENOENT : -EREMOTE;
        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
            (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -EREMOTE;
        return TAKE_FD(fd);
}

/* The file the entry names, opened with flags (O_PATH, or O_RDONLY) directly in its store without
 * following a symlink: -EREMOTE if it is in no store, else the open's error. */
static int open_in_store(const CtlArgs *a, const Entry *e, int flags) {
        _cleanup_free_ char *filename = entry_dup(e, "COREDUMP_FILENAME");
        _cleanup_close_ int dfd = -EBADF;
        const char *slash;
        int fd;

        if (!filename || !(slash = strrchr(filename, '/')) || slash == filename)
                return -EREMOTE;
        dfd = open_store(a, filename, (size_t) (slash - filename));
        if (dfd < 0)
                return dfd;
        fd = openat(dfd, slash + 1, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

static void analyze_file(const CtlArgs *a, const Entry *e, CoreFile *c) {
        _cleanup_close_ int fd = open_in_store(a, e, O_PATH);
        struct stat st;
        char proc[64];
        int r;

        c->size = UINT64_MAX;
        if (fd == -EREMOTE) {
                c->state = "error";
                c->color = ansi_red();
                c->outside_store = true;
                return;
        }
        if (fd == -ENOENT) {
                c->state = "missing";
                c->color = ansi_grey();
                return;
        }
        r = fd < 0 ? fd : 0;
        if (r == 0) {
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                if (access(proc, R_OK) < 0)
                        r = negative_errno();
        }
        if (r == -EACCES || r == -EPERM) {
                c->state = "inaccessible";
                c->color = ansi_yellow();
                return;
        }
        if (r < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                c->state = "error";
                c->color = ansi_red();
                return;
        }
        c->state = "present";
        c->color = NULL;
        c->size = (uint64_t) st.st_size;
}

int corefile_open(const CtlArgs *a, const Entry *e) {
        _cleanup_close_ int pfd = open_in_store(a, e, O_PATH);

        /* looked at without opening it, then opened through that look: a FIFO or a device put
         * there since is never opened */
        if (pfd < 0)
                return pfd;
        return fd_reopen_regular(pfd, O_RDONLY);
}

bool corefile_of_entry(const Entry *e, const char *path) {
        _cleanup_free_ char *uid = entry_dup(e, "COREDUMP_UID"), *boot = entry_dup(e, "_BOOT_ID");
        const char *slash = strrchr(path, '/');
        CoredumpName n;
        uint64_t u;

        if (!slash || coredump_name_parse(slash + 1, &n) < 0)
                return false;
        if (!uid || parse_uint64(uid, &u) < 0 || u != (uint64_t) n.uid)
                return false;
        if (e->pid != n.pid || e->timestamp != n.usec)
                return false;
        return !boot || strcmp(boot, n.boot_id) == 0;
}

bool entry_from_other_machine(const CtlArgs *a, const Entry *e) {
        _cleanup_free_ char *id = entry_dup(e, "_MACHINE_ID");
        char local[MACHINE_ID_HEX + 1];

        if (!id)
                return false;
        ctl_local_machine_id(a, local);
        return local[0] && strcmp(id, local) != 0;
}

void corefile_analyze(const CtlArgs *a, const Entry *e, CoreFile *ret) {
        _cleanup_free_ char *filename = entry_dup(e, "COREDUMP_FILENAME");
        _cleanup_free_ char *truncated = entry_dup(e, "COREDUMP_TRUNCATED");

        *ret = (CoreFile) { .size = UINT64_MAX };
        if (filename && ctl_root_path(a, filename, ret->path, sizeof ret->path) >= 0) {
                if (e->foreign || entry_from_other_machine(a, e)) {
                        /* its file is that machine's (or the journal file's writer named it): a
                         * file of that name here is another core (an entry can name one of ours),
                         * never opened */
                        ret->state = "remote";
                        ret->color = ansi_grey();
                } else if (corefile_of_entry(e, ret->path))
                        analyze_file(a, e, ret);
                else {
                        ret->state = "error";
                        ret->color = ansi_red();
                        ret->foreign = true;
                }
        } else if (filename) {
                ret->state = "error";
                ret->color = ansi_red();
        } else if (e->core_in_journal)
                ret->state = "journal";
        else if (entry_has_value(e, "MESSAGE_ID", SD_MESSAGE_COREDUMP_STR)) {
                ret->state = "none";
                ret->color = ansi_grey();
        }
        if (ret->state && (strcmp(ret->state, "present") == 0 || strcmp(ret->state, "journal") == 0) && truncated &&
            parse_boolean(truncated) > 0)
                ret->state = "truncated";
}
