/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker's sandbox (namespaces, credentials, rlimits, Landlock, seccomp), entered
 * before a byte of the crash is read. Worker: acts on its own process only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The worker's address space without an inline core; Storage=journal adds JournalSizeMax. */
#define WORKER_AS_BASE (UINT64_C(512) << 20)
#define SANDBOX_KEEP_FDS_MAX (8 + 128) /* the job's descriptors and the module files */
#define SANDBOX_NOFILE_BASE 16U
/* The limits a worker sets, each soft = hard: sandbox_enter()'s, and the job's RLIMIT_FSIZE. The
 * seccomp filter lets it set these on itself, and no other. */
#define SANDBOX_RLIMITS { RLIMIT_CORE, RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_AS, RLIMIT_FSIZE }
/* RLIMIT_NOFILE for n module files: libdwfl holds a copy of each module's descriptor */
#define SANDBOX_NOFILE(n) (SANDBOX_NOFILE_BASE + 2U * (unsigned) (n))

typedef struct SandboxParams {
        uid_t uid; /* the user to become: the crashing user, or the worker user */
        gid_t gid;
        const int *keep_fds; /* besides 0, 1, 2 */
        size_t n_keep_fds;
        uint64_t address_space; /* RLIMIT_AS; 0 = leave it */
        unsigned nofile;        /* RLIMIT_NOFILE; 0 = SANDBOX_NOFILE_BASE */
        unsigned threads;       /* threads it may start (zstd's workers): RLIMIT_NPROC is one more */
} SandboxParams;

/* What sandbox_enter() managed, for the log and the tests. */
typedef struct SandboxReport {
        bool namespaces;
        bool empty_root;
        int landlock_abi; /* 0: none */
} SandboxReport;

/* Ahead of the job (none of it depends on the job, and it is the slow part): a mount namespace
 * whose whole tree is an empty read-only tmpfs holding only the journal socket (made as the real
 * root: that mount namespace belongs to the initial user namespace, so from the user namespace
 * made after it nothing in it can be mounted, unmounted or remounted), then the new user and IPC
 * namespaces (and a network namespace where Landlock cannot scope abstract sockets), and with
 * them the capability bounding set emptied. Without CAP_SYS_ADMIN for the first step, the user
 * namespace gets a mount namespace of its own and sandbox_enter() makes the empty root there once
 * its user is mapped. Called before the worker says READY; the user the namespace maps is set in
 * sandbox_enter(). Returns 0, -EOPNOTSUPP if the kernel refuses the user namespace
 * (sandbox_enter goes on without; the empty root stays if it was made), or another error (the
 * worker must not take a job). */
int sandbox_prepare(bool helper);

/* Makes the worker hold nothing worth stealing and able to do nothing but its job, in this
 * order (each step still has the privilege it needs; seccomp last, so that its allowlist need
 * not cover the setup):
 *   1. the namespaces and the empty root of sandbox_prepare() (made now if it was not called),
 *      mapping the target user
 *   2. every fd but 0-2 and keep_fds closed (up to SANDBOX_KEEP_FDS_MAX)
 *   3. the empty root, if step 1 could not make it before the user namespace
 *   4. the capability bounding set emptied (already, where step 1's namespaces were made)
 *   5. setgroups/setresgid/setresuid to the target, proved irreversible; non-dumpable again
 *      after every id change, checked (an id change resets it to fs.suid_dumpable), the saved
 *      uid kept root until then; the parent-death signal, which the id change cleared, set again
 *   6. every capability set cleared
 *   7. rlimits: no processes, few files, no core, bounded address space
 *   8. no_new_privs, not dumpable
 *   9. Landlock: no file system access at all, no signals out (where the kernel has it)
 *  10. the seccomp allowlist (kill the process on anything else)
 * Returns 0 or negative errno; on failure the worker must exit without touching the crash. */
int sandbox_enter(const SandboxParams *p, SandboxReport *ret);
/* For a worker that entered its sandbox before its job (as the user mapped ahead, with the most
 * a job may need): the job's own limits, lower or equal (step 7 again; setting a limit higher
 * than before fails, the hard limits being the soft ones and no capability left to raise them). */
int sandbox_narrow(const SandboxParams *p);
/* Steps 9 and 10 alone, for the tests of the filter. */
int sandbox_landlock(void);
/* Whether Landlock can keep the worker from abstract unix sockets outside its domain (ABI 6,
 * Linux 6.12): then the worker needs no network namespace of its own, the slowest part of the
 * sandbox (with seccomp allowing AF_UNIX datagram sockets only and an empty root, a namespace
 * would add nothing). */
bool sandbox_landlock_scopes_sockets(void);
int sandbox_seccomp(void);
/* Compiles the seccomp filter ahead of sandbox_seccomp() (before the job). */
int sandbox_seccomp_prepare(void);
