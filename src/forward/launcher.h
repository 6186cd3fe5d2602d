/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredump-forward's launcher mode (launcher.c), which coredumpd starts once, and what
 * the launcher and the forwarders share. */
#pragma once

#include <sys/types.h>

/* Not dumpable, gone with coredumpd, which must still be the parent: again after every change of
 * credentials (the kernel resets both then). */
int forward_stay_private(pid_t parent);

/* Serves coredumpd's requests on LAUNCHER_SOCKET_FD until it closes its end; the exit status. */
int launcher_run(void);
