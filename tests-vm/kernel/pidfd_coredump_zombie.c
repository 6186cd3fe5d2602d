/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel selftest for kernel-patches/linux-6.12 patch 18: PIDFD_GET_INFO answers
 * PIDFD_INFO_COREDUMP for tasks that have let go of their mm (zombies, a thread-group leader
 * that exited before its threads, following the dumpability its threads set), as 7.3 does. Run as root by tests-vm/kernel/selftests.sh in
 * its VM; prints TAP, exits 0 if every case passed, 1 otherwise, 4 (skip) without
 * PIDFD_GET_INFO. Touches only its own children.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pidfd.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4
#define N_CASES 6
#define NOBODY 65534
#define DETAIL_MAX 64     /* a TAP line's comment */
#define STAT_PATH_MAX 64  /* "/proc/PID/stat" */
#define STAT_READ_MAX 512 /* the start of /proc/PID/stat, past the state field */
#define SUID_DUMPABLE "/proc/sys/fs/suid_dumpable"
#define ZOMBIE_POLL_USEC 10000
#define ZOMBIE_POLL_TRIES 500 /* 5 s for an exited leader to show as a zombie */

static int failures;
static int case_no;

static void report(bool ok, const char *name, const char *detail)
{
        case_no++;
        printf("%s %d %s%s%s\n", ok ? "ok" : "not ok", case_no, name, detail ? " # " : "",
               detail ? detail : "");
        if (!ok)
                failures++;
}

