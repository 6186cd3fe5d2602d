/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel.core_pattern: socket or pipe mode for this kernel, the pattern written, verified and
 * restored, and core_pipe_limit. Manager (root): writes only those two /proc/sys/kernel files. */
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "pattern.h"
#include "pidfd-util.h"

#define CORE_MODES_FILE "/proc/sys/kernel/core_modes"

static void strip_newline(char *s) {
        size_t l = strlen(s);
        if (l > 0 && s[l - 1] == '\n')
                s[l - 1] = 0;
}

int pattern_read(char *buf, size_t size) {
        ssize_t n = read_small_file_at(AT_FDCWD, CORE_PATTERN_FILE, buf, size);

        if (n < 0)
                return (int) n;
        strip_newline(buf);
        return 0;
}

static int write_raw(const char *pattern) {
        _cleanup_close_ int fd = open(CORE_PATTERN_FILE, O_WRONLY | O_CLOEXEC | O_TRUNC);

        if (fd < 0)
                return negative_errno();
        return loop_write(fd, pattern, strlen(pattern));
}

int pattern_write(const char *pattern) {
        char old[CORE_PATTERN_MAX + 2], now[CORE_PATTERN_MAX + 2];
        int r;

        if (strlen(pattern) >= CORE_PATTERN_MAX)
                return -ENAMETOOLONG;
        r = pattern_read(old, sizeof old);
        if (r < 0)
                return r;
        r = write_raw(pattern);
        if (r < 0)
                return r;
        r = pattern_read(now, sizeof now);
        if (r < 0)
                return r;
        if (strcmp(now, pattern) != 0) {
                (void) write_raw(old);
                return -EIO;
        }
        return 0;
}

/* PIDFD_INFO_SUPPORTED_MASK came after the @@ request protocol (6.19 vs 6.17), in upstream and in
 * backports alike (kernel-patches/linux-6.12 reports it), so a kernel that answers it speaks @@
 * whatever its version says. */
static bool kernel_reports_supported_mask(void) {
        _cleanup_close_ int pidfd = pidfd_open_pid(getpid());
        PidfdInfo info;

        if (pidfd < 0 || pidfd_get_info(pidfd, PIDFD_INFO_SUPPORTED_MASK, &info) < 0)
                return false;
        return info.mask & PIDFD_INFO_SUPPORTED_MASK;
}

/* Which socket protocol the running kernel speaks: core_modes says "socket" since 6.16, the @@
 * request protocol came with 6.17; a backport to an older version shows itself by its pidfd
 * info. */
static int socket_protocol(bool *ret_request) {
        char modes[256];
        struct utsname u;
        unsigned major = 0, minor = 0;

        if (read_small_file_at(AT_FDCWD, CORE_MODES_FILE, modes, sizeof modes) < 0 || !strstr(modes, "socket"))
                return -EOPNOTSUPP;
        if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
                major = minor = 0;
        *ret_request = major > 6 || (major == 6 && minor >= 17) || kernel_reports_supported_mask();
        return 0;
}

int pattern_for_socket(const char *socket_path, char *buf, size_t size) {
        bool request;
        int r, n;

        r = socket_protocol(&request);
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s%s", request ? "@@" : "@", socket_path);
        if (n < 0 || (size_t) n >= size || (size_t) n >= CORE_PATTERN_MAX)
                return -ENAMETOOLONG;
        return 0;
}

