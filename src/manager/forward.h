/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: forwarding a crash to the collector of the container it happened in, as systemd's
 * CoredumpReceive= asks (forward.c: which container and whether it asked; forward-fields.c: the
 * fields in its terms; the sending is coredump-forward's). Manager (root). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "cgroup-util.h"
#include "record.h"
#include "time-util.h"

typedef struct Crash Crash;

/* The xattrs PID 1 sets on a unit's cgroup for Delegate=yes and CoredumpReceive=yes. */
#define FORWARD_XATTR_DELEGATE_TRUSTED "trusted.delegate"
#define FORWARD_XATTR_DELEGATE_USER "user.delegate"
#define FORWARD_XATTR_RECEIVE "user.coredump_receive"
#define FORWARD_XATTR_VALUE_MAX 16U
#define FORWARD_CGROUP_FS "/sys/fs/cgroup"
/* Forwardings in flight at once, and per container unit: each holds its crash's worker (waiting
 * for the journal entry) for up to ForwardTimeoutSec=, so a container whose collector never
 * reads holds at most FORWARDS_PER_UNIT_MAX of them; the rest stay on the host. */
#define FORWARDS_MAX 8U
#define FORWARDS_PER_UNIT_MAX 2U
/* After the forwarding, the worker has this long to write the journal entry (the per-crash
 * deadline may have passed while forwarding). */
#define FORWARD_COMMIT_TIMEOUT_USEC (60 * USEC_PER_SEC)

/* coredump-forward's descriptors: 3 core, 4 fields, 5 root, 6 user namespace, 7 pidfd, 8 PID
 * namespace */
#define FORWARD_FD_FIRST 3
#define FORWARD_FDS 6
#define FORWARD_OVERFLOW_ID 65534U /* what the kernel shows for an id the namespace does not map */

typedef struct ForwardTarget {
        int root_fd;                /* O_PATH: the container's root directory (its PID 1's) */
        int userns_fd;              /* its user namespace where it is not the host's, else -EBADF */
        int pidns_fd;               /* its PID namespace (the sender joins it: the collector asks
                                     * the peer's PID, systemd's socket unit in particular) */
        pid_t pid;                  /* the crashed process's PID in the container's PID namespace */
        uint32_t uid, gid;          /* its real ids in the container's user namespace */
        char cgroup_root[PATH_MAX]; /* the container's cgroup (its PID 1's cgroup's parent) */
        char unit_path[PATH_MAX];   /* its cgroup (the unit's), as the host names it */
        char unit[UNIT_NAME_MAX];   /* the unit that asked for the container's crashes */
} ForwardTarget;

/* Whether the crash whose /proc directory is procdir goes to its container's collector, as
 * systemd decides it: a PID namespace other than the host's, a PID 1 there that is not the
 * crashed process and still alive, whose cgroup's parent lies in a unit that is delegated and
 * has user.coredump_receive set. 1 with *ret (pinned), 0 if not, <0 on error. */
int forward_target_find(int procdir, int host, uint32_t ruid, uint32_t rgid, ForwardTarget **ret);
void forward_target_free(ForwardTarget *t);

/* Pure: the fields the container gets, from the host's record rec: PID, UID and GID in its
 * terms, the cgroup and unit as the container names them, what describes the process; nothing
 * that names the host (its PIDs, paths of its cgroups, the container's own command line seen
 * from outside, descriptors, its status). signal (0: unknown) stands in where the record has none;
 * hostname is the task's own UTS name (NULL: unknown, sent empty);
 * with_pidfd says whether a pidfd goes with them (COREDUMP_BY_PIDFD=1). */
int forward_fields(const uint8_t *rec, size_t len, const ForwardTarget *t, int signal, const char *hostname,
                   bool with_pidfd, Record *ret);

/* One forwarding in flight: coredump-forward for one crash, with its deadline. */
typedef struct Forwarder {
        Crash *crash;
        pid_t pid;
        int pidfd;
        sd_event_source *child_source;
        sd_event_source *timer_source;
} Forwarder;

/* Starts coredump-forward for c (its target, its stored core core_fd named name); c learns how
 * it went through crash_forwarded(). */
int forward_start(Crash *c, int core_fd, const char *name);
/* Kills and forgets a forwarding (its crash is going away). */
void forward_stop(Forwarder *f);
