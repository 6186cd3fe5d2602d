/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the capabilities coredumpd keeps after start-up, and the call that drops the rest.
 * Manager (root); acts on its own process only. */
#pragma once

/* Keeps only the capabilities coredumpd needs, in every set and in the bounding set (so the
 * workers it starts can never hold more):
 *   CAP_SYS_PTRACE       read the crashed process's /proc (environ, maps, fd/) whoever owns it
 *   CAP_DAC_READ_SEARCH  the same for its 0400 files; link the unnamed core (AT_EMPTY_PATH)
 *   CAP_KILL             pidfd_send_signal(0) to confirm a crashed process of another user is
 *                        still the one we read; kill workers running as other users
 *   CAP_SETUID/SETGID    workers become the crashing or the worker user, and map that id into
 *                        their user namespace
 *   CAP_SETPCAP          workers empty their bounding set
 * Everything else it does (core_pattern, the socket, the storage directory) needs uid 0 only.
 * And, from start-up until the forward launcher is started (forward-launch.h), in its permitted
 * and bounding sets only, never effective:
 *   CAP_SYS_ADMIN        for the launcher and the coredump-forward it starts, which joins a
 *                        container's PID namespace (one a container manager made outside its
 *                        user namespace, as systemd-nspawn does even with -U): systemd's socket
 *                        unit in the container asks the sender's PID there
 * manager_drop_forward_capability() then drops it from both: coredumpd, its collectors and its
 * workers never hold it after start-up. The unit's CapabilityBoundingSet= lists the same.
 * What that does not change: CAP_SYS_PTRACE lets a compromised coredumpd write into any process's
 * memory through /proc/PID/mem (the launcher's, PID 1's), which no syscall filter can refuse; it
 * is root's power in all but name, kept as long as coredumpd reads other users' /proc itself. */
#define MANAGER_CAPS_MASK                                                                       \
        ((UINT64_C(1) << 19) | (UINT64_C(1) << 2) | (UINT64_C(1) << 5) | (UINT64_C(1) << 7) |  \
         (UINT64_C(1) << 6) | (UINT64_C(1) << 8))
#define MANAGER_CAPS_PERMITTED_ONLY (UINT64_C(1) << 21) /* CAP_SYS_ADMIN, until the launcher runs */

int manager_drop_capabilities(void);
/* CAP_SYS_ADMIN gone from the permitted and bounding sets, once the launcher has it. */
int manager_drop_forward_capability(void);
