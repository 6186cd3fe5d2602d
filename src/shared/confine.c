/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Confines a forked helper that reads untrusted bytes: no capability, nobody's ids when it was
 * root, bounded limits, no_new_privs and a short seccomp allowlist, in the order the worker's
 * sandbox takes (docs: ids, capabilities, limits, no_new_privs, the filter last). Acts on the
 * calling process only. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "confine.h"
#include "macro.h"

#define CONFINE_OPTIMIZE_TREE 2 /* libseccomp's SCMP_FLTATR_CTL_OPTIMIZE level: a binary tree */

/* What every confined helper may do, whatever its arguments. */
static const int always[] = {
        SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(readv), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(lseek),
        SCMP_SYS(close), SCMP_SYS(fstat),
        SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
        SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
        SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
        SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(futex),
        SCMP_SYS(getrandom), SCMP_SYS(restart_syscall),
};

#ifdef SANITIZED
/* ... and what the sanitizers' runtime does at exit (its reports, its alternate signal stack) */
static const int sanitizer[] = {
        SCMP_SYS(sigaltstack), SCMP_SYS(rt_sigaction), SCMP_SYS(sched_yield), SCMP_SYS(prlimit64),
        SCMP_SYS(getrlimit), SCMP_SYS(prctl), SCMP_SYS(getppid),
};
#endif

/* Calls libc makes by itself to look at a file by name (realpath, qsort's memory probe): an
 * error, not a kill. */
static const int soft_denied[] = {
        SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(access), SCMP_SYS(faccessat),
        SCMP_SYS(faccessat2), SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(stat), SCMP_SYS(lstat),
        SCMP_SYS(uname), SCMP_SYS(sysinfo),
};

int confine_drop(const ConfineSpec *spec) {
        if (geteuid() != 0)
                return 0;
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return negative_errno();
        if (setgroups(0, NULL) < 0 || setresgid(spec->id, spec->id, spec->id) < 0 ||
            setresuid(spec->id, spec->id, spec->id) < 0)
                return negative_errno();
        /* proved: root cannot be had back */
        if (setresuid(0, 0, 0) >= 0 || setresgid(0, 0, 0) >= 0)
                return -EPERM;
        return 0;
}

static int set_limit(int resource, rlim_t value) {
        struct rlimit rl = { value, value };

        if (value == RLIM_INFINITY)
                return 0;
        return setrlimit(resource, &rl) < 0 ? negative_errno() : 0;
}

static int build(scmp_filter_ctx ctx, const ConfineSpec *spec) {
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

        r = r ?: seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, CONFINE_OPTIMIZE_TREE);
        for (size_t i = 0; i < ELEMENTSOF(always) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, always[i], 0);
#ifdef SANITIZED
        for (size_t i = 0; i < ELEMENTSOF(sanitizer) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, sanitizer[i], 0);
#endif
        for (size_t i = 0; i < spec->n_allowed && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, spec->allowed[i], 0);
        for (size_t i = 0; i < ELEMENTSOF(soft_denied) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), soft_denied[i], 0);
        /* fstat() of a descriptor: newfstatat with AT_EMPTY_PATH (which a name given with it would
         * still be looked up by: nobody's view of the file system, no more); without it, an error */
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
                                  SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(newfstatat), 1,
                                  SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0));
        /* memory, never executable */
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
        /* a descriptor's flags, read only (libelf checks the one it is given) */
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1, SCMP_A1(SCMP_CMP_EQ, F_GETFD));
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1, SCMP_A1(SCMP_CMP_EQ, F_GETFL));
        return r;
}

static void release(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

int confine_lock(const ConfineSpec *spec) {
        _cleanup_(release) scmp_filter_ctx ctx = NULL;
        int r;

        r = set_limit(RLIMIT_NOFILE, spec->nofile);
        r = r ?: set_limit(RLIMIT_AS, spec->as);
        r = r ?: set_limit(RLIMIT_FSIZE, spec->fsize);
        r = r ?: set_limit(RLIMIT_NPROC, spec->nproc);
        if (r < 0)
                return r;
        /* a write past RLIMIT_FSIZE fails (EFBIG) rather than kill: its log lines too, where stderr
         * is a file */
        if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
        if (!ctx)
                return -ENOMEM;
        r = build(ctx, spec);
        return r < 0 ? r : seccomp_load(ctx);
}
