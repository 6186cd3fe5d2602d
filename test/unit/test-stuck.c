/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stuck.h: the looks at a child done with its crash (a live child of the test's own: not in its
 * exit, so never stuck by the looks; stuck once "killed" long enough ago), and the count of stuck
 * processes per uid. Forks and kills only its own child. */
#include <signal.h>
#include <sys/wait.h>

#include "stuck.h"
#include "tests.h"
#include "time-util.h"

int main(void) {
        StuckCount s = { .uid = 1000 };
        ExitWatch x = {};
        uint64_t now;
        pid_t child = fork();

        if (child == 0) {
                pause();
                _exit(0);
        }
        CHECK(child > 0);
        usleep(20 * 1000); /* asleep in pause(), its memory its own */
        now = now_usec(CLOCK_MONOTONIC);
        CHECK(!exit_watch_look(&x, child, now, 0));
        CHECK(!exit_watch_look(&x, child, now + PROCESS_STUCK_AFTER_USEC, 0));
        CHECK_EQ(x.asleep_since, 0);
        /* killed long enough ago and not ended: stuck, its memory maybe held, for good */
        CHECK(!exit_watch_look(&x, child, now, now - PROCESS_KILLED_STUCK_USEC / 2));
        CHECK(exit_watch_look(&x, child, now, now - PROCESS_KILLED_STUCK_USEC));
        CHECK(x.stuck && !x.in_exit);
        CHECK(exit_watch_look(&x, child, now, 0));
        (void) kill(child, SIGKILL);
        (void) waitpid(child, NULL, 0);

        /* its own, and the uids with any (each once, up to the bound; nobody's not counted) */
        stuck_count_add(&s, 1000);
        stuck_count_add(&s, 1000);
        stuck_count_add(&s, 0);
        stuck_count_add(&s, UID_INVALID);
        CHECK_EQ(s.mine, 2);
        CHECK_EQ(s.n_uids, 2);
        for (uid_t u = 2000; u < 2000 + 2 * MODULES_STUCK_UIDS_MAX; u++)
                stuck_count_add(&s, u);
        CHECK_EQ(s.n_uids, MODULES_STUCK_UIDS_MAX);
        CHECK_EQ(s.mine, 2);
        TESTS_DONE();
}
