/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the manager's own seccomp filter, installed once at start-up and inherited by every
 * process it starts. Acts on its own process only. */
#pragma once

/* Refuses (EPERM) the system calls no process of coredump-socket makes and that a compromised
 * manager, collector or forwarder would use against the machine: the clock, ptrace and the other
 * debugging calls (pidfd_getfd, process_vm_*), kernel modules, raw I/O, reboot and kexec, swap,
 * the kernel keyring, bpf, userfaultfd, io_uring, open_by_handle_at (with CAP_DAC_READ_SEARCH it
 * opens any file of a file system by its handle), accounting and quotas, the kernel log, chroot
 * and the new mount API, the host name; and the calls of other architectures. What the design
 * needs stays allowed: the workers' mount, pivot_root and unshare, the forwarder's setns. Sets
 * no_new_privs first (the unit sets NoNewPrivileges=yes too). It narrows what a compromised
 * manager can call, not what it can reach: with CAP_SYS_PTRACE an open and a write of
 * /proc/PID/mem still change another process's memory (caps.h). */
int manager_syscall_filter(void);
