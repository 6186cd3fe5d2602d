/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Crashes forwarded into this machine's namespaces by the host's collector (ours or
 * systemd-coredump's) on /run/systemd/coredump (forward-proto.h), taken only from root and only
 * as far as they can be checked: the pidfd must name the PID the fields claim and a process that
 * is dumping core, the core must be a pipe, a file or a socket opened for reading. Each becomes
 * a crash like a pipe-mode handover (crash_accept_forwarded), read through the pidfd in this
 * machine's own /proc. Manager (root): serves one socket (passed, or bound with --receive=). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "crash.h"
#include "fd-util.h"
#include "forward-proto.h"
#include "kernel-abi.h"
#include "listen.h"
#include "log.h"
#include "meta.h"
#include "parse-util.h"
#include "pidfd-util.h"
#include "receive.h"
#include "request-server.h"

#define RECEIVE_SOCKET_MODE 0600

typedef struct Incoming {
        Record fields;
        unsigned n_fields;
        int core_fd;
        int pidfd;
        unsigned n_fds;
} Incoming;

static void incoming_free(void *p) {
        Incoming *in = p;

        if (!in)
                return;
        record_free(&in->fields);
        safe_close(in->core_fd);
        safe_close(in->pidfd);
        free(in);
}

static void refuse(RequestConn *c, const char *why) {
        /* a line at debug level each time, a warning within the refusals' rate limit */
        log_full_errno(ratelimit_below(&c->manager->refuse_ratelimit) ? LOG_WARNING : LOG_DEBUG, 0,
                       "Refused a forwarded crash from uid %u: %s", (unsigned) c->uid, why);
        request_conn_free(c);
}

/* "NAME=value": a journal field name of ours, then the value; 0 or -EBADMSG. */
static int add_field(Incoming *in, const char *data, size_t len) {
        const char *eq = memchr(data, '=', len);
        char name[FIELD_NAME_MAX + 1];
        size_t nl;

        if (!eq || in->n_fields >= FORWARD_FIELDS_MAX)
                return -EBADMSG;
        nl = (size_t) (eq - data);
        if (nl == 0 || nl > FIELD_NAME_MAX || !record_field_name_valid(data, nl) || data[0] == '_')
                return -EBADMSG;
        memcpy(name, data, nl);
        name[nl] = 0;
        in->n_fields++;
        return record_add(&in->fields, name, eq + 1, len - nl - 1, 0) < 0 ? -EBADMSG : 0;
}

static const char *field(const Incoming *in, const char *name, char *buf, size_t size) {
        RecordField f;

        if (!record_find(in->fields.buf, in->fields.len, name, &f) || f.value_len >= size ||
            memchr(f.value, 0, f.value_len))
                return NULL;
        memcpy(buf, f.value, f.value_len);
        buf[f.value_len] = 0;
        return buf;
}

static int field_u64(const Incoming *in, const char *name, uint64_t max, uint64_t *ret) {
        char buf[32];
        uint64_t v;

        if (!field(in, name, buf, sizeof buf) || parse_uint64(buf, &v) < 0 || v > max)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* What a handover would say, from the fields (a root's claims until the pidfd confirms them). */
static int to_handover(const Incoming *in, MsgHandover *h) {
        uint64_t pid, uid, gid, sig = 0, dumpable = 0, rlimit = UINT64_MAX, ts = 0;
        char host[sizeof h->hostname];

        if (field_u64(in, "COREDUMP_PID", INT32_MAX, &pid) < 0 || pid == 0 ||
            field_u64(in, "COREDUMP_UID", UINT32_MAX - 1, &uid) < 0 ||
            field_u64(in, "COREDUMP_GID", UINT32_MAX - 1, &gid) < 0)
                return -EBADMSG;
        (void) field_u64(in, "COREDUMP_SIGNAL", 64, &sig);
        (void) field_u64(in, "COREDUMP_DUMPABLE", 2, &dumpable);
        (void) field_u64(in, "COREDUMP_RLIMIT", UINT64_MAX, &rlimit);
        (void) field_u64(in, "COREDUMP_TIMESTAMP", UINT64_MAX, &ts);
        *h = (MsgHandover) {
                .hdr = { PROTO_MAGIC, MSG_HANDOVER },
                .pid = (int32_t) pid,
                .tid = (int32_t) pid, /* the host's TID is not this namespace's: the pidfd pins it */
                .uid = (uint32_t) uid,
                .gid = (uint32_t) gid,
                .signal = (int32_t) sig,
                .dumpable = (uint32_t) dumpable,
                .timestamp = ts / USEC_PER_SEC,
                .rlimit = rlimit,
                .has_pidfd = in->pidfd >= 0,
        };
        if (field(in, "COREDUMP_HOSTNAME", host, sizeof host))
                snprintf(h->hostname, sizeof h->hostname, "%s", host);
        return 0;
}

/* The core: something this process reads, the way the kernel's pipe is read. */
static bool core_fd_plausible(int fd) {
        struct stat st;
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fstat(fd, &st) < 0 || (fl & O_ACCMODE) == O_WRONLY || (fl & O_PATH))
                return false;
        return S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode);
}

/* Where the kernel gives no COREDUMPED mark (a sender that took its pidfd with pidfd_open(), as
 * systemd before 257.6 or any pattern without %F does; any kernel before 6.16), a thread of the
 * process must be dumping core right now (PF_DUMPCORE), read through a /proc directory the pidfd
 * pins. */
static bool dumping_now(int pidfd, pid_t pid) {
        _cleanup_close_ int dir = -EBADF;
        char path[32];

        snprintf(path, sizeof path, "/proc/%d", (int) pid);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return dir >= 0 && pidfd_check_alive(pidfd) >= 0 && meta_process_dumping(dir);
}

/* The pidfd names the claimed PID, in this PID namespace, and a process that has dumped core (the
 * kernel's COREDUMPED mark) or is dumping it now (PF_DUMPCORE): the second is all a kernel without
 * PIDFD_INFO_COREDUMP (before 6.16; before 6.13 without PIDFD_GET_INFO at all) lets us see.
 * -ESRCH if not. */
static int check_pidfd(int pidfd, pid_t claimed) {
        PidfdInfo info;
        pid_t pid;
        int r = pidfd_get_info(pidfd, PIDFD_INFO_WANT, &info);

        if (r >= 0 && (info.mask & PIDFD_INFO_PID)) {
                if (info.pid != claimed)
                        return -ESRCH;
                if ((info.mask & PIDFD_INFO_COREDUMP) && (info.coredump_mask & PIDFD_COREDUMPED))
                        return 0;
        } else {
                r = pidfd_get_pid(pidfd, &pid);
                if (r < 0)
                        return r;
                if (pid != claimed)
                        return -ESRCH;
        }
        return dumping_now(pidfd, claimed) ? 0 : -ESRCH;
}

static void finish(RequestConn *c, Incoming *in) {
        MsgHandover h;
        Record fields;

        if (in->core_fd < 0)
                return refuse(c, "no core descriptor");
        if (!core_fd_plausible(in->core_fd))
                return refuse(c, "the core descriptor is not a readable pipe, file or socket");
        if (to_handover(in, &h) < 0)
                return refuse(c, "COREDUMP_PID, COREDUMP_UID or COREDUMP_GID missing or malformed");
        if (in->pidfd >= 0 && check_pidfd(in->pidfd, h.pid) < 0)
                return refuse(c, "the pidfd does not name the process COREDUMP_PID names, dumping core");
        fields = in->fields;
        in->fields = (Record) {};
        crash_accept_forwarded(c->manager, TAKE_FD(in->core_fd), TAKE_FD(in->pidfd), &h, &fields);
        record_free(&fields);
        request_conn_free(c);
}

static int on_message(RequestConn *c, int fd) {
        Incoming *in = c->state;
        ForwardItem item;
        int r;

        if (c->uid != 0)
                return refuse(c, "not root in this user namespace"), 0;
        if (!in) {
                in = calloc(1, sizeof *in);
                if (!in)
                        return refuse(c, "out of memory"), 0;
                *in = (Incoming) { .core_fd = -EBADF, .pidfd = -EBADF };
                c->state = in;
                c->state_free = incoming_free;
        }
        for (;;) {
                r = forward_recv_item(fd, MSG_DONTWAIT, &item);
                if (r == -EAGAIN || r == -EINTR)
                        return 0;
                if (r < 0)
                        return refuse(c, "malformed message"), 0;
                if (item.end)
                        return finish(c, in), 0;
                if (item.data) {
                        r = in->n_fds > 0 ? -EBADMSG : add_field(in, item.data, item.len);
                        free(item.data);
                        if (r < 0)
                                return refuse(c, "a malformed field, or a field after the core"), 0;
                        continue;
                }
                /* the core, the pidfd, then systemd's mount tree (not used: the pidfd is) */
                if (++in->n_fds == 1)
                        in->core_fd = item.fd;
                else if (in->n_fds == 2)
                        in->pidfd = item.fd;
                else if (in->n_fds == 3)
                        safe_close(item.fd);
                else {
                        safe_close(item.fd);
                        return refuse(c, "more than three descriptors"), 0;
                }
        }
}

static int on_connect(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        return request_server_accept(m, &m->receive_server, fd);
}

int receive_setup(Manager *m, int fd, const char *path) {
        int r;

        m->receive_server = (RequestServer) { .max_conns = RECEIVE_CONNECTIONS_MAX,
                                              .timeout_usec = RECEIVE_TIMEOUT_USEC, .handle = on_message };
        if (fd < 0 && !path)
                return 0;
        if (fd < 0) {
                if (strlen(path) >= sizeof m->receive_path)
                        return log_error_errno(-ENAMETOOLONG, "%s: path too long", path);
                fd = request_server_bind(path, RECEIVE_SOCKET_MODE, LISTEN_BACKLOG);
                if (fd < 0)
                        return log_error_errno(fd, "Failed to bind %s for forwarded crashes: %m", path);
                snprintf(m->receive_path, sizeof m->receive_path, "%s", path);
        }
        r = fd_set_nonblock(fd, true);
        if (r >= 0)
                r = sd_event_add_io(m->event, &m->receive_source, fd, EPOLLIN, on_connect, m);
        if (r < 0) {
                safe_close(fd);
                return log_error_errno(r, "Failed to watch the socket for forwarded crashes: %m");
        }
        (void) sd_event_source_set_io_fd_own(m->receive_source, true);
        log_info("Taking forwarded crashes on %s", path ? path : FORWARD_SOCKET_PATH);
        return 0;
}

void receive_stop_accepting(Manager *m) {
        if (m->receive_source)
                (void) sd_event_source_set_enabled(m->receive_source, SD_EVENT_OFF);
}

void receive_free(Manager *m) {
        m->receive_source = sd_event_source_disable_unref(m->receive_source);
        request_server_close_all(&m->receive_server);
        if (m->receive_path[0])
                (void) unlink(m->receive_path);
        m->receive_path[0] = 0;
}
