/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of pipe mode's handover socket (coredump-pipe to coredumpd). Manager (root): one
 * root-only socket in the kernel socket's directory. */
#pragma once

/* Pipe mode: the root-only SOCK_SEQPACKET socket coredump-pipe hands crashes over on (beside
 * the kernel socket, in the same root-owned 0700 directory, mode 0600). Each connection: one
 * MsgHandover of exact size with [pipe] or [pipe, pidfd], from uid 0 only, answered with one
 * byte (1 taken, 0 refused), within HANDOVER_TIMEOUT_USEC. */

#include "manager.h"

#define HANDOVER_TIMEOUT_USEC (2 * USEC_PER_SEC)
#define HANDOVER_CONNECTIONS_MAX 64U

/* Serves fd (a listening SOCK_SEQPACKET socket) or, if fd < 0, binds the handover path beside
 * the kernel socket. */
int handover_setup(Manager *m, int fd);
void handover_free(Manager *m);
/* Stopping: take no new handovers (they wait in the socket's queue for the next coredumpd). */
void handover_stop_accepting(Manager *m);
/* Pure: whether a handover message and its descriptors' kinds are acceptable. */
int handover_check(const MsgHandover *h, size_t size, size_t n_fds, bool first_is_fifo);
