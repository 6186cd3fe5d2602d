/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdlib.h>
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

int loop_write(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t) k;
        }
        return 0;
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

static int cmp_int(const void *a, const void *b) {
        int x = *(const int *) a, y = *(const int *) b;
        return (x > y) - (x < y);
}

int close_all_fds_except(const int *keep, size_t n_keep) {
        int sorted[16];
        unsigned lo = 3;

        if (n_keep > ELEMENTSOF(sorted))
                return -E2BIG;
        for (size_t i = 0; i < n_keep; i++)
                sorted[i] = keep[i];
        qsort(sorted, n_keep, sizeof(int), cmp_int);

        for (size_t i = 0; i < n_keep; i++) {
                if (sorted[i] < (int) lo)
                        continue;
                if ((unsigned) sorted[i] > lo && syscall(SYS_close_range, lo, (unsigned) sorted[i] - 1, 0) < 0)
                        return negative_errno();
                lo = (unsigned) sorted[i] + 1;
        }
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
