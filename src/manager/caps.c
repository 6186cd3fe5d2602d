/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Drops coredumpd's capabilities to the six it needs (caps.h), in every set and the bounding set,
 * and CAP_SYS_ADMIN, kept permitted (not effective) until the forward launcher is started.
 * Manager (root), at start-up: acts only on its own process's capabilities. */
#include <stdbool.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "caps.h"
#include "macro.h"

static const cap_value_t keep[] = { CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_KILL, CAP_SETUID, CAP_SETGID, CAP_SETPCAP };
static const cap_value_t keep_permitted[] = { CAP_SYS_ADMIN }; /* for coredump-forward only (caps.h) */

int manager_drop_capabilities(void) {
        cap_t caps;
        int r = 0;

        for (int c = 0; c <= CAP_LAST_CAP; c++) {
                bool wanted = ((MANAGER_CAPS_MASK | MANAGER_CAPS_PERMITTED_ONLY) >> c) & 1;
                if (!wanted && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return negative_errno();
        }
        caps = cap_init();
        if (!caps)
                return -ENOMEM;
        if (cap_set_flag(caps, CAP_PERMITTED, ELEMENTSOF(keep), keep, CAP_SET) < 0 ||
            cap_set_flag(caps, CAP_PERMITTED, ELEMENTSOF(keep_permitted), keep_permitted, CAP_SET) < 0 ||
            cap_set_flag(caps, CAP_EFFECTIVE, ELEMENTSOF(keep), keep, CAP_SET) < 0 || cap_set_proc(caps) < 0)
                r = negative_errno();
        cap_free(caps);
        if (r == 0 && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                r = negative_errno();
        return r;
}

int manager_drop_forward_capability(void) {
        cap_t caps;
        int r = 0;

        if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0 && errno != EINVAL)
                return negative_errno();
        caps = cap_init();
        if (!caps)
                return -ENOMEM;
        if (cap_set_flag(caps, CAP_PERMITTED, ELEMENTSOF(keep), keep, CAP_SET) < 0 ||
            cap_set_flag(caps, CAP_EFFECTIVE, ELEMENTSOF(keep), keep, CAP_SET) < 0 || cap_set_proc(caps) < 0)
                r = negative_errno();
        cap_free(caps);
        return r;
}
