/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting one of coredumpd's helper binaries (worker, zygote, forward launcher) with posix_spawn().
 * Manager (root): starts the child, touches nothing else. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct SpawnFds {
        int sock;          /* placed on sock_target in the child */
        int sock_target;
        int stderr_fd;     /* placed on stderr; negative: the child keeps coredumpd's stderr */
        bool null_stdio;   /* stdin and stdout from /dev/null rather than coredumpd's */
} SpawnFds;

/* Starts path with argv and envp, fds as described, no blocked signals and default dispositions;
 * the child's PID in *ret. 0 or a negative errno. */
int spawn_helper(const char *path, char *const argv[], char *const envp[], const SpawnFds *fds, pid_t *ret);
