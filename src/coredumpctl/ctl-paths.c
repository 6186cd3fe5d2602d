/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Paths under --root: the configuration (coredump.conf and drop-ins), the storage directory, the
 * machine id. Reads configuration files and /etc/machine-id only, with the invoking user's
 * privileges. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "build-config.h"
#include "ctl.h"
#include "log.h"

int ctl_root_path(const CtlArgs *a, const char *path, char *buf, size_t size) {
        size_t rl;
        int n;

        if (path[0] != '/' || strstr(path, "/../"))
                return -EINVAL;
        if (!a->root) {
                n = snprintf(buf, size, "%s", path);
                return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
        }
        rl = strlen(a->root);
        while (rl > 1 && a->root[rl - 1] == '/')
                rl--;
        n = snprintf(buf, size, "%.*s%s", (int) rl, a->root, path);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int ctl_load_config(const CtlArgs *a, Config *ret) {
        char main_file[PATH_MAX], dropins[PATH_MAX];
        int r;

        config_init_defaults(ret);
        r = ctl_root_path(a, a->config ?: CONFIG_FILE, main_file, sizeof main_file);
        if (r >= 0)
                r = ctl_root_path(a, CONFIG_DROPIN_DIR, dropins, sizeof dropins);
        if (r < 0)
                return log_error_errno(r, "Invalid configuration path: %m");
        /* the daemon refuses an invalid configuration; reading, we go on with what parsed */
        (void) config_load(ret, main_file, a->config ? NULL : dropins);
        return 0;
}

int ctl_storage_dir(const CtlArgs *a, char *buf, size_t size) {
        Config c;
        int r;

        if (a->storage) {
                r = snprintf(buf, size, "%s", a->storage);
                return r < 0 || (size_t) r >= size ? -ENAMETOOLONG : 0;
        }
        r = ctl_load_config(a, &c);
        if (r < 0)
                return r;
        r = ctl_root_path(a, c.directory, buf, size);
        return r < 0 ? log_error_errno(r, "Invalid storage directory %s: %m", c.directory) : 0;
}

void ctl_local_machine_id(const CtlArgs *a, char buf[MACHINE_ID_HEX + 1]) {
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
