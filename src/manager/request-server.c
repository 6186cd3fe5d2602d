/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd's small SOCK_SEQPACKET servers (control, handover): bind, accept within the bounds
 * (in all, per peer uid), one request per connection, a deadline each. Manager (root): binds only the path it is given. */
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "manager.h"
#include "request-server.h"

/* Whether uid's connections stay out of the total (root's, beside the users' slots). */
static bool exempt(const RequestServer *s, uid_t uid) {
        return s->max_per_uid > 0 && uid == 0;
}

void request_conn_free(RequestConn *c) {
        Manager *m = c->manager;
        RequestServer *s = c->server;

        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        if (c->state_free)
                c->state_free(c->state);
        safe_close(c->fd);
        LIST_REMOVE(conns, s->conns, c);
        s->n_conns--;
        s->n_exempt -= exempt(s, c->uid);
        free(c);
        manager_update_accepting(m); /* a stopping daemon may be waiting for this one */
}

void request_server_close_all(RequestServer *s) {
        while (s->conns)
                request_conn_free(s->conns);
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RequestConn *c = userdata;
        return c->handle(c, fd);
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        request_conn_free(userdata);
        return 0;
}

static unsigned conns_of(const RequestServer *s, uid_t uid) {
        unsigned n = 0;

        for (const RequestConn *c = s->conns; c; c = c->conns_next)
                n += c->uid == uid;
        return n;
}

/* Whether one more connection of uid stays within the server's bounds. */
static bool room_for(const RequestServer *s, uid_t uid) {
        if (s->max_per_uid > 0 && conns_of(s, uid) >= s->max_per_uid)
                return false;
        return exempt(s, uid) || s->n_conns - s->n_exempt < s->max_conns;
}

int request_server_accept(Manager *m, RequestServer *s, int listen_fd) {
        _cleanup_close_ int cfd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct ucred cred;
        socklen_t cl = sizeof cred;
        RequestConn *c;

        if (cfd < 0)
                return 0;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
                return 0;
        if (!room_for(s, cred.uid)) {
                log_debug("Closed a connection from uid %u at once: its slots are taken", (unsigned) cred.uid);
                return 0;
        }
        c = calloc(1, sizeof *c);
        if (!c)
                return 0;
        *c = (RequestConn) { .manager = m, .server = s, .fd = TAKE_FD(cfd), .uid = cred.uid, .handle = s->handle };
        LIST_PREPEND(conns, s->conns, c);
        s->n_conns++;
        s->n_exempt += exempt(s, c->uid);
        if (sd_event_add_io(m->event, &c->io, c->fd, EPOLLIN, on_readable, c) < 0 ||
            sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC, s->timeout_usec, 0, on_timeout, c) < 0)
                request_conn_free(c);
        return 0;
}

int request_server_bind(const char *path, mode_t mode, int backlog) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        mode_t old;
        int r;

        if (path[0] != '/' || strlen(path) >= sizeof sa.sun_path)
                return -EINVAL;
        strcpy(sa.sun_path, path);
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode))
                        return -EEXIST;
                /* another coredumpd still serving it keeps it; a stale one is replaced */
                fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0)
                        return -EADDRINUSE;
                fd = safe_close(fd);
                (void) unlink(path);
        }
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        old = umask(0777 & ~mode);
        r = bind(fd, (struct sockaddr *) &sa, sizeof sa);
        umask(old);
        if (r < 0 || chmod(path, mode) < 0 || listen(fd, backlog) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}
