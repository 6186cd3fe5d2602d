/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredump-forward's launcher mode (launcher.c), which coredumpd starts once. */
#pragma once

/* Serves coredumpd's requests on LAUNCHER_SOCKET_FD until it closes its end; the exit status. */
int launcher_run(void);
