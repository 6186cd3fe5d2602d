/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The unit tests' CHECK macros and failure count. Header only: prints failures to stderr. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

static unsigned tests_failed;

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
                        tests_failed++;                                                            \
                }                                                                                  \
        } while (0)

#define CHECK_EQ(a, b)                                                                                  \
        do {                                                                                            \
                long long _a = (long long) (a), _b = (long long) (b);                                   \
                if (_a != _b) {                                                                         \
                        fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, \
                                _a, #b, _b);                                                            \
                        tests_failed++;                                                                 \
                }                                                                                       \
        } while (0)

#define CHECK_STREQ(a, b)                                                                               \
        do {                                                                                            \
                const char *_a = (a), *_b = (b);                                                        \
                if (strcmp(_a, _b) != 0) {                                                              \
                        fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, _a, _b); \
                        tests_failed++;                                                                 \
                }                                                                                       \
        } while (0)

#define TESTS_DONE()                                                  \
        do {                                                          \
                if (tests_failed)                                     \
                        fprintf(stderr, "%u checks failed\n", tests_failed); \
                return tests_failed ? 1 : 0;                          \
        } while (0)

/* A file of blocks 4 KiB blocks (non-zero bytes, synced: its blocks are allocated) named name in
 * dir, as a stored core or record of the vacuum's tests. */
#define TEST_BLOCK 4096U
static inline void test_put_blocks(int dir, const char *name, size_t blocks) {
        static const char buf[TEST_BLOCK] = { 1 };
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        CHECK(fd >= 0);
        for (size_t i = 0; i < blocks; i++)
                CHECK_EQ(write(fd, buf, sizeof buf), (ssize_t) sizeof buf);
        CHECK_EQ(fsync(fd), 0);
        close(fd);
}

/* Descriptors open in this process, among the first TEST_FDS_SCANNED. */
#define TEST_FDS_SCANNED 256
static inline int test_open_fd_count(void) {
        int n = 0;

        for (int fd = 0; fd < TEST_FDS_SCANNED; fd++)
                n += fcntl(fd, F_GETFD) >= 0;
        return n;
}

/* Whether another process sees our write lock on fd's file. A POSIX lock goes with the close of
 * any descriptor of its file in the process holding it, as a FUSE file's close sends FLUSH: so it
 * tells a descriptor that was opened (and closed) here from one that never was. */
static inline bool test_lock_held(int fd) {
        pid_t pid = fork();
        int status;

        if (pid == 0) {
                struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
                _exit(fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_WRLCK ? 0 : 1);
        }
        return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
