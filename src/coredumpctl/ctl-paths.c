/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Paths under --root: the configuration (coredump.conf and drop-ins) and the storage directory.
 * Reads configuration files only, with the invoking user's privileges. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

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
