/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface shared by coredumpd's control and handover sockets. Manager (root): binds the path
 * given, replacing only a stale socket. */
#pragma once

/* The shape both of coredumpd's small sockets share (the control socket for coredumpctl, the
 * pipe helper's handover socket): SOCK_SEQPACKET, one request per connection, a bounded number
 * of connections at once, each with a deadline. A socket anyone may connect to also bounds the
 * connections of each peer uid, so that one user holding all theirs leaves the others' free;
 * there root's own connections do not count against the total. A connection over a bound is
 * closed at once. */

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "list.h"

typedef struct Manager Manager;

typedef struct RequestConn RequestConn;
/* Called when the connection is readable; the handler reads its one message, answers, and
 * ends with request_conn_free(). */
typedef int (*RequestHandler)(RequestConn *c, int fd);

typedef struct RequestServer RequestServer;

struct RequestConn {
        Manager *manager;
        RequestServer *server;
        int fd;
        uid_t uid; /* the peer's, from SO_PEERCRED at accept */
        sd_event_source *io, *timer;
        RequestHandler handle;
        void *state;                  /* a handler's own, for a request of several messages */
        void (*state_free)(void *state);
        LIST_FIELDS(RequestConn, conns);
};

struct RequestServer {
        unsigned n_conns;     /* open connections, all peers */
        unsigned n_exempt;    /* of those, root's where max_per_uid applies */
        unsigned max_conns;   /* open at once (beside root's, where max_per_uid is set) */
        unsigned max_per_uid; /* open at once per peer uid; 0: no per-uid bound (a root-only socket) */
        uint64_t timeout_usec;
        RequestHandler handle;
        RequestConn *conns;
};

/* Binds a listening SOCK_SEQPACKET socket at path with mode (a stale socket is replaced, one
 * another process still serves is not: -EADDRINUSE). */
int request_server_bind(const char *path, mode_t mode, int backlog);
/* Accepts one connection on listen_fd for server s of manager m (at most s->max_conns at once). */
int request_server_accept(Manager *m, RequestServer *s, int listen_fd);
void request_conn_free(RequestConn *c);
/* Closes every open connection of s (the daemon is going away). */
void request_server_close_all(RequestServer *s);
