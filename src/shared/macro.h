/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Common macros and cleanup helpers (_cleanup_, TAKE_FD, safe_close, MIN/MAX). Shared, header
 * only: touches only the fds and pointers handed to it. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
/* v rounded up to a multiple of a (a power of two) */
#define ALIGN_TO(v, a) (((v) + (a) - 1) & ~((__typeof__(v)) (a) - 1))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand ownership of an fd or pointer over to the caller, leaving "unset" behind. */
#define TAKE_FD(fd)                   \
        ({                            \
                int _fd_ = (fd);      \
                (fd) = -EBADF;        \
                _fd_;                 \
        })
#define TAKE_PTR(p)                   \
        ({                            \
                typeof(p) _p_ = (p);  \
                (p) = NULL;           \
                _p_;                  \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Closes fd if set, keeps errno, returns -EBADF so "fd = safe_close(fd);" resets it. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define NSEC_PER_USEC UINT64_C(1000)
#define USEC_INFINITY UINT64_MAX

#define UID_INVALID ((uid_t) -1)
#define GID_INVALID ((gid_t) -1)

/* Returns a negative errno from the current errno, never 0 (defends against buggy callers). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#include <stdio.h>
static inline void fclosep_(FILE **f) {
        if (*f)
                (void) fclose(*f);
}

/* Built with AddressSanitizer: its runtime reserves terabytes of address space for its shadow
 * memory (no RLIMIT_AS), and its thread interceptors make calls the worker's filter refuses (no
 * worker threads). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
