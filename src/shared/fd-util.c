/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Descriptor helpers: full reads and writes, a small file below a dirfd, closing all but some fds,
 * O_NONBLOCK, a path beneath a directory without symlinks or never leaving it. Shared by every
 * program: reads or writes only the fds and paths it is given. */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fd-util.h"
#include "macro.h"

ssize_t loop_read(int fd, void *buf, size_t n) {
        size_t got = 0;

        while (got < n) {
                ssize_t k = read(fd, (char *) buf + got, n - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        return (ssize_t) got;
}

/* Writes all n bytes, at offset (moving it along) or, if offset is negative, at the file position. */
static int write_all(int fd, const void *buf, size_t n, off_t offset) {
        const char *p = buf;

        while (n > 0) {
                ssize_t k = offset < 0 ? write(fd, p, n) : pwrite(fd, p, n, offset);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t) k;
                if (offset >= 0)
                        offset += k;
        }
        return 0;
}

int loop_write(int fd, const void *buf, size_t n) {
        return write_all(fd, buf, n, -1);
}

int loop_pwrite(int fd, const void *buf, size_t n, off_t offset) {
        assert(offset >= 0);
        return write_all(fd, buf, n, offset);
}

ssize_t read_small_file_at(int dirfd, const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        if (size == 0)
                return -EINVAL;
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        n = loop_read(fd, buf, size - 1);
        if (n < 0)
                return n;
        buf[n] = 0;
        return n;
}

/* The smallest fd in keep[] above lo, or -1: keep[] is the caller's, unsorted and of any length,
 * and nothing is allocated (the worker calls this before its sandbox). */
static int next_kept(const int *keep, size_t n_keep, unsigned lo) {
        int best = -1;

        for (size_t i = 0; i < n_keep; i++)
                if (keep[i] >= 0 && (unsigned) keep[i] >= lo && (best < 0 || keep[i] < best))
                        best = keep[i];
        return best;
}

int close_all_fds_except(const int *keep, size_t n_keep) {
        unsigned lo = 3;

        for (int k; (k = next_kept(keep, n_keep, lo)) >= 0; lo = (unsigned) k + 1)
                if ((unsigned) k > lo && syscall(SYS_close_range, lo, (unsigned) k - 1, 0) < 0)
                        return negative_errno();
        if (syscall(SYS_close_range, lo, ~0U, 0) < 0)
                return negative_errno();
        return 0;
}

int fd_set_nonblock(int fd, bool nonblock) {
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0)
                return negative_errno();
        flags = nonblock ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
        if (fcntl(fd, F_SETFL, flags) < 0)
                return negative_errno();
        return 0;
}

/* openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS) by hand, for where openat2 is missing or
 * filtered (systemd's seccomp filters answer ENOSYS for calls their libseccomp does not know):
 * one component at a time with O_NOFOLLOW. */
int fd_walk_beneath(int root, const char *path) {
        char buf[PATH_MAX], *rest = buf;
        _cleanup_close_ int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);

        if (cur < 0)
                return negative_errno();
        if (strlen(path) >= sizeof buf)
                return -ENAMETOOLONG;
        snprintf(buf, sizeof buf, "%s", path);
        for (;;) {
                struct stat st;
                char *comp;
                int fd;

                while (*rest == '/')
                        rest++;
                if (!*rest)
                        return TAKE_FD(cur);
                comp = rest;
                rest = strchrnul(rest, '/');
                if (*rest)
                        *rest++ = 0;
                if (strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0)
                        return -EXDEV;
                fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                safe_close(cur);
                cur = fd;
                if (fstat(cur, &st) < 0)
                        return negative_errno();
                if (S_ISLNK(st.st_mode))
                        return -ELOOP;
        }
}

int fd_open_beneath(const char *root, const char *path) {
        _cleanup_close_ int rfd = open(root ?: "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        if (rfd < 0)
                return negative_errno();
        fd = (int) syscall(SYS_openat2, rfd, path, &how, sizeof how);
        if (fd >= 0)
                return fd;
        if (errno != ENOSYS && errno != EPERM)
                return negative_errno();
        return fd_walk_beneath(rfd, path);
}

int fd_reopen_regular(int pfd, int flags) {
        struct stat st;
        char proc[64];
        int fd;

        if (fstat(pfd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, flags | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? negative_errno() : fd;
}

int fd_null_stdio(void) {
        _cleanup_close_ int fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return negative_errno();
        for (int i = STDIN_FILENO; i <= STDERR_FILENO; i++)
                if (dup2(fd, i) < 0)
                        return negative_errno();
        return 0;
}
