/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reads a clock in microseconds. Shared, pure: no I/O. */
#include "macro.h"
#include "time-util.h"

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}