int pipe_socket_path(const char *socket_path, char *buf, size_t size) {
        const char *slash = strrchr(socket_path, '/');
        int n;

        if (!slash)
                return -EINVAL;
        n = snprintf(buf, size, "%.*s/%s", (int) (slash - socket_path), socket_path, PIPE_SOCKET_NAME);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* The helper sits next to coredumpd (installed or in the build tree). */
static int helper_path(char *buf, size_t size) {
        char self[PATH_MAX], *slash;
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

        if (n < 0)
                return negative_errno();
        self[n] = 0;
        slash = strrchr(self, '/');
        if (!slash)
                return -EINVAL;
        *slash = 0;
        if (snprintf(buf, size, "%s/coredump-pipe", self) >= (int) size)
                return -ENAMETOOLONG;
        return access(buf, X_OK) < 0 ? negative_errno() : 0;
}

int pattern_for_pipe(const char *socket_path, char *buf, size_t size) {
        char helper[PATH_MAX], handover[PATH_MAX];
        int r, n;

        r = helper_path(helper, sizeof helper);
        if (r < 0)
                return r;
        r = pipe_socket_path(socket_path, handover, sizeof handover);
        if (r < 0)
                return r;
        if (strchr(helper, ' ') || strchr(handover, ' '))
                return -EINVAL;
        n = snprintf(buf, size, "|%s %s %%P %%I %%u %%g %%s %%t %%c %%h %%d %%F", helper, handover);
        if (n < 0 || (size_t) n >= size || (size_t) n >= CORE_PATTERN_MAX)
                return -ENAMETOOLONG;
        return 0;
}

int pattern_choose(CaptureMode mode, const char *socket_path, char *buf, size_t size, const char **ret_why) {
        int r;

        if (mode != MODE_PIPE) {
                r = pattern_for_socket(socket_path, buf, size);
                if (r >= 0) {
                        *ret_why = buf[1] == '@' ? "the kernel speaks the @@ request protocol (6.17+)"
                                                 : "the kernel has the @ socket (6.16)";
                        return 0;
                }
                if (mode == MODE_SOCKET || r != -EOPNOTSUPP)
                        return r;
        }
        r = pattern_for_pipe(socket_path, buf, size);
        if (r < 0)
                return r;
        *ret_why = mode == MODE_PIPE ? "Mode=pipe" : "the kernel has no coredump socket (kernel.core_modes)";
        return 1;
}

static int write_small(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);

        if (fd < 0)
                return negative_errno();
        return loop_write(fd, text, strlen(text));
}

int pipe_limit_set(unsigned value) {
        char v[16];

        snprintf(v, sizeof v, "%u", value);
        return write_small(CORE_PIPE_LIMIT_FILE, v);
}

int pipe_limit_raise(unsigned want, unsigned *ret_old) {
        char v[32];
        unsigned long old;

        if (read_small_file_at(AT_FDCWD, CORE_PIPE_LIMIT_FILE, v, sizeof v) < 0 || sscanf(v, "%lu", &old) != 1)
                return -EIO;
        *ret_old = (unsigned) old;
        return old >= want ? 0 : pipe_limit_set(want);
}

int pattern_register(CaptureMode mode, const char *socket_path, char *saved, size_t saved_size, char *ours,
                     size_t ours_size, bool *ret_pipe) {
        const char *why = NULL;
        int r;

        r = pattern_choose(mode, socket_path, ours, ours_size, &why);
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "This kernel has no coredump socket (kernel.core_modes lacks 'socket') and Mode=socket: %m");
        if (r < 0)
                return log_error_errno(r, "Cannot build a core_pattern for %s: %m", socket_path);
        *ret_pipe = r == 1;
        log_info("Using %s mode: %s", r == 1 ? "pipe" : "socket", why);
        r = pattern_read(saved, saved_size);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", CORE_PATTERN_FILE);
        r = pattern_write(ours);
        if (r == -EINVAL)
                return log_error_errno(r, "The kernel refused core_pattern '%s' (written from outside the initial mount namespace?): %m", ours);
        if (r < 0)
                return log_error_errno(r, "Failed to set core_pattern to '%s': %m", ours);
        log_info("core_pattern set to '%s' (was '%s')", ours, saved);
        return 0;
}

int pattern_restore(const char *saved, const char *ours) {
        char now[CORE_PATTERN_MAX + 2];
        int r;

        r = pattern_read(now, sizeof now);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", CORE_PATTERN_FILE);
        if (strcmp(now, ours) != 0) {
                log_notice("core_pattern is now '%s', not ours; leaving it alone", now);
                return 0;
        }
        r = pattern_write(saved);
        if (r < 0)
                return log_error_errno(r, "Failed to restore core_pattern '%s': %m", saved);
        log_info("core_pattern restored to '%s'", saved);
        return 0;
}
