/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/* Drops everything the worker does not need, in an order where each step still has the
 * privilege it needs: capability bounding set, groups/gid/uid (verified irreversible),
 * remaining capabilities, rlimits, no_new_privs, non-dumpable. (Stray fds are closed at
 * start, before the job arrives.)
 * Returns 0 or negative errno; on failure the worker must exit without touching a core. */
int sandbox_enter(uid_t uid, gid_t gid);
