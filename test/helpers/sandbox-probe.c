/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper: enters the worker's real sandbox_enter(), then tries one thing.
 *   sandbox-probe UID GID ACTION
 * Prints "errno=N" if the call failed (exit 0), "allowed" if it worked (exit 1); a call the
 * filter forbids kills the process with SIGSYS. ACTION "status" prints /proc/self/status lines
 * read before the filter (via a descriptor kept open). The fcntl and ioctl actions act on stdout.
 *   sandbox-probe UID GID ptrace-race PID SECONDS
 * enters no sandbox: it is the attacker of a worker. It becomes UID and GID and tries
 * PTRACE_SEIZE on PID as fast as it can until PID is gone or SECONDS pass; prints "ready", then
 * "attached after N tries" (exit 1) or "refused N times" (exit 0). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox.h"

/* what the probe's sandbox allows, as a worker's for two zstd threads (none where the sanitizer
 * runtime's thread interceptors would be killed by the filter, as a worker gets none there) */
#ifdef SANITIZED
#define PROBE_THREADS 0
#else
#define PROBE_THREADS 2
#endif

static void *idle_thread(void *arg) {
        (void) poll(NULL, 0, 200); /* alive while the next ones start (poll: the worker's own wait) */
        return NULL;
}

/* Starts n threads: "started N" if all started, else "errno=E after K". */
static int start_threads(int n) {
        pthread_t t[16];
        int k, r = 0;

        for (k = 0; k < n && k < 16; k++)
                if ((r = pthread_create(&t[k], NULL, idle_thread, NULL)) != 0)
                        break;
        for (int i = 0; i < k; i++)
                pthread_join(t[i], NULL);
        if (r != 0)
                printf("errno=%d after %d\n", r, k);
        else
                printf("started %d\n", k);
        return 0;
}

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

#define FCNTL_SCAN_MAX 4096 /* past every command the kernel knows */

/* Every fcntl command up to FCNTL_SCAN_MAX, and one with high bits set: prints those not refused
 * with EPERM ("fcntl-ok=N,N,..."). */
static int fcntl_scan(void) {
        printf("fcntl-ok=");
        for (long cmd = 0; cmd <= FCNTL_SCAN_MAX; cmd++)
                if (syscall(SYS_fcntl, STDOUT_FILENO, cmd, 0L) >= 0 || errno != EPERM)
                        printf("%ld,", cmd);
        if (syscall(SYS_fcntl, STDOUT_FILENO, (1L << 32) | F_GETFL, 0L) >= 0 || errno != EPERM)
                printf("high-bits");
        printf("\n");
        return 0;
}

/* fcntl and ioctl on stdout: the ones that make the kernel signal someone (SIGIO), and the ones
 * the worker needs */
static int act_fd(const char *a) {
        struct f_owner_ex owner = { F_OWNER_PID, getpid() };
        int on = 1, pid = getpid();

        if (!strcmp(a, "fcntl-setown"))
                return report(fcntl(STDOUT_FILENO, F_SETOWN, getpid()));
        if (!strcmp(a, "fcntl-setown-ex"))
                return report(fcntl(STDOUT_FILENO, F_SETOWN_EX, &owner));
        if (!strcmp(a, "fcntl-setsig"))
                return report(fcntl(STDOUT_FILENO, F_SETSIG, SIGKILL));
        if (!strcmp(a, "fcntl-async"))
                return report(fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_ASYNC));
        if (!strcmp(a, "fcntl-setlease"))
                return report(fcntl(STDOUT_FILENO, F_SETLEASE, F_RDLCK));
        if (!strcmp(a, "fcntl-getfl"))
                return report(fcntl(STDOUT_FILENO, F_GETFL));
        if (!strcmp(a, "fcntl-setfl"))
                return report(fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK));
        if (!strcmp(a, "fcntl-dupfd-cloexec"))
                return report(fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3));
        if (!strcmp(a, "fcntl-scan"))
                return fcntl_scan();
        if (!strcmp(a, "ioctl-fioasync"))
                return report(ioctl(STDOUT_FILENO, FIOASYNC, &on));
        if (!strcmp(a, "ioctl-fiosetown"))
                return report(ioctl(STDOUT_FILENO, FIOSETOWN, &pid));
        return -1;
}

