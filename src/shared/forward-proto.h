/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: systemd-coredump's socket protocol on /run/systemd/coredump (SOCK_SEQPACKET), which
 * a host uses to forward a crash into a container (CoredumpReceive=): one "NAME=value" datagram
 * per journal field, then empty datagrams carrying one descriptor each, the core (read to its
 * end) and optionally the crashed process's pidfd; the end of the connection ends the message.
 * Shared by coredump-forward (sends) and coredumpd (receives); I/O on the given socket only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The socket a container's collector listens on, and the field that marks a forwarded crash. */
#define FORWARD_SOCKET_PATH "/run/systemd/coredump"
#define FORWARD_MARK_FIELD "COREDUMP_FORWARDED"
/* A field too large for one datagram is halved until it fits and "..." marks the cut, as
 * systemd's sender does; never below this. */
#define FORWARD_FIELD_MIN 64U
/* Receiving: one datagram at most this large (a record's bound), at most this many fields. */
#define FORWARD_DATAGRAM_MAX (8U << 20)
#define FORWARD_FIELDS_MAX 1024U

/* coredump-forward's exit statuses: what coredumpd records as the reason a crash stayed on the
 * host (forward_exit_to_string()). */
typedef enum ForwardExit {
        FORWARD_EXIT_OK = 0,
        FORWARD_EXIT_FAILED = 1,     /* anything else: its log line says */
        FORWARD_EXIT_NO_SOCKET = 10, /* no socket at /run/systemd/coredump beneath the container's root */
        FORWARD_EXIT_USERNS = 11,    /* its user namespace could not be entered */
        FORWARD_EXIT_CONNECT = 12,   /* the connection was refused */
        FORWARD_EXIT_SEND = 13,      /* the fields or descriptors could not be sent */
        FORWARD_EXIT_CORE = 14,      /* the core was not read to its end */
        FORWARD_EXIT_PIDNS = 15,     /* its PID namespace could not be joined */
} ForwardExit;
const char *forward_exit_to_string(int status);

/* Sends "name=value" (cut as above if the socket refuses its size); -errno on failure. */
int forward_send_field(int sock, const char *name, size_t name_len, const void *value, size_t len);
/* Sends an empty datagram carrying fd. */
int forward_send_fd(int sock, int fd);

typedef struct ForwardItem {
        void *data;  /* a field's bytes ("NAME=value", NUL-terminated past len), or NULL */
        size_t len;
        int fd;      /* the descriptor an empty datagram carried, or -EBADF */
        bool end;    /* the sender closed the connection (or sent an empty datagram without one) */
} ForwardItem;

/* Receives the next datagram (flags: MSG_DONTWAIT, then -EAGAIN) into ret: a field (malloc'd), a descriptor, or the end.
 * -EBADMSG for what the protocol does not allow: more than one descriptor, a field carrying one,
 * a datagram past FORWARD_DATAGRAM_MAX, a cut control message. */
int forward_recv_item(int sock, int flags, ForwardItem *ret);