static int pidfd_open(pid_t pid)
{
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

/* The coredump mask PIDFD_GET_INFO reports for @pidfd, or -errno. */
static int64_t coredump_mask(int pidfd)
{
        struct pidfd_info info = { .mask = PIDFD_INFO_COREDUMP };

        if (ioctl(pidfd, PIDFD_GET_INFO, &info) < 0)
                return -errno;
        if (!(info.mask & PIDFD_INFO_COREDUMP))
                return -ENODATA;
        return info.coredump_mask;
}

/*
 * A child that sets its dumpability, exits and stays a zombie; returns its pid. Dumpability 2
 * (SUID_DUMP_ROOT) cannot be set by prctl(): the child drops its uids instead, which sets the
 * dumpability to fs.suid_dumpable, set to 2 by the caller.
 */
static pid_t zombie(int dumpable)
{
        int pipefd[2];
        pid_t pid;
        char c;

        if (pipe(pipefd) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                if (dumpable == 2 ? setresuid(NOBODY, NOBODY, NOBODY) < 0 :
                                    prctl(PR_SET_DUMPABLE, dumpable) < 0)
                        _exit(2);
                _exit(0);
        }
        close(pipefd[1]);
        (void) read(pipefd[0], &c, 1); /* EOF once the child has exited */
        close(pipefd[0]);
        return pid;
}

static bool is_zombie(pid_t pid)
{
        siginfo_t si = { 0 };

        return waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == pid;
}

static void check_zombie(const char *name, int dumpable, uint32_t want)
{
        char detail[DETAIL_MAX];
        int64_t mask;
        pid_t pid;
        int pidfd;

        pid = zombie(dumpable);
        if (pid < 0 || !is_zombie(pid)) {
                report(false, name, "no zombie");
                return;
        }
        pidfd = pidfd_open(pid);
        mask = pidfd < 0 ? -errno : coredump_mask(pidfd);
        snprintf(detail, sizeof(detail), "coredump_mask %lld, want %u", (long long) mask, want);
        report(mask == want, name, detail);
        if (pidfd >= 0)
                close(pidfd);
        waitpid(pid, NULL, 0);
}

static int read_sysctl(const char *path)
{
        FILE *f = fopen(path, "re");
        int v = -1;

        if (f) {
                if (fscanf(f, "%d", &v) != 1)
                        v = -1;
                fclose(f);
        }
        return v;
}

static int write_sysctl(const char *path, int v)
{
        FILE *f = fopen(path, "we");
        int r;

        if (!f)
                return -1;
        r = fprintf(f, "%d\n", v) < 0 ? -1 : 0;
        return fclose(f) == 0 ? r : -1;
}

/* A zombie whose dumpability was SUID_DUMP_ROOT: fs.suid_dumpable=2 while it dropped its uids. */
static void check_zombie_root(void)
{
        int old = read_sysctl(SUID_DUMPABLE);

        if (old < 0 || write_sysctl(SUID_DUMPABLE, 2) < 0) {
                report(false, "zombie, root-dumpable", "cannot set " SUID_DUMPABLE);
                return;
        }
        check_zombie("zombie, root-dumpable", 2, PIDFD_COREDUMP_ROOT);
        if (write_sysctl(SUID_DUMPABLE, old) < 0)
                printf("# cannot restore %s to %d\n", SUID_DUMPABLE, old);
}

static int go_pipe[2], done_pipe[2];

/* Waits for the word, makes the process not dumpable, says so. */
static void *undump_thread(void *arg)
{
        char c;

        (void) arg;
        if (read(go_pipe[0], &c, 1) != 1 || prctl(PR_SET_DUMPABLE, 0) < 0)
                _exit(2);
        if (write(done_pipe[1], "d", 1) != 1)
                _exit(2);
        pause();
        return NULL;
}

/* Is @pid a zombie ('Z' in /proc/PID/stat) within ZOMBIE_POLL_TRIES polls? */
static bool wait_zombie_state(pid_t pid)
{
        char path[STAT_PATH_MAX], buf[STAT_READ_MAX], *p;
        int i;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        for (i = 0; i < ZOMBIE_POLL_TRIES; i++) {
                FILE *f = fopen(path, "re");
                size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

                if (f)
                        fclose(f);
                buf[n] = '\0';
                p = strrchr(buf, ')');
                if (p && p[1] == ' ' && p[2] == 'Z')
                        return true;
                usleep(ZOMBIE_POLL_USEC);
        }
        return false;
}

static void report_mask(const char *name, int pidfd, uint32_t want)
{
        char detail[DETAIL_MAX];
        int64_t mask = pidfd < 0 ? -EBADF : coredump_mask(pidfd);

        snprintf(detail, sizeof(detail), "coredump_mask %lld, want %u", (long long) mask, want);
        report(mask == want, name, detail);
}

/*
 * A thread-group leader that exits while its other thread runs keeps no mm: it is answered
 * from the thread's, also after the thread made the process not dumpable.
 */
static void check_exited_leader(void)
{
        pthread_t thread;
        pid_t pid;
        int pidfd = -1;
        char c;

        if (pipe(go_pipe) < 0 || pipe(done_pipe) < 0) {
                report(false, "exited leader, live thread", "pipe");
                return;
        }
        pid = fork();
        if (pid == 0) {
                if (pthread_create(&thread, NULL, undump_thread, NULL) != 0)
                        _exit(2);
                syscall(SYS_exit, 0); /* the leader alone */
        }
        if (pid > 0 && wait_zombie_state(pid))
                pidfd = pidfd_open(pid);
        report_mask("exited leader, live thread", pidfd, PIDFD_COREDUMP_USER);
        if (write(go_pipe[1], "g", 1) == 1 && read(done_pipe[0], &c, 1) == 1)
                report_mask("exited leader, thread made it not dumpable", pidfd, PIDFD_COREDUMP_SKIP);
        else
                report(false, "exited leader, thread made it not dumpable", "thread did not answer");
        if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
        if (pidfd >= 0)
                close(pidfd);
}

int main(void)
{
        int pidfd = pidfd_open(getpid());
        struct pidfd_info info = { .mask = PIDFD_INFO_COREDUMP };

        printf("TAP version 13\n1..%d\n", N_CASES);
        if (pidfd < 0 || ioctl(pidfd, PIDFD_GET_INFO, &info) < 0) {
                printf("# PIDFD_GET_INFO: %s\n", strerror(errno));
                return KSFT_SKIP;
        }
        report(coredump_mask(pidfd) == PIDFD_COREDUMP_USER, "live task", NULL);
        close(pidfd);
        check_zombie("zombie, dumpable", 1, PIDFD_COREDUMP_USER);
        check_zombie("zombie, not dumpable", 0, PIDFD_COREDUMP_SKIP);
        check_zombie_root();
        check_exited_leader();
        return failures ? KSFT_FAIL : KSFT_PASS;
}
