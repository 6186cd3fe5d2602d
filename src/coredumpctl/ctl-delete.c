/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl delete: removes the matching entries' cores and records, only names coredumpd writes
 * in its store, a core only if its name is that crash's: directly as root, else through coredumpd's
 * control socket (it checks the ACL). */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "build-config.h"
#include "control-proto.h"
#include "ctl-corefile.h"
#include "ctl-delete.h"
#include "ctl-escape.h"
#include "log.h"

static const char *control_path(const CtlArgs *a) {
        return a->control ?: DEFAULT_CONTROL_PATH;
}

/* One request to coredumpd; 0 if it deleted the file, else the errno it answered. */
static int delete_via_daemon(const CtlArgs *a, const char *name) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char req[CONTROL_MSG_MAX], reply[CONTROL_MSG_MAX];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;
        int e;

        if (strlen(control_path(a)) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, control_path(a));
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return log_error_errno(negative_errno(), "Cannot reach coredumpd at %s (deleting other than as root needs it): %m",
                                       control_path(a));
        n = snprintf(req, sizeof req, CONTROL_DELETE " %s", name);
        if (n < 0 || (size_t) n >= sizeof req)
                return -ENAMETOOLONG;
        if (send(fd, req, (size_t) n, MSG_NOSIGNAL) != n)
                return negative_errno();
        n = recv(fd, reply, sizeof reply - 1, 0);
        if (n <= 0)
                return n < 0 ? negative_errno() : -ECONNRESET;
        reply[n] = 0;
        if (strcmp(reply, CONTROL_OK) == 0)
                return 0;
        if (sscanf(reply, CONTROL_ERR " %d", &e) == 1 && e > 0)
                return -e;
        return -EPROTO;
}

static int delete_direct(const char *dir, const char *name) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return negative_errno();
        if (unlinkat(fd, name, 0) < 0)
                return negative_errno();
        return 0;
}

/* dir/name split of a stored file; only names coredumpd writes, directly in the store. */
static int split_stored(const char *path, char *dir, size_t dsize, char *name, size_t nsize) {
        const char *slash = strrchr(path, '/');

        if (!slash || (size_t) (slash - path) >= dsize || strlen(slash + 1) >= nsize || !control_name_valid(slash + 1))
                return -EINVAL;
        snprintf(dir, dsize, "%.*s", (int) (slash - path), path);
        snprintf(name, nsize, "%s", slash + 1);
        return 0;
}

/* Whether dir is the storage directory (entries name files; only the store's are ours). */
static bool in_store(const CtlArgs *a, const char *dir) {
        char store[PATH_MAX], real_store[PATH_MAX], real_dir[PATH_MAX];

        return ctl_storage_dir(a, store, sizeof store) >= 0 && realpath(store, real_store) &&
               realpath(dir, real_dir) && strcmp(real_store, real_dir) == 0;
}

static int delete_file(const CtlArgs *a, const char *path, bool *deleted) {
        char dir[PATH_MAX], name[CONTROL_NAME_MAX + 1];
        _cleanup_free_ char *shown = escape_text(path, ESCAPE_DEFAULT);
        int r;

        *deleted = false;
        if (split_stored(path, dir, sizeof dir, name, sizeof name) < 0 || !in_store(a, dir))
                return log_error_errno(-EINVAL, "Not a file coredump-socket stored, not deleting: %s", shown ?: "?");
        r = geteuid() == 0 ? delete_direct(dir, name) : delete_via_daemon(a, name);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to delete %s: %m", shown ?: "?");
        *deleted = true;
        return 0;
}

/* The entry's core, if it names one: only the core of that very crash (see corefile_of_entry()),
 * in a store (corefile_analyze()), of an entry this machine's journald or coredumpd wrote. */
static int delete_core(const CtlArgs *a, const Entry *e, bool *deleted) {
        _cleanup_free_ char *core = entry_dup(e, "COREDUMP_FILENAME"), *shown = NULL;
        CoreFile cf;

        *deleted = false;
        if (!core)
                return 0;
        shown = escape_text(core, ESCAPE_DEFAULT);
        if (e->foreign || entry_from_other_machine(a, e))
                return log_error_errno(-EREMOTE, "The entry of PID %llu's crash comes from another machine or from a "
                                       "journal file the local journald did not write: not deleting %s.",
                                       (unsigned long long) e->pid, shown ?: "?");
        corefile_analyze(a, e, &cf);
        if (cf.foreign)
                return log_error_errno(-EINVAL, "%s is not the core of PID %llu's crash by its name, not deleting it.",
                                       shown ?: "?", (unsigned long long) e->pid);
        if (cf.outside_store)
                return log_error_errno(-EINVAL, "%s is not in a store the configuration names, not deleting it.",
                                       shown ?: "?");
        return delete_file(a, cf.path, deleted);
}

int verb_delete(const CtlArgs *a, const EntryList *l) {
        unsigned n_deleted = 0;
        int ret = 0;

        for (size_t i = 0; i < l->n; i++) {
                const Entry *e = &l->items[i];
                bool deleted_core = false, deleted_record = false;
                int r;

                r = delete_core(a, e, &deleted_core);
                if (r >= 0 && e->record_path)
                        r = delete_file(a, e->record_path, &deleted_record);
                if (r < 0)
                        ret = r;
                else if (deleted_core || deleted_record) {
                        n_deleted++;
                        if (!a->quiet)
                                printf("Deleted the %s of PID %llu.\n",
                                       deleted_core && deleted_record ? "core and record" : deleted_core ? "core" : "record",
                                       (unsigned long long) e->pid);
                }
        }
        if (ret >= 0 && n_deleted == 0)
                return log_error_errno(-ENOENT, "Nothing to delete: the matching coredumps have no stored core or record.");
        return ret;
}
