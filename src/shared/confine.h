/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: confining a forked helper that reads bytes nobody trusts (a worker-written core being
 * decompressed, ELF files named by a user's journal entry). Acts on the calling process only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The confinement, set up in two steps so that the caller can do what needs the calls the filter
 * refuses in between (prctl(), getppid()):
 *   confine_drop(): when root, the bounding set emptied, then no supplementary group and uid and
 *     gid both set to id, proved irreversible (setuid(0) must fail); no capability is left.
 *     Not root (a user's coredumpctl): those are a user's already, and stay.
 *   confine_lock(): each of RLIMIT_NOFILE, RLIMIT_AS, RLIMIT_FSIZE and RLIMIT_NPROC set soft =
 *     hard to the spec's value (RLIM_INFINITY: left as it is), SIGXFSZ ignored, no_new_privs,
 *     then a seccomp allowlist: memory (no executable mapping), reading and writing descriptors
 *     already open, fstat of a descriptor, closing, the clock and exiting, plus spec->allowed; a
 *     few calls libc makes on its own to look at a file (open, stat and readlink by name, uname,
 *     sysinfo) answer EACCES; anything else, and any other architecture's calls, kill the
 *     process. */
typedef struct ConfineSpec {
        uid_t id;               /* uid and gid to become when root: nobody's (65534) */
        rlim_t nofile, as, fsize, nproc;
        const int *allowed;     /* further calls allowed with any arguments (libseccomp numbers) */
        size_t n_allowed;
} ConfineSpec;

#define CONFINE_NOBODY 65534

int confine_drop(const ConfineSpec *spec);
int confine_lock(const ConfineSpec *spec);
