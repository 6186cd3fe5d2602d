/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker's seccomp allowlist, named after what it does: read a socket, write an already
 * open file, compress in memory, talk to its manager and to journald. The native architecture
 * only; anything not listed kills the process, except a few harmless probes of libc and the fcntl
 * commands it does not use, which get an error instead. */
#include <assert.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "sandbox.h"

#define CLONE_THREAD_FLAGS (CLONE_THREAD | CLONE_VM | CLONE_SIGHAND)
#define SECCOMP_PROG_MAX 4096 /* instructions: far more than the allowlist compiles to */
#define SECCOMP_OPTIMIZE_TREE 2 /* libseccomp's SCMP_FLTATR_CTL_OPTIMIZE level: a binary tree */

static const int sandbox_rlimits[] = SANDBOX_RLIMITS;

/* Plain calls, allowed whatever their arguments. */
static const int allowed[] = {
        /* stream the core, write the output, talk to the manager */
        SCMP_SYS(read), SCMP_SYS(readv), SCMP_SYS(pread64), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(pwrite64),
        SCMP_SYS(lseek), SCMP_SYS(ftruncate), SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(close),
        SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(shutdown),
        SCMP_SYS(recvmsg), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg), SCMP_SYS(sendto), SCMP_SYS(poll), SCMP_SYS(ppoll),
        /* the output's file system: storing stops before it goes below KeepFree= */
        SCMP_SYS(fstatfs),
        /* the journal: a datagram socket (filtered below), big entries through a memfd made ahead
         * (memfd_create is refused: a worker holds only the memfds it made before this filter,
         * bounded by their seals, and the spool the manager grants it) */
        SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt),
        /* memory (mmap and mprotect filtered below) */
        SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
        /* the process itself */
        SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction),
        SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
        SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
        SCMP_SYS(futex), SCMP_SYS(restart_syscall), SCMP_SYS(sched_yield), SCMP_SYS(getrandom),
        /* its own peak memory, reported with the result */
        SCMP_SYS(getrusage),
        /* zstd's worker threads (clone filtered below): what glibc's threads set up */
        SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
};

/* Probes libc makes on its own (a file to look at): an error, not a kill. */
static const int soft_denied[] = {
        SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(readlink),
        SCMP_SYS(uname), SCMP_SYS(sysinfo),
};

/* fcntl: only the commands the worker uses, sorted. Every other one fails with EPERM, above all
 * F_SETOWN(_EX), F_SETSIG, F_SETLEASE, F_NOTIFY and F_SETFL with O_ASYNC: with them the kernel
 * would send signals of the worker's choosing (SIGIO) to processes of its uid, which Landlock
 * scopes only from ABI 6. (ioctl, with FIOASYNC, FIOSETOWN and SIOCSPGRP, is not allowed at all.) */
static const struct {
        uint64_t cmd;
        bool no_async; /* only without O_ASYNC in the flags */
} fcntl_allowed[] = {
        { F_GETFD },               /* libc */
        { F_GETFL },               /* fd_set_nonblock() */
        { F_SETFL, true },         /* fd_set_nonblock() */
        { F_DUPFD_CLOEXEC },       /* libdwfl's copy of each module's descriptor */
        { F_ADD_SEALS },           /* the analysis and journal memfds */
};
#define FCNTL_DENY (SCMP_ACT_ERRNO(EPERM))

/* Denies the commands lo..hi (inclusive), as aligned blocks that one masked compare each matches
 * (a rule compares an argument once, and denials must not overlap the allowed values). */
static int fcntl_deny_range(scmp_filter_ctx ctx, uint64_t lo, uint64_t hi) {
        int r = 0;

        while (lo <= hi && r == 0) {
                uint64_t size = 1;

                while (lo % (size * 2) == 0 && lo + size * 2 - 1 <= hi)
                        size *= 2;
                r = seccomp_rule_add(ctx, FCNTL_DENY, SCMP_SYS(fcntl), 1, SCMP_A1_64(SCMP_CMP_MASKED_EQ, ~(size - 1), lo));
                lo += size;
        }
        return r;
}

