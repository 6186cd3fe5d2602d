/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd --register/--unregister for units: sets or restores core_pattern and core_pipe_limit,
 * the old values saved in files beside the socket. Root, one-shot; writes nothing else. */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fd-util.h"
#include "listen.h"
#include "log.h"
#include "macro.h"
#include "pattern.h"
#include "register.h"

#define SAVED_NAME "core_pattern.saved"
#define SAVED_LIMIT_NAME "core_pipe_limit.saved"
#define CONTAINER_MARK_FILE "/run/systemd/container"

static int saved_path(const char *socket_path, const char *name, char *buf, size_t size) {
        char copy[SOCKET_PATH_MAX];

        snprintf(copy, sizeof copy, "%s", socket_path);
        if (snprintf(buf, size, "%s/%s", dirname(copy), name) >= (int) size)
                return -ENAMETOOLONG;
        return 0;
}

static int save(const char *file, const char *text) {
        _cleanup_close_ int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

        if (fd < 0 || loop_write(fd, text, strlen(text)) < 0)
                return log_error_errno(negative_errno(), "Failed to remember the previous value in %s: %m", file);
        return 0;
}

/* Inside a container (its manager says so in /run/systemd/container) core_pattern is the
 * host's: the unit registers nothing and the daemon takes the crashes the host forwards. */
static bool in_container(void) {
        char what[64];

        if (read_small_file_at(AT_FDCWD, CONTAINER_MARK_FILE, what, sizeof what) < 0)
                return false;
        what[strcspn(what, "\n")] = 0;
        log_notice("In a container (%s): kernel.core_pattern is the host's, left alone; crashes come "
                   "forwarded by the host on /run/systemd/coredump", what[0] ? what : "unnamed");
        return true;
}

int register_oneshot(const char *socket_path, const Config *c) {
        char saved[CORE_PATTERN_MAX + 2], ours[CORE_PATTERN_MAX + 2], file[PATH_MAX], limit_file[PATH_MAX], v[16];
        unsigned old_limit;
        bool pipe = false;
        int r;

        if (in_container())
                return 0;
        r = socket_path_check(socket_path);
        if (r >= 0)
                r = saved_path(socket_path, SAVED_NAME, file, sizeof file);
        if (r >= 0)
                r = saved_path(socket_path, SAVED_LIMIT_NAME, limit_file, sizeof limit_file);
        if (r < 0)
                return r;
        r = pattern_register(c->mode, socket_path, saved, sizeof saved, ours, sizeof ours, &pipe);
        if (r < 0)
                return r;
        if (pipe && access(limit_file, F_OK) < 0 && pipe_limit_raise(c->max_parallel + CRASHES_REFUSING_MAX, &old_limit) >= 0) {
                snprintf(v, sizeof v, "%u", old_limit);
                (void) save(limit_file, v);
        }
        if (strcmp(saved, ours) == 0)
                return 0; /* already ours (re-registered): keep the older saved pattern */
        return save(file, saved);
}

int unregister_oneshot(const char *socket_path, const Config *c) {
        char saved[CORE_PATTERN_MAX + 2], ours[CORE_PATTERN_MAX + 2], file[PATH_MAX], limit_file[PATH_MAX], v[16];
        const char *why;
        unsigned limit;
        int r;

        if (in_container())
                return 0;
        r = saved_path(socket_path, SAVED_NAME, file, sizeof file);
        if (r >= 0)
                r = saved_path(socket_path, SAVED_LIMIT_NAME, limit_file, sizeof limit_file);
        if (r < 0)
                return r;
        r = pattern_choose(c->mode, socket_path, ours, sizeof ours, &why);
        if (r < 0)
                return log_error_errno(r, "Cannot tell which pattern would be ours: %m");
        if (read_small_file_at(AT_FDCWD, file, saved, sizeof saved) < 0) {
                log_warning("No saved core_pattern in %s; setting 'core'", file);
                snprintf(saved, sizeof saved, "core");
        }
        r = pattern_restore(saved, ours);
        (void) unlink(file);
        if (read_small_file_at(AT_FDCWD, limit_file, v, sizeof v) > 0 && sscanf(v, "%u", &limit) == 1) {
                (void) pipe_limit_set(limit);
                log_info("core_pipe_limit restored to %u", limit);
        }
        (void) unlink(limit_file);
        return r;
}
