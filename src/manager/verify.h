/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: proving a kernel socket peer is a crashing task. Manager (root): queries the
 * connection and its pidfd only. */
#pragma once

#include "pidfd-util.h"

/* Proves an accepted connection is the kernel dumping a crashing task: SO_PEERPIDFD,
 * PIDFD_GET_INFO with COREDUMPED, SO_PEERCRED agreeing with it, and the seed ABI's cookie
 * matching SO_COOKIE where the kernel offers one. On success returns the pidfd. */
int verify_peer(int conn, PidfdInfo *ret_info, const char **ret_why);
/* The pure part, for tests: checks what the kernel said. */
int verify_info(const PidfdInfo *info, pid_t peercred_pid, uint64_t so_cookie, const char **ret_why);
