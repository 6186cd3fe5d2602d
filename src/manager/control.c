/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd's control socket: serves coredumpctl's DELETE. Manager (root): unlinks only regular
 * core.* and record.*.export files of the store, for root or the user their ACL lets read them. */
#include <acl/libacl.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "control-proto.h"
#include "control.h"
#include "request-server.h"
#include "time-util.h"

/* Whether the file's ACL names uid with read permission. */
static bool acl_grants(int fd, uid_t uid) {
        acl_t acl = acl_get_fd(fd);
        acl_entry_t entry;
        bool found = false;

        if (!acl)
                return false;
        for (int w = ACL_FIRST_ENTRY; !found && acl_get_entry(acl, w, &entry) == 1; w = ACL_NEXT_ENTRY) {
                acl_tag_t tag;
                acl_permset_t perms;
                uid_t *q;

                if (acl_get_tag_type(entry, &tag) < 0 || tag != ACL_USER)
                        continue;
                q = acl_get_qualifier(entry);
                if (q && *q == uid && acl_get_permset(entry, &perms) == 0 && acl_get_perm(perms, ACL_READ) == 1)
                        found = true;
                acl_free(q);
        }
        acl_free(acl);
        return found;
}

static int may_delete(int dirfd, const char *name, uid_t uid) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EPERM;
        if (uid == 0)
                return 0;
        return acl_grants(fd, uid) ? 0 : -EPERM;
}

static int handle_delete(Manager *m, const char *name, uid_t uid) {
        int r;

        if (!control_name_valid(name))
                return -EINVAL;
        if (m->storage_fd < 0)
                return -ENOENT;
        r = may_delete(m->storage_fd, name, uid);
        if (r < 0)
                return r;
        /* a core leaves the store's estimate and its owner's total with it */
        if (strncmp(name, "core.", 5) == 0)
                r = store_unlink_core(m->storage_fd, name, &m->store_usage);
        else
                r = unlinkat(m->storage_fd, name, 0) < 0 ? negative_errno() : 0;
        if (r < 0)
                return r;
        log_info("Deleted %s at the request of uid %u", name, (unsigned) uid);
        return 0;
}

static int handle(Manager *m, char *msg, uid_t uid) {
        if (strncmp(msg, CONTROL_DELETE " ", strlen(CONTROL_DELETE) + 1) == 0)
                return handle_delete(m, msg + strlen(CONTROL_DELETE) + 1, uid);
        return -EOPNOTSUPP;
}

static int on_request(RequestConn *c, int fd) {
        char msg[CONTROL_MSG_MAX + 1], reply[32];
        struct ucred cred;
        socklen_t cl = sizeof cred;
        ssize_t n;
        int r;

        n = recv(fd, msg, CONTROL_MSG_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
                request_conn_free(c);
                return 0;
        }
        if ((size_t) n > CONTROL_MSG_MAX || memchr(msg, 0, (size_t) n))
                r = -EMSGSIZE;
        else {
                msg[n] = 0;
                r = handle(c->manager, msg, cred.uid);
        }
        if (r < 0)
                log_info_errno(r, "Control request from uid %u refused: %m", (unsigned) cred.uid);
        snprintf(reply, sizeof reply, r < 0 ? CONTROL_ERR " %d" : CONTROL_OK, -r);
        (void) send(fd, reply, strlen(reply), MSG_DONTWAIT | MSG_NOSIGNAL);
        request_conn_free(c);
        return 0;
}

static int on_connect(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        return request_server_accept(m, &m->control_server, fd);
}

void control_setup(Manager *m, const char *path) {
        char dir[PATH_MAX];
        int fd, r;

        if (!path || !path[0])
                return;
        m->control_server = (RequestServer) { .max_conns = CONTROL_CONNECTIONS_MAX,
                                              .max_per_uid = CONTROL_CONNECTIONS_PER_UID,
                                              .timeout_usec = CONTROL_TIMEOUT_USEC, .handle = on_request };
        /* its directory (/run/coredumpctl, systemd's RuntimeDirectory= or ours) */
        snprintf(dir, sizeof dir, "%s", path);
        (void) mkdir(dirname(dir), CONTROL_DIR_MODE);
        fd = request_server_bind(path, CONTROL_SOCKET_MODE, (int) CONTROL_CONNECTIONS_MAX);
        if (fd < 0) {
                log_warning_errno(fd, "Failed to bind the control socket %s, coredumpctl delete needs root: %m", path);
                return;
        }
        r = sd_event_add_io(m->event, &m->control_source, fd, EPOLLIN, on_connect, m);
        if (r < 0) {
                safe_close(fd);
                log_warning_errno(r, "Failed to watch the control socket: %m");
                return;
        }
        (void) sd_event_source_set_io_fd_own(m->control_source, true);
        snprintf(m->control_path, sizeof m->control_path, "%s", path);
}

void control_free(Manager *m) {
        m->control_source = sd_event_source_disable_unref(m->control_source);
        request_server_close_all(&m->control_server);
        if (m->control_path[0])
                (void) unlink(m->control_path);
        m->control_path[0] = 0;
}
