/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the socket for crashes forwarded from the host (receive.c). Manager (root). */
#pragma once

#include "manager.h"

/* The sender writes the whole message at once; the core itself is read later, by a worker. */
#define RECEIVE_TIMEOUT_USEC (10 * USEC_PER_SEC)
#define RECEIVE_CONNECTIONS_MAX 16U /* systemd-coredump.socket's MaxConnections= */

/* Serves fd (the service manager's /run/systemd/coredump) or, if fd < 0 and path is set, binds
 * path (mode 0600); with neither, nothing. */
int receive_setup(Manager *m, int fd, const char *path);
void receive_stop_accepting(Manager *m);
void receive_free(Manager *m);
