/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Processes done with a crash found stuck in the kernel, and their count per uid (stuck.h).
 * Manager: reads only the /proc/PID/stat of children it has not reaped. */
#include <assert.h>

#include "macro.h"
#include "pidfd-util.h"
#include "stuck.h"

bool exit_watch_look(ExitWatch *x, pid_t pid, uint64_t now, uint64_t killed_usec) {
        assert(x);
        if (x->stuck)
                return true;
        if (killed_usec > 0 && now - killed_usec >= PROCESS_KILLED_STUCK_USEC) {
                x->in_exit = child_asleep_in_exit(pid);
                return (x->stuck = true);
        }
        if (!child_asleep_in_exit(pid)) {
                x->asleep_since = 0;
                return false;
        }
        if (x->asleep_since == 0) {
                x->asleep_since = now;
                return false;
        }
        x->stuck = x->in_exit = now - x->asleep_since >= PROCESS_STUCK_AFTER_USEC;
        return x->stuck;
}

void stuck_count_add(StuckCount *s, uid_t uid) {
        assert(s);
        if (uid == UID_INVALID)
                return;
        s->mine += uid == s->uid;
        for (unsigned i = 0; i < s->n_uids; i++)
                if (s->uids[i] == uid)
                        return;
        if (s->n_uids < ELEMENTSOF(s->uids))
                s->uids[s->n_uids++] = uid;
}
