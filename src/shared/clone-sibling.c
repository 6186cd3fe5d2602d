/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clone_sibling(): a child of one's own parent. Acts on the calling process only. */
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clone-sibling.h"
#include "macro.h"

pid_t clone_sibling(void) {
        struct clone_args args = { .flags = CLONE_PARENT };
        long pid = syscall(SYS_clone3, &args, sizeof args);

        if (pid < 0 && errno == ENOSYS)
#if defined(__s390__) || defined(__CRIS__)
                pid = syscall(SYS_clone, 0, CLONE_PARENT | SIGCHLD, NULL, NULL, 0); /* stack first */
#else
                pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
#endif
        return pid < 0 ? (pid_t) negative_errno() : (pid_t) pid;
}
