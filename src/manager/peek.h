/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the pre-ack look at a crashing process, for the policy. Manager (root): reads a few
 * /proc/PID files of that task only. */
#pragma once

/* The little the manager reads of a crashing process before it answers the kernel's request:
 * enough to apply the rate limits and ProcessSizeMax=, cheaply (a storm of suppressed crashes
 * must cost almost nothing). Read under the same guard as meta_collect(): the /proc directory
 * is opened, then the pidfd checked alive, so it is that process; and checked again after. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup-util.h"
#include "meta.h"
#include "pidfd-util.h"

#define PEEK_STATUS_MAX 4096U /* /proc/PID/status is about 1.5 KiB */
#define PEEK_CGROUP_MAX 4096U
#define PEEK_LIMITS_MAX 4096U /* /proc/PID/limits is about 1.4 KiB */

typedef struct CrashPeek {
        char exe[PATH_MAX];
        char comm[COMM_MAX];
        char service[UNIT_NAME_MAX + 16]; /* "foo.service", or "user@UID/foo.service"; "" if none */
        bool rlimit_valid;
        uint64_t rlimit_core; /* soft RLIMIT_CORE; UINT64_MAX = unlimited */
        bool size_valid;
        uint64_t size_min; /* what the core takes at least: resident and swapped anonymous memory */
} CrashPeek;

/* What to read besides exe, comm and the service (each costs a /proc read per crash). */
typedef enum PeekWant {
        PEEK_SIZE = 1 << 0,   /* status: size_min */
        PEEK_RLIMIT = 1 << 1, /* limits: rlimit_core (pipe mode has it from %c already) */
} PeekWant;

/* pidfd may be -EBADF (pipe mode on an old kernel): then the thread tid the kernel named must
 * be dumping core (PF_DUMPCORE) before and after the reads, as for meta_collect_unpinned(), so
 * a recycled PID is never read. On failure *ret says nothing (all empty). */
int peek_collect(int pidfd, pid_t pid, pid_t tid, PeekWant want, CrashPeek *ret);
/* Pure: RssAnon + VmSwap of a /proc/PID/status text, in bytes. */
int peek_parse_anon_size(const char *status, uint64_t *ret);
/* Pure: the service a unified cgroup path belongs to, as CrashPeek.service has it. */
void peek_service(const char *cgroup_path, char *buf, size_t size);
