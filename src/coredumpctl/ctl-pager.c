/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pipes stdout through $SYSTEMD_PAGER, $PAGER, less or more when it is a terminal: forks and
 * execs the pager as the invoking user; touches nothing else. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-pager.h"
#include "log.h"

static pid_t pager_pid;

static const char *pager_command(void) {
        const char *p = getenv("SYSTEMD_PAGER");

        if (!p)
                p = getenv("PAGER");
        if (p && (p[0] == 0 || strcmp(p, "cat") == 0))
                return NULL;
        return p;
}

static _noreturn_ void pager_exec(int fd, const char *cmd) {
        if (dup2(fd, STDIN_FILENO) < 0)
                _exit(EXIT_FAILURE);
        if (fd != STDIN_FILENO)
                close(fd);
        /* quit at the end of a short output, keep colours, no terminal init noise */
        setenv("LESS", getenv("LESS") ?: "FRSXMK", 0);
        if (cmd)
                execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
        else {
                execlp("less", "less", (char *) NULL);
                execlp("more", "more", (char *) NULL);
        }
        /* no pager at all: copy through */
        execlp("cat", "cat", (char *) NULL);
        _exit(EXIT_FAILURE);
}

void pager_open(const CtlArgs *a) {
        const char *cmd = pager_command();
        int fd[2];

        if (pager_pid > 0 || !a->pager || !isatty(STDOUT_FILENO) || (getenv("PAGER") && !cmd) ||
            (getenv("SYSTEMD_PAGER") && !cmd))
                return;
        if (pipe2(fd, O_CLOEXEC) < 0)
                return (void) log_debug_errno(negative_errno(), "No pager, pipe failed: %m");
        fflush(stdout);
        pager_pid = fork();
        if (pager_pid < 0) {
                close(fd[0]);
                close(fd[1]);
                pager_pid = 0;
                return;
        }
        if (pager_pid == 0) {
                close(fd[1]);
                pager_exec(fd[0], cmd);
        }
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0)
                log_debug_errno(negative_errno(), "Failed to redirect to the pager: %m");
        close(fd[1]);
        /* the user may quit the pager before the end: stop writing quietly */
        signal(SIGPIPE, SIG_DFL);
}

void pager_close(void) {
        if (pager_pid <= 0)
                return;
        fflush(stdout);
        close(STDOUT_FILENO);
        (void) waitpid(pager_pid, NULL, 0);
        pager_pid = 0;
}
