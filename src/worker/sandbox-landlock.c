/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock: the worker may not open, create or change any file, and may not signal or reach
 * abstract sockets outside its domain. Its job needs none of that: every file it writes was
 * opened for it before (the output, the memfds), and the journal socket is a connect by path,
 * which Landlock does not restrict on these kernels. Constants from include/uapi/linux/landlock.h
 * (distribution headers lag). */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "macro.h"
#include "sandbox.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif
#define LANDLOCK_CREATE_RULESET_VERSION_ (1U << 0)
#define LANDLOCK_ABI_SCOPED 6 /* scoped: abstract unix sockets and signals */

struct landlock_ruleset_attr_ {
        uint64_t handled_access_fs;
        uint64_t handled_access_net; /* ABI 4 */
        uint64_t scoped;             /* ABI 6 */
};

/* Every file system right the ABI version knows: all handled, none granted. */
static uint64_t fs_rights(int abi) {
        uint64_t r = (UINT64_C(1) << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
        if (abi >= 2)
                r |= UINT64_C(1) << 13; /* REFER */
        if (abi >= 3)
                r |= UINT64_C(1) << 14; /* TRUNCATE */
        if (abi >= 5)
                r |= UINT64_C(1) << 15; /* IOCTL_DEV */
        return r;
}

static int landlock_abi(void) {
        int abi = (int) syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION_);

        return abi < 0 ? negative_errno() : abi;
}

bool sandbox_landlock_scopes_sockets(void) {
        return landlock_abi() >= LANDLOCK_ABI_SCOPED;
}

int sandbox_landlock(void) {
        struct landlock_ruleset_attr_ attr = {};
        size_t size = sizeof attr.handled_access_fs;
        int abi, fd;

        abi = landlock_abi();
        if (abi < 0)
                /* not in this kernel, or filtered by a container manager's seccomp (systemd-nspawn
                 * answers EPERM for calls it does not know): the rest of the sandbox still holds */
                return abi == -ENOSYS || abi == -EOPNOTSUPP || abi == -EPERM ? 0 : abi;
        attr.handled_access_fs = fs_rights(abi);
        if (abi >= 4) {
                attr.handled_access_net = (UINT64_C(1) << 2) - 1; /* BIND_TCP, CONNECT_TCP */
                size = offsetof(struct landlock_ruleset_attr_, scoped);
        }
        if (abi >= LANDLOCK_ABI_SCOPED) {
                attr.scoped = (UINT64_C(1) << 2) - 1; /* ABSTRACT_UNIX_SOCKET, SIGNAL */
                size = sizeof attr;
        }
        fd = (int) syscall(SYS_landlock_create_ruleset, &attr, size, 0);
        if (fd < 0)
                return negative_errno();
        if (syscall(SYS_landlock_restrict_self, fd, 0) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        safe_close(fd);
        return abi;
}
