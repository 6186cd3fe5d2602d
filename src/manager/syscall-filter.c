/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's own seccomp filter: a short list of refused calls, so that it holds without
 * systemd (tools/run-daemon.sh) as the unit's SystemCallFilter= does under it. Manager (root), at
 * start-up: acts on its own process only; the processes it starts inherit the filter. */
#include <errno.h>
#include <seccomp.h>
#include <sys/prctl.h>

#include "macro.h"
#include "syscall-filter.h"

#define FILTER_OPTIMIZE_TREE 2 /* libseccomp's SCMP_FLTATR_CTL_OPTIMIZE level: a binary tree */

/* Grouped as systemd's SystemCallFilter= sets name them; none of them is made by coredumpd, its
 * collectors, workers, zygote or forwarder (checked by test-syscall-filter and the whole suite). */
static const int refused[] = {
        /* @clock */
        SCMP_SYS(adjtimex), SCMP_SYS(clock_adjtime), SCMP_SYS(clock_settime), SCMP_SYS(settimeofday),
        /* @debug, and taking another process's descriptors */
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(perf_event_open),
        SCMP_SYS(pidfd_getfd), SCMP_SYS(lookup_dcookie),
        /* @module */
        SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
        /* @raw-io */
        SCMP_SYS(ioperm), SCMP_SYS(iopl),
        /* @reboot, @swap */
        SCMP_SYS(reboot), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(swapon), SCMP_SYS(swapoff),
        /* @cpu-emulation */
        SCMP_SYS(modify_ldt),
        /* the kernel keyring, bpf, userfaultfd, io_uring: kernel interfaces nothing here uses */
        SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(keyctl), SCMP_SYS(bpf), SCMP_SYS(userfaultfd),
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
        /* files by handle: with CAP_DAC_READ_SEARCH, any file of a mounted file system */
        SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at),
        /* accounting, quotas, the kernel log */
        SCMP_SYS(acct), SCMP_SYS(quotactl), SCMP_SYS(syslog),
        /* chroot and the new mount API (the workers' empty root uses mount and pivot_root only) */
        SCMP_SYS(chroot), SCMP_SYS(fsopen), SCMP_SYS(fsconfig), SCMP_SYS(fsmount), SCMP_SYS(fspick),
        SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(mount_setattr),
        /* the host's names */
        SCMP_SYS(sethostname), SCMP_SYS(setdomainname),
};

static void release(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

int manager_syscall_filter(void) {
        _cleanup_(release) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        int r = 0;

        if (!ctx)
                return -ENOMEM;
        /* only the native ABI (SystemCallArchitectures=native): another architecture's numbers are
         * refused as a whole */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
        r = r ?: seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, FILTER_OPTIMIZE_TREE);
        for (size_t i = 0; i < ELEMENTSOF(refused) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
        if (r < 0)
                return r;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        return seccomp_load(ctx);
}
