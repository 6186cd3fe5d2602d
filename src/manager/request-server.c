/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd's small SOCK_SEQPACKET servers (control, handover): bind, bounded accept, one request
 * per connection, a deadline each. Manager (root): binds only the path it is given. */
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "manager.h"
#include "request-server.h"

void request_conn_free(RequestConn *c) {
        Manager *m = c->manager;

        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        safe_close(c->fd);
        (*c->counter)--;
        free(c);
        manager_update_accepting(m); /* a stopping daemon may be waiting for this one */
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RequestConn *c = userdata;
        return c->handle(c, fd);
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        request_conn_free(userdata);
        return 0;
}

int request_server_accept(Manager *m, RequestServer *s, int listen_fd) {
        int cfd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        RequestConn *c;

        if (cfd < 0)
                return 0;
        if (s->n_conns >= s->max_conns || !(c = calloc(1, sizeof *c))) {
                safe_close(cfd);
                return 0;
        }
        *c = (RequestConn) { .manager = m, .fd = cfd, .counter = &s->n_conns, .handle = s->handle };
        s->n_conns++;
        if (sd_event_add_io(m->event, &c->io, cfd, EPOLLIN, on_readable, c) < 0 ||
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
