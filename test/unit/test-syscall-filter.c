/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's syscall filter against the real kernel: in a child that installed it, the refused
 * calls answer EPERM (called with arguments that make them fail harmlessly without the filter)
 * and what the design needs still runs. Forks; touches nothing outside the child. */
#include <errno.h>
#include <limits.h>
#include <linux/reboot.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syscall-filter.h"
#include "tests.h"

#define BAD_REBOOT_MAGIC 0x1234 /* not LINUX_REBOOT_MAGIC1: refused by the kernel with EINVAL */
#define NO_SUCH_PID INT_MAX /* above pid_max: ESRCH without the filter */

typedef long (*Call)(void);

/* The refused calls, with arguments that make each fail harmlessly (or do nothing) without the
 * filter. */
static long c_ptrace(void) { return ptrace(PTRACE_ATTACH, NO_SUCH_PID, NULL, NULL); }
static long c_open_by_handle(void) { return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long c_reboot(void) { return syscall(SYS_reboot, BAD_REBOOT_MAGIC, BAD_REBOOT_MAGIC, 0, NULL); }
static long c_keyctl(void) { return syscall(SYS_keyctl, 0, 0, 0, 0, 0); }
static long c_bpf(void) { return syscall(SYS_bpf, -1, NULL, 0); }
static long c_io_uring(void) { return syscall(SYS_io_uring_setup, 0, NULL); }
static long c_pidfd_getfd(void) { return syscall(SYS_pidfd_getfd, -1, -1, 0); }
static long c_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long c_chroot(void) { return syscall(SYS_chroot, "/nonexistent"); }
static long c_fsopen(void) { return syscall(SYS_fsopen, "nonexistent", 0); }
static long c_settimeofday(void) { return syscall(SYS_settimeofday, NULL, NULL); }
static const Call refused[] = { c_ptrace, c_open_by_handle, c_reboot, c_keyctl, c_bpf, c_io_uring, c_pidfd_getfd,
                                c_init_module, c_chroot, c_fsopen, c_settimeofday };

/* ... and what the workers and the forwarder do, which must answer as without the filter */
static long c_setns(void) { return syscall(SYS_setns, -1, 0); }
static long c_unshare(void) { return syscall(SYS_unshare, 0); }
static long c_pivot_root(void) { return syscall(SYS_pivot_root, "/nonexistent", "/nonexistent"); }
static long c_mount(void) { return syscall(SYS_mount, NULL, "/nonexistent", NULL, MS_REMOUNT, NULL); }
static const Call allowed[] = { c_setns, c_unshare, c_pivot_root, c_mount };

/* errno of the call, or 0 if it succeeded */
static int errno_of(Call c) {
        errno = 0;
        return c() < 0 ? errno : 0;
}

/* In the child: the failures, each errno before and after the filter compared. */
static int child_checks(void) {
        int before_refused[ELEMENTSOF(refused)], before_allowed[ELEMENTSOF(allowed)], failed = 0, r;

        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                before_refused[i] = errno_of(refused[i]);
        for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                before_allowed[i] = errno_of(allowed[i]);
        r = manager_syscall_filter();
        if (r < 0) {
                fprintf(stderr, "manager_syscall_filter: %d\n", r);
                return 1;
        }
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                int e = errno_of(refused[i]);
                /* (as a user the kernel may refuse with EPERM already: root runs this in CI) */
                if (e != EPERM || (before_refused[i] == EPERM && geteuid() == 0)) {
                        fprintf(stderr, "refused call %zu: errno %d (before the filter %d), expected EPERM\n", i, e,
                                before_refused[i]);
                        failed++;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(allowed); i++) {
                int e = errno_of(allowed[i]);
                if (e != before_allowed[i]) {
                        fprintf(stderr, "allowed call %zu: errno %d, %d before the filter\n", i, e, before_allowed[i]);
                        failed++;
                }
        }
        if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
                fprintf(stderr, "no_new_privs not set\n");
                failed++;
        }
        return failed;
}

static void test_filter(void) {
        int status;
        pid_t pid = fork();

        CHECK(pid >= 0);
        if (pid == 0)
                _exit(child_checks() == 0 ? 0 : 1);
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
        test_filter();
        TESTS_DONE();
}
