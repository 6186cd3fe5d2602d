/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <grp.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "proto.h"
#include "sandbox.h"

/* The worker holds stdin/out/err, the control socket, the three fds of its one job, a memfd
 * for Storage=journal and the journal socket, plus what libc may open. */
#define WORKER_NOFILE_MAX 16

static int drop_bounding_set(void) {
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return negative_errno();
        return 0;
}

static int drop_ids(uid_t uid, gid_t gid) {
        uid_t ru, eu, su;

        if (setgroups(0, NULL) < 0)
                return negative_errno();
        if (setresgid(gid, gid, gid) < 0)
                return negative_errno();
        if (setresuid(uid, uid, uid) < 0)
                return negative_errno();
        /* Prove it: the old ids must be gone for good. */
        if (uid != 0 && (setresuid(0, 0, 0) == 0 || setuid(0) == 0))
                return -EPERM;
        if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid)
                return -EPERM;
        return 0;
}

static int drop_caps(void) {
        cap_t caps = cap_init(); /* all sets empty */
        int r = 0;

        if (!caps)
                return -ENOMEM;
        if (cap_set_proc(caps) < 0)
                r = negative_errno();
        cap_free(caps);
        if (r == 0 && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                r = negative_errno();
        return r;
}

static int set_rlimits(void) {
        static const struct {
                int resource;
                rlim_t value;
        } limits[] = {
                { RLIMIT_CORE, 0 },
                { RLIMIT_NOFILE, WORKER_NOFILE_MAX },
                { RLIMIT_NPROC, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
                struct rlimit rl = { limits[i].value, limits[i].value };
                if (setrlimit(limits[i].resource, &rl) < 0)
                        return negative_errno();
        }
        return 0;
}

int sandbox_enter(uid_t uid, gid_t gid) {
        int r;

        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return log_error_errno(negative_errno(), "PR_SET_DUMPABLE: %m");
        r = drop_bounding_set();
        if (r < 0)
                return log_error_errno(r, "Failed to drop the capability bounding set: %m");
        r = drop_ids(uid, gid);
        if (r < 0)
                return log_error_errno(r, "Failed to change to uid %u gid %u: %m", (unsigned) uid, (unsigned) gid);
        r = drop_caps();
        if (r < 0)
                return log_error_errno(r, "Failed to clear capabilities: %m");
        r = set_rlimits();
        if (r < 0)
                return log_error_errno(r, "Failed to set resource limits: %m");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return log_error_errno(negative_errno(), "PR_SET_NO_NEW_PRIVS: %m");
        /* Changing credentials reset it to fs.suid_dumpable: set it again. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return log_error_errno(negative_errno(), "PR_SET_DUMPABLE: %m");
        return 0;
}
