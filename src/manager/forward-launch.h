/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredumpd's side of the forward launcher (src/forward/launcher.c), the process that
 * keeps CAP_SYS_ADMIN for coredump-forward so that coredumpd does not. Manager (root): starts
 * and talks to that one process. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct Manager Manager;

/* How long coredumpd waits for the launcher to say it started a forwarder (a fork and an exec). */
#define LAUNCH_REPLY_TIMEOUT_MSEC 5000

/* Starts the launcher from coredump-forward (found at start-up: m->forward_exec), while coredumpd
 * still has CAP_SYS_ADMIN, which it drops after this (manager_drop_forward_capability()). Without
 * coredump-forward, or if it cannot start, crashes are not forwarded into containers (logged). */
void forward_launcher_start(Manager *m);
/* Whether a launcher is there to ask. */
bool forward_launcher_ready(const Manager *m);
/* Asks the launcher to start coredump-forward for one crash with these descriptors (the core, the
 * fields, the container's root and PID namespace; its user namespace and the pidfd, or -EBADF)
 * and name (the core's file name); its PID, a child of coredumpd's, in *ret. */
int forward_launcher_request(Manager *m, const char *name, int core, int fields, int root, int pidns, int userns,
                             int pidfd, pid_t *ret);
/* Closes the launcher's socket (it exits then) and reaps it. */
void forward_launcher_stop(Manager *m);
