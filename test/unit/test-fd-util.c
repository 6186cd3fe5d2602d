/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* close_all_fds_except(): any number of descriptors kept, in any order, the rest closed (the
 * worker keeps one per mapped file of the crashed process). Runs in a child: it closes fds. */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "tests.h"

#define OPENED 300 /* descriptors opened in the child */
#define KEPT 150   /* every other one kept, listed in reverse */

static int child(void) {
        int fds[OPENED], keep[KEPT];
        size_t n = 0;

        for (size_t i = 0; i < OPENED; i++)
                if ((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
                        return 2;
        for (size_t i = OPENED; i-- > 0;)
                if (i % 2 == 0 && n < KEPT)
                        keep[n++] = fds[i];
        if (close_all_fds_except(keep, n) < 0)
                return 3;
        for (size_t i = 0; i < OPENED; i++) {
                bool open_now = fcntl(fds[i], F_GETFD) >= 0;
                if (open_now != (i % 2 == 0))
                        return 4;
        }
        /* nothing kept: everything above stderr goes */
        if (close_all_fds_except(NULL, 0) < 0 || fcntl(fds[0], F_GETFD) >= 0)
                return 5;
        return fcntl(STDERR_FILENO, F_GETFD) >= 0 ? 0 : 6;
}

int main(void) {
        pid_t pid = fork();
        int status = 0;

        if (pid == 0)
                _exit(child());
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
        TESTS_DONE();
}
