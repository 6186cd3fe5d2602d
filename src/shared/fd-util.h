/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: descriptor helpers for every program. Shared: reads and writes only the fds and paths
 * it is given; close_all_fds_except() closes every other fd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Reads exactly n bytes unless EOF comes first; returns bytes read or negative errno. */
ssize_t loop_read(int fd, void *buf, size_t n);
/* Writes all n bytes; returns 0 or negative errno. */
int loop_write(int fd, const void *buf, size_t n);
/* Writes all n bytes at offset (the file position unchanged). */
int loop_pwrite(int fd, const void *buf, size_t n, off_t offset);
/* Reads a small file below dirfd into buf (NUL-terminated, at most size-1 bytes);
 * returns the length or negative errno. */
ssize_t read_small_file_at(int dirfd, const char *path, char *buf, size_t size);
/* Closes every fd >= 3 except the ones listed. */
int close_all_fds_except(const int *keep, size_t n_keep);
int fd_set_nonblock(int fd, bool nonblock);
/* path beneath root as an O_PATH descriptor, one component at a time, no symlink followed
 * (-ELOOP), no ".." (-EXDEV): openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS) where openat2 is
 * missing or filtered. */
int fd_walk_beneath(int root, const char *path);
/* path under root (NULL: /) as an O_PATH descriptor, never leaving root: openat2() resolves "..",
 * and absolute symlinks, inside it; where openat2 is missing or filtered, fd_walk_beneath(). O_PATH
 * opens nothing: a FIFO does not block, a device is not opened. */
int fd_open_beneath(const char *root, const char *path);
/* The regular file pfd (an O_PATH descriptor) names, opened for reading or writing (flags) through
 * it: what was looked at is what is opened, never a FIFO or a device put there since (-EBADFD). */
int fd_reopen_regular(int pfd, int flags);
/* Standard input, output and error on /dev/null (a confined child whose words must not reach a
 * terminal or a log). */
int fd_null_stdio(void);
