/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper: enters the worker's real sandbox_enter(), then tries one thing.
 *   sandbox-probe UID GID ACTION
 * Prints "errno=N" if the call failed (exit 0), "allowed" if it worked (exit 1); a call the
 * filter forbids kills the process with SIGSYS. ACTION "status" prints /proc/self/status lines
 * read before the filter (via a descriptor kept open). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandbox.h"

static int report(long r) {
        if (r < 0) {
                printf("errno=%d\n", errno);
                return 0;
        }
        printf("allowed\n");
        return 1;
}

static int connect_path(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

        if (fd < 0)
                return -1;
        strncpy(sa.sun_path, path, sizeof sa.sun_path - 1);
        return connect(fd, (struct sockaddr *) &sa, sizeof sa);
}

static int act(const char *a, const char *arg) {
        void *p;

        if (!strcmp(a, "none"))
                return report(0) == 1 ? 0 : 1;
        if (!strcmp(a, "open-write"))
                return report(open("/etc/coredump-probe", O_WRONLY | O_CREAT, 0644));
        if (!strcmp(a, "open-read"))
                return report(open("/etc/passwd", O_RDONLY));
        if (!strcmp(a, "socket-inet"))
                return report(socket(AF_INET, SOCK_STREAM, 0));
        if (!strcmp(a, "socket-unix-stream"))
                return report(socket(AF_UNIX, SOCK_STREAM, 0));
        if (!strcmp(a, "connect"))
                return report(connect_path(arg));
        if (!strcmp(a, "execve"))
                return report(execl("/bin/true", "true", (char *) NULL));
        if (!strcmp(a, "ptrace"))
                return report(ptrace(PTRACE_ATTACH, getppid(), NULL, NULL));
        if (!strcmp(a, "mount"))
                return report(mount("tmpfs", "/", "tmpfs", 0, NULL));
        if (!strcmp(a, "setuid0"))
                return report(setuid(0));
        if (!strcmp(a, "mmap-exec")) {
                p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                return report(p == MAP_FAILED ? -1 : 0);
        }
        if (!strcmp(a, "mprotect-exec")) {
                p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                return report(mprotect(p, 4096, PROT_READ | PROT_EXEC));
        }
        if (!strcmp(a, "fork"))
                return report(fork());
        if (!strcmp(a, "kill"))
                return report(kill(getppid(), SIGTERM));
        fprintf(stderr, "unknown action %s\n", a);
        return 2;
}

int main(int argc, char **argv) {
        SandboxParams p = { .address_space = 0 };
        SandboxReport rep;
        int status_fd;
        char buf[4096];
        ssize_t n;

        if (argc < 4)
                return 2;
        p.uid = (uid_t) atoi(argv[1]);
        p.gid = (gid_t) atoi(argv[2]);
        status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        p.keep_fds = &status_fd;
        p.n_keep_fds = 1;
        if (sandbox_enter(&p, &rep) < 0) {
                printf("sandbox failed\n");
                return 3;
        }
        if (!strcmp(argv[3], "status")) {
                n = pread(status_fd, buf, sizeof buf - 1, 0);
                if (n <= 0)
                        return 1;
                buf[n] = 0;
                printf("%snamespaces=%d empty_root=%d landlock=%d\n", buf, rep.namespaces, rep.empty_root, rep.landlock_abi);
                return 0;
        }
        fflush(stdout);
        return act(argv[3], argc > 4 ? argv[4] : "");
}