/* The probe's parent, taken before the filter, which refuses getppid(): a call aimed at it must
 * be refused for what it is, not for the getppid() in its arguments. */
static pid_t parent;

static int act(const char *a, const char *arg) {
        void *p;
        int r;

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
                return report(ptrace(PTRACE_ATTACH, parent, NULL, NULL));
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
        if (!strcmp(a, "memfd")) /* more memory than its bounded memfds: refused */
                return report(memfd_create("more", MFD_CLOEXEC));
        if (!strcmp(a, "threads"))
                return start_threads(atoi(arg));
        if (!strcmp(a, "threads-allowed")) {
                printf("%d\n", PROBE_THREADS);
                return 0;
        }
        if (!strcmp(a, "clone3")) /* its flags are out of a filter's sight: refused whatever they are */
                return report(syscall(SYS_clone3, NULL, 0));
        if (!strcmp(a, "clone-vm")) /* shared memory without being a thread: a process all the same */
                return report(syscall(SYS_clone, CLONE_VM | SIGCHLD, NULL, NULL, NULL, 0));
        if (!strcmp(a, "kill"))
                return report(kill(parent, SIGTERM));
        if (!strcmp(a, "rlimit-lower") || !strcmp(a, "rlimit-raise")) {
                struct rlimit rl;
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return report(-1);
                rl.rlim_cur = rl.rlim_max = rl.rlim_max + (!strcmp(a, "rlimit-raise") ? 1 : -1);
                return report(setrlimit(RLIMIT_NOFILE, &rl));
        }
        if (!strcmp(a, "rlimit-stack")) /* one the sandbox leaves soft < hard: not to be touched */
                return report(syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &(struct rlimit) {}));
        if (!strcmp(a, "prlimit-other")) /* another process's limits: not even to read them */
                return report(syscall(SYS_prlimit64, parent, RLIMIT_NOFILE, NULL, &(struct rlimit) {}));
        if (!strcmp(a, "prlimit-self-pid")) /* itself, by number: only pid 0 is allowed */
                return report(syscall(SYS_prlimit64, getpid(), RLIMIT_NOFILE, NULL, &(struct rlimit) {}));
        r = act_fd(a);
        if (r >= 0)
                return r;
        fprintf(stderr, "unknown action %s\n", a);
        return 2;
}

/* The user whose crash a worker takes, trying to catch it dumpable while it becomes them. */
static int ptrace_race(uid_t uid, gid_t gid, pid_t pid, int seconds) {
        struct timespec t0, now;
        unsigned long tries = 0;

        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                return 3;
        printf("ready\n");
        fflush(stdout);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
                for (int i = 0; i < 1000; i++, tries++) {
                        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0) {
                                printf("attached after %lu tries\n", tries); /* detached when we exit */
                                return 1;
                        }
                        if (errno == ESRCH) {
                                printf("refused %lu times\n", tries);
                                return 0;
                        }
                }
        while (clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec - t0.tv_sec < seconds);
        printf("refused %lu times (timeout)\n", tries);
        return 0;
}

int main(int argc, char **argv) {
        SandboxParams p = { .address_space = 0, .threads = PROBE_THREADS };
        SandboxReport rep;
        int status_fd;
        char buf[4096];
        ssize_t n;

        if (argc < 4)
                return 2;
        p.uid = (uid_t) atoi(argv[1]);
        p.gid = (gid_t) atoi(argv[2]);
        if (!strcmp(argv[3], "ptrace-race"))
                return argc == 6 ? ptrace_race(p.uid, p.gid, (pid_t) atoi(argv[4]), atoi(argv[5])) : 2;
        parent = getppid();
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
