/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the manager learns about a crashed process from /proc, read through one dirfd opened
 * after the pidfd check and confirmed afterwards, so PID reuse cannot swap the process. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "pidfd-util.h"

#define COMM_MAX 64 /* TASK_COMM_LEN is 16; newer kernels allow 64 */

typedef struct CrashMeta {
        bool proc_valid; /* the /proc fields below belong to the crashed process */
        char comm[COMM_MAX];
        char exe[PATH_MAX];
        bool auxv_valid;
        bool at_secure;
        uint64_t rlimit_core; /* soft limit; UINT64_MAX = unlimited */
        bool rlimit_valid;
} CrashMeta;

int meta_collect(int pidfd, const PidfdInfo *info, CrashMeta *ret);
/* Pure parsers, for tests. */
int meta_parse_auxv_secure(const uint8_t *buf, size_t len, bool *ret);
int meta_parse_limits_core(const char *limits, uint64_t *ret);
