/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fd-util.h"
#include "listen.h"
#include "log.h"
#include "macro.h"
#include "pattern.h"
#include "register.h"

#define SAVED_NAME "core_pattern.saved"

static int saved_path(const char *socket_path, char *buf, size_t size) {
        char copy[SOCKET_PATH_MAX];

        snprintf(copy, sizeof copy, "%s", socket_path);
        if (snprintf(buf, size, "%s/%s", dirname(copy), SAVED_NAME) >= (int) size)
                return -ENAMETOOLONG;
        return 0;
}

int register_oneshot(const char *socket_path) {
        char saved[CORE_PATTERN_MAX + 2], ours[CORE_PATTERN_MAX + 2], file[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = socket_path_check(socket_path);
        if (r < 0)
                return r;
        r = saved_path(socket_path, file, sizeof file);
        if (r < 0)
                return r;
        r = pattern_register(socket_path, saved, sizeof saved, ours, sizeof ours);
        if (r < 0)
                return r;
        if (strcmp(saved, ours) == 0)
                return 0; /* already ours (re-registered): keep the older saved pattern */
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 || loop_write(fd, saved, strlen(saved)) < 0)
                return log_error_errno(negative_errno(), "Failed to remember the previous pattern in %s: %m", file);
        return 0;
}

int unregister_oneshot(const char *socket_path) {
        char saved[CORE_PATTERN_MAX + 2], ours[CORE_PATTERN_MAX + 2], file[PATH_MAX];
        int r;

        r = saved_path(socket_path, file, sizeof file);
        if (r < 0)
                return r;
        r = pattern_for_socket(socket_path, ours, sizeof ours);
        if (r < 0)
                return log_error_errno(r, "Cannot tell which pattern would be ours: %m");
        if (read_small_file_at(AT_FDCWD, file, saved, sizeof saved) < 0) {
                log_warning("No saved core_pattern in %s; setting 'core'", file);
                snprintf(saved, sizeof saved, "core");
        }
        r = pattern_restore(saved, ours);
        (void) unlink(file);
        return r;
}
