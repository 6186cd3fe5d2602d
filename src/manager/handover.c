/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pipe mode's handover socket: the kernel's pipe and pidfd from coredump-pipe (uid 0, exact
 * message) start a crash. Manager (root): binds one 0600 socket beside the kernel socket. */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "crash.h"
#include "fd-util.h"
#include "handover.h"
#include "request-server.h"
#include "listen.h"
#include "pattern.h"
#include "time-util.h"

#define HANDOVER_FDS_MAX 2
#define HANDOVER_SOCKET_MODE 0600

int handover_check(const MsgHandover *h, size_t size, size_t n_fds, bool first_is_fifo) {
        if (size != sizeof *h || h->hdr.magic != PROTO_MAGIC || h->hdr.type != MSG_HANDOVER)
                return -EBADMSG;
        if (h->has_pidfd > 1 || n_fds != 1 + h->has_pidfd || !first_is_fifo)
                return -EBADMSG;
        if (h->pid <= 0 || h->tid <= 0 || h->signal <= 0 || h->signal > 64 || h->dumpable > 2 || h->spare != 0)
                return -EBADMSG;
        if (!memchr(h->hostname, 0, sizeof h->hostname))
                return -EBADMSG;
        return 0;
}

static bool is_fifo(int fd) {
        struct stat st;
        return fstat(fd, &st) >= 0 && S_ISFIFO(st.st_mode);
}

/* One message, with up to HANDOVER_FDS_MAX descriptors; any more are closed and refused. */
static ssize_t recv_handover(int fd, MsgHandover *h, int fds[HANDOVER_FDS_MAX], size_t *n_fds, bool *too_many) {
        union {
                struct cmsghdr c;
                char buf[CMSG_SPACE(sizeof(int) * HANDOVER_FDS_MAX) + CMSG_SPACE(sizeof(int) * 8)];
        } control = {};
        uint8_t buf[sizeof *h + 1];
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
        ssize_t n;

        *n_fds = 0;
        *too_many = false;
        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n >= 0 && c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int got;
                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
                        if (*n_fds < HANDOVER_FDS_MAX)
                                fds[(*n_fds)++] = got;
                        else {
                                safe_close(got);
                                *too_many = true;
                        }
                }
        }
        if (mh.msg_flags & MSG_CTRUNC)
                *too_many = true;
        if (n > 0)
                memcpy(h, buf, MIN((size_t) n, sizeof *h));
        return n;
}

static void refuse(RequestConn *c, int *fds, size_t n_fds, const char *why, uid_t uid) {
        char no = 0;

        for (size_t i = 0; i < n_fds; i++)
                safe_close(fds[i]);
        if (ratelimit_below(&c->manager->refuse_ratelimit))
                log_warning("Refused a handover on the pipe socket from uid %u: %s", (unsigned) uid, why);
        (void) send(c->fd, &no, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        request_conn_free(c);
}

static int on_message(RequestConn *c, int fd) {
        int fds[HANDOVER_FDS_MAX] = { -EBADF, -EBADF };
        MsgHandover h = {};
        struct ucred cred = { .uid = UID_INVALID };
        socklen_t cl = sizeof cred;
        size_t n_fds;
        bool too_many;
        ssize_t n;
        char yes = 1;

        n = recv_handover(fd, &h, fds, &n_fds, &too_many);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != 0) {
                refuse(c, fds, n_fds, "not root", cred.uid);
                return 0;
        }
        if (n <= 0 || too_many || handover_check(&h, (size_t) n, n_fds, n_fds > 0 && is_fifo(fds[0])) < 0) {
                refuse(c, fds, n_fds, "malformed message", cred.uid);
                return 0;
        }
        (void) send(fd, &yes, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        crash_accept_pipe(c->manager, fds[0], h.has_pidfd ? fds[1] : -EBADF, &h);
        request_conn_free(c);
        return 0;
}

static int on_connect(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        return request_server_accept(m, &m->handover_server, fd);
}

int handover_setup(Manager *m, int fd) {
        int r;

        m->handover_server = (RequestServer) { .max_conns = HANDOVER_CONNECTIONS_MAX,
                                               .timeout_usec = HANDOVER_TIMEOUT_USEC, .handle = on_message };
        if (fd < 0) {
                r = pipe_socket_path(m->socket_path, m->handover_path, sizeof m->handover_path);
                if (r < 0)
                        return log_error_errno(r, "No handover socket path beside %s: %m", m->socket_path);
                fd = request_server_bind(m->handover_path, HANDOVER_SOCKET_MODE, LISTEN_BACKLOG);
                if (fd < 0)
                        return log_error_errno(fd, "Failed to bind the handover socket %s: %m", m->handover_path);
                m->handover_bound_here = true;
        }
        r = fd_set_nonblock(fd, true);
        if (r >= 0)
                r = sd_event_add_io(m->event, &m->handover_source, fd, EPOLLIN, on_connect, m);
        if (r < 0) {
                safe_close(fd);
                return log_error_errno(r, "Failed to watch the handover socket: %m");
        }
        (void) sd_event_source_set_io_fd_own(m->handover_source, true);
        return 0;
}

void handover_stop_accepting(Manager *m) {
        if (m->handover_source)
                (void) sd_event_source_set_enabled(m->handover_source, SD_EVENT_OFF);
}

void handover_free(Manager *m) {
        m->handover_source = sd_event_source_disable_unref(m->handover_source);
        request_server_close_all(&m->handover_server); /* connections still open go too */
        if (m->handover_bound_here)
                (void) unlink(m->handover_path);
        m->handover_bound_here = false;
}
