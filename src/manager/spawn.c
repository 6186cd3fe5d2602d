/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting one of coredumpd's helper binaries with posix_spawn(): glibc uses vfork semantics, so
 * coredumpd's page tables are neither copied nor written copy-on-write for a child that only execs.
 * Manager (root): starts the child, touches nothing else. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "spawn.h"

static int add_fds(posix_spawn_file_actions_t *fa, const SpawnFds *fds, int sock) {
        int r = 0;

        if (fds->null_stdio) {
                r = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDWR, 0);
                r = r ?: posix_spawn_file_actions_adddup2(fa, STDIN_FILENO, STDOUT_FILENO);
        }
        if (fds->stderr_fd >= 0 && fds->stderr_fd != STDERR_FILENO)
                r = r ?: posix_spawn_file_actions_adddup2(fa, fds->stderr_fd, STDERR_FILENO);
        return r ?: posix_spawn_file_actions_adddup2(fa, sock, fds->sock_target);
}

static int set_signals(posix_spawnattr_t *attr) {
        sigset_t none, all;
        int r;

        sigemptyset(&none);
        sigfillset(&all);
        r = posix_spawnattr_setsigmask(attr, &none);
        r = r ?: posix_spawnattr_setsigdefault(attr, &all);
        return r ?: posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

int spawn_helper(const char *path, char *const argv[], char *const envp[], const SpawnFds *fds, pid_t *ret) {
        _cleanup_close_ int moved = -EBADF;
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        int sock = fds->sock, r;

        assert(path && argv && envp && ret);
        assert(fds->sock >= 0 && fds->sock_target > STDERR_FILENO);

        /* dup2() onto itself would leave O_CLOEXEC set: move the socket out of the way first */
        if (sock == fds->sock_target) {
                moved = fcntl(sock, F_DUPFD_CLOEXEC, fds->sock_target + 1);
                if (moved < 0)
                        return negative_errno();
                sock = moved;
        }
        r = posix_spawn_file_actions_init(&fa);
        if (r != 0)
                return -r;
        r = posix_spawnattr_init(&attr);
        if (r == 0) {
                r = add_fds(&fa, fds, sock);
                r = r ?: set_signals(&attr);
                r = r ?: posix_spawn(ret, path, &fa, &attr, argv, envp);
                posix_spawnattr_destroy(&attr);
        }
        posix_spawn_file_actions_destroy(&fa);
        return -r;
}
