/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: a crashed process's container facts (container.c), read by the manager (root) from
 * /proc; pure parsers for the tests. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "record.h"

#define CONTAINER_DEPTH_MAX 64U /* parents walked to find a container's leader */

/* The host's /proc directory to compare namespaces with: PID 1's. Where PID 1 cannot be
 * inspected: run by hand (not under a service manager), the manager's outermost inspectable
 * ancestor (the session it was started from); under one, -EACCES: its units may have
 * namespaces of their own, so nothing is labelled rather than everything. PID 1's is opened
 * once and kept (a new descriptor of it is returned each time); the ancestor is looked up for
 * each call, PID 1 tried first. */
int container_host_dir(void);
/* A crash in a mount namespace other than the host's: the pinned /proc directory of the first
 * ancestor in another mount namespace than the process's (COREDUMP_CONTAINER_CMDLINE's, as
 * systemd defines it). -ESRCH: the host's namespace, or none to trust. */
int container_leader(int dir, int host);
/* COREDUMP_CONTAINER_PID, _UID, _GID: where the process has a PID namespace of its own, its PID
 * there and its real UID and GID in its user namespace. */
void container_add_fields(Record *r, int dir, int host);

/* The /proc directory of the parent of the process behind dir, pinned; -ESRCH when there is none
 * to trust (or it is PID 1). */
int container_parent_dir(int dir);
/* 1 if the processes behind the two /proc directories share namespace ns ("ns/pid"), 0 if not,
 * <0 if either cannot be inspected. */
int container_ns_same(int dir_a, int dir_b, const char *ns);

/* Pure parsers, for tests. */
/* outside (an id of the reader's namespace) through an id map ("inside outside length" lines). */
int container_map_id(const char *map, uint32_t outside, uint32_t *ret);
/* The last (innermost) PID of a status text's NSpid line. */
int container_last_nspid(const char *status, pid_t *ret);
