/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface shared by coredumpd's control and handover sockets. Manager (root): binds the path
 * given, replacing only a stale socket. */
#pragma once

/* The shape both of coredumpd's small sockets share (the control socket for coredumpctl, the
 * pipe helper's handover socket): SOCK_SEQPACKET, one request per connection, a bounded number
 * of connections at once, each with a deadline. */

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

typedef struct Manager Manager;

typedef struct RequestConn RequestConn;
/* Called when the connection is readable; the handler reads its one message, answers, and
 * ends with request_conn_free(). */
typedef int (*RequestHandler)(RequestConn *c, int fd);

struct RequestConn {
        Manager *manager;
        int fd;
        sd_event_source *io, *timer;
        unsigned *counter; /* the server's count of open connections */
        RequestHandler handle;
};

typedef struct RequestServer {
        unsigned n_conns;
        unsigned max_conns;
        uint64_t timeout_usec;
        RequestHandler handle;
} RequestServer;

/* Binds a listening SOCK_SEQPACKET socket at path with mode (a stale socket is replaced, one
 * another process still serves is not: -EADDRINUSE). */
int request_server_bind(const char *path, mode_t mode, int backlog);
/* Accepts one connection on listen_fd for server s of manager m (at most s->max_conns at once). */
int request_server_accept(Manager *m, RequestServer *s, int listen_fd);
void request_conn_free(RequestConn *c);
