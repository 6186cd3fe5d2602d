/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredumpd asking its forward launcher (coredump-forward --launcher, the one process
 * that keeps CAP_SYS_ADMIN) to start coredump-forward for one crash. Over a SOCK_SEQPACKET pair
 * with proto.h's framing. No I/O here. */
#pragma once

#include <limits.h>
#include <stdint.h>

#include "proto.h"

/* The launcher's end of the pair, as coredumpd starts it. */
#define LAUNCHER_SOCKET_FD 3

enum {
        MSG_LAUNCH = 0x4c01,   /* coredumpd to launcher: LaunchRequest, and its descriptors */
        MSG_LAUNCHED = 0x4c02, /* launcher to coredumpd: LaunchReply */
};

/* What a LaunchRequest carries, in this order: the core, the fields, the container's root and
 * PID namespace always; its user namespace and the crashed process's pidfd if the flags say so
 * (coredump-forward's --userns and --pidfd). */
#define LAUNCH_FLAG_USERNS (UINT32_C(1) << 0)
#define LAUNCH_FLAG_PIDFD (UINT32_C(1) << 1)
#define LAUNCH_FDS_MAX 6U
_Static_assert(LAUNCH_FDS_MAX <= PROTO_FDS_MAX, "proto.h cannot carry a launch request");
#define LAUNCH_NAME_MAX 256U /* a stored core's name (NAME_MAX), and its NUL */

typedef struct LaunchRequest {
        MsgHeader hdr;
        uint32_t flags;
        uint32_t seq; /* its number, which the reply repeats */
        char name[LAUNCH_NAME_MAX]; /* the core's name, for its compression's suffix; NUL-terminated */
} LaunchRequest;

/* The forwarder's PID (a child of coredumpd's: started with CLONE_PARENT), or the error. The
 * launcher's first message, once it has dropped what it does not keep, is one with neither. */
typedef struct LaunchReply {
        MsgHeader hdr;
        int32_t error;
        uint32_t pid;
        uint32_t seq; /* the request's (0: the launcher's first message, ready) */
        uint32_t spare;
} LaunchReply;
