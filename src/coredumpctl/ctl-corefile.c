/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An entry's COREFILE state (present, missing, inaccessible, ...): where its core is, whether it is
 * that crash's core at all, and whether the invoking user may read it. Opens it O_PATH, stats and
 * access()-checks it; never reads it. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coredump-name.h"
#include "ctl-corefile.h"
#include "ctl-format.h"
#include "parse-util.h"

static void analyze_file(CoreFile *c) {
        _cleanup_close_ int fd = open(c->path, O_PATH | O_CLOEXEC);
        struct stat st;
        char proc[64];

        c->size = UINT64_MAX;
        if (fd < 0 && errno == ENOENT) {
                c->state = "missing";
                c->color = ansi_grey();
                return;
        }
        if (fd >= 0) {
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                if (access(proc, R_OK) < 0)
                        fd = safe_close(fd);
        }
        if (fd < 0 && (errno == EACCES || errno == EPERM)) {
                c->state = "inaccessible";
                c->color = ansi_yellow();
                return;
        }
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                c->state = "error";
                c->color = ansi_red();
                return;
        }
        c->state = "present";
        c->color = NULL;
        c->size = (uint64_t) st.st_size;
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

/* This machine's id (under --root, that tree's), or "" where it cannot be read. */
static void local_machine_id(const CtlArgs *a, char buf[MACHINE_ID_HEX + 1]) {
        /* one root per run: read once */
        static char cached[MACHINE_ID_HEX + 1];
        static bool read_once;
        char path[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        if (!read_once) {
                read_once = true;
                if (ctl_root_path(a, "/etc/machine-id", path, sizeof path) >= 0 &&
                    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) >= 0) {
                        n = read(fd, cached, MACHINE_ID_HEX);
                        cached[n == (ssize_t) MACHINE_ID_HEX ? MACHINE_ID_HEX : 0] = 0;
                }
        }
        memcpy(buf, cached, sizeof cached);
}

bool entry_from_other_machine(const CtlArgs *a, const Entry *e) {
        _cleanup_free_ char *id = entry_dup(e, "_MACHINE_ID");
        char local[MACHINE_ID_HEX + 1];

        if (!id)
                return false;
        local_machine_id(a, local);
        return local[0] && strcmp(id, local) != 0;
}

void corefile_analyze(const CtlArgs *a, const Entry *e, CoreFile *ret) {
        _cleanup_free_ char *filename = entry_dup(e, "COREDUMP_FILENAME");
        _cleanup_free_ char *truncated = entry_dup(e, "COREDUMP_TRUNCATED");

        *ret = (CoreFile) { .size = UINT64_MAX };
        if (filename && ctl_root_path(a, filename, ret->path, sizeof ret->path) >= 0) {
                if (entry_from_other_machine(a, e)) {
                        /* its file is that machine's: a file of that name here is another core
                         * (an entry can name one of ours), never opened */
                        ret->state = "remote";
                        ret->color = ansi_grey();
                } else if (corefile_of_entry(e, ret->path))
                        analyze_file(ret);
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