static int add_fcntl(scmp_filter_ctx ctx) {
        uint64_t next = 0; /* the lowest command not ruled on yet */
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(fcntl_allowed) && r == 0; i++) {
                uint64_t cmd = fcntl_allowed[i].cmd;

                assert(cmd >= next);
                r = cmd > next ? fcntl_deny_range(ctx, next, cmd - 1) : 0;
                if (fcntl_allowed[i].no_async) {
                        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 2, SCMP_A1_64(SCMP_CMP_EQ, cmd),
                                                  SCMP_A2_64(SCMP_CMP_MASKED_EQ, O_ASYNC, 0));
                        r = r ?: seccomp_rule_add(ctx, FCNTL_DENY, SCMP_SYS(fcntl), 2, SCMP_A1_64(SCMP_CMP_EQ, cmd),
                                                  SCMP_A2_64(SCMP_CMP_MASKED_EQ, O_ASYNC, O_ASYNC));
                } else
                        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1, SCMP_A1_64(SCMP_CMP_EQ, cmd));
                next = cmd + 1;
        }
        /* every command above the last allowed one, and any with high bits set */
        return r ?: seccomp_rule_add(ctx, FCNTL_DENY, SCMP_SYS(fcntl), 1, SCMP_A1_64(SCMP_CMP_GE, next));
}

static int add_filtered(scmp_filter_ctx ctx) {
        int r = add_fcntl(ctx);

        /* no executable memory, ever */
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
        /* threads only, never a process (RLIMIT_NPROC bounds how many): clone with the thread
         * flags; clone3, whose flags a filter cannot see, answers ENOSYS (glibc falls back) */
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                  SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD_FLAGS, CLONE_THREAD_FLAGS));
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        /* its own limits, those the sandbox sets soft = hard, only (setrlimit() is prlimit64 on
         * itself): a worker that entered its sandbox before its job lowers them to the job's;
         * none can be raised (no CAP_SYS_RESOURCE) */
        for (size_t i = 0; i < ELEMENTSOF(sandbox_rlimits) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
                                     SCMP_A1(SCMP_CMP_EQ, (unsigned) sandbox_rlimits[i]));
        /* one kind of socket: a local datagram one, for journald */
        r = r ?: seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, ~(unsigned) (SOCK_CLOEXEC | SOCK_NONBLOCK), SOCK_DGRAM));
        return r;
}

static int build(scmp_filter_ctx ctx) {
        int r = 0;

        /* only the native ABI: a foreign architecture's syscall numbers kill */
        r = r ?: seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        /* the syscalls as a binary tree, not a list: the same verdicts, each in a few jumps. The
         * kernel runs the filter for every syscall number when it is installed (to cache the
         * calls it always allows), so every worker pays for the list's length (measured here:
         * 0.05 to 0.1 ms less per worker, a third to two thirds of the install) */
        r = r ?: seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, SECCOMP_OPTIMIZE_TREE);
        for (size_t i = 0; i < ELEMENTSOF(allowed) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
        for (size_t i = 0; i < ELEMENTSOF(soft_denied) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), soft_denied[i], 0);
        return r ?: add_filtered(ctx);
}

/* The compiled filter, made before the job: libseccomp's compilation (and its probing of the
 * kernel) is most of what installing it costs, and none of it depends on the job. */
static struct sock_fprog prog;

int sandbox_seccomp_prepare(void) {
        scmp_filter_ctx ctx;
        _cleanup_close_ int fd = -EBADF;
        struct sock_filter *f;
        struct stat st;
        int r;

        if (prog.filter)
                return 0;
        ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
        if (!ctx)
                return -ENOMEM;
        fd = memfd_create("seccomp-bpf", MFD_CLOEXEC);
        r = fd < 0 ? negative_errno() : build(ctx);
        r = r ?: seccomp_export_bpf(ctx, fd);
        seccomp_release(ctx);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size <= 0 || st.st_size % sizeof *f != 0 || st.st_size / sizeof *f > SECCOMP_PROG_MAX)
                return -EBADMSG;
        f = malloc(st.st_size);
        if (!f)
                return -ENOMEM;
        if (pread(fd, f, st.st_size, 0) != st.st_size) {
                free(f);
                return -EIO;
        }
        prog = (struct sock_fprog) { .len = (unsigned short) (st.st_size / sizeof *f), .filter = f };
        return 0;
}

int sandbox_seccomp(void) {
        int r = sandbox_seccomp_prepare();

        if (r < 0)
                return r;
        /* as seccomp_load() would: a filter needs no_new_privs (sandbox_enter set it already) */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                return negative_errno();
        return 0;
}
