/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump-forward --launcher: the one process of coredump-socket that keeps CAP_SYS_ADMIN, which
 * a forwarder needs to join a container's PID namespace made outside its user namespace (as
 * systemd-nspawn makes them). coredumpd starts it before dropping that capability itself, and
 * asks it over a socket pair (launch-proto.h) to start coredump-forward for one crash, as a child
 * of coredumpd's (CLONE_PARENT), which watches and kills it. It keeps five capabilities (what the
 * forwarder needs) and nothing of coredumpd's; it checks every descriptor it is given for what
 * it must be, starts only its own binary, and reads nothing else. May touch: its socket, the
 * descriptors a request brings, /proc/self/exe. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clone-sibling.h"
#include "fd-util.h"
#include "launch-proto.h"
#include "launcher.h"
#include "log.h"
#include "macro.h"

/* What coredump-forward needs of root's privileges: joining a PID namespace made outside the
 * container's user namespace (SYS_ADMIN), becoming the user namespace's owner, its root, and
 * nobody for the decompressor (SETUID, SETGID), emptying the decompressor's bounding set
 * (SETPCAP), finding the collector's socket beneath the container's root whoever owns its
 * directories (DAC_READ_SEARCH). */
static const int kept[] = { CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_DAC_READ_SEARCH };

static uint64_t kept_mask(void) {
        uint64_t m = 0;

        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                m |= UINT64_C(1) << kept[i];
        return m;
}

/* Those five in every set and the bounding set, nothing else (ambient cleared). */
static int keep_capabilities(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
        uint64_t mask = kept_mask();

        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (!((mask >> c) & 1) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return negative_errno();
        d[0].permitted = d[0].effective = (uint32_t) mask;
        d[1].permitted = d[1].effective = (uint32_t) (mask >> 32);
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return negative_errno();
        return 0;
}

int forward_stay_private(pid_t parent) {
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
            getppid() != parent)
                return -EPERM;
        return 0;
}

static bool is_ns(int fd, int type) {
        return ioctl(fd, NS_GET_NSTYPE) == type;
}

static bool is_type(int fd, mode_t type) {
        struct stat st;

        return fstat(fd, &st) >= 0 && (st.st_mode & S_IFMT) == type;
}

/* The request's descriptors are what they must be, and its name a core's. */
static int check_request(const LaunchRequest *req, const int *fds, size_t n) {
        size_t i = 4;

        if (!memchr(req->name, 0, sizeof req->name) || strncmp(req->name, "core.", 5) != 0 || strchr(req->name, '/'))
                return -EINVAL;
        if (!is_type(fds[0], S_IFREG) || !is_type(fds[1], S_IFREG) || !is_type(fds[2], S_IFDIR) ||
            !is_ns(fds[3], CLONE_NEWPID))
                return -EBADF;
        if ((req->flags & LAUNCH_FLAG_USERNS) && (i >= n || !is_ns(fds[i++], CLONE_NEWUSER)))
                return -EBADF;
        if ((req->flags & LAUNCH_FLAG_PIDFD) && i++ >= n)
                return -EBADF;
        return i == n ? 0 : -EBADF;
}

/* One request, its descriptors into fds (*ret_n of them): exactly as many as its flags say. */
static int receive(int sock, LaunchRequest *req, int fds[LAUNCH_FDS_MAX], size_t *ret_n) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * LAUNCH_FDS_MAX)];
        } control = {};
        struct iovec iov = { .iov_base = req, .iov_len = sizeof *req };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = CMSG_LEN(sizeof(int) * LAUNCH_FDS_MAX) };
        size_t n = 0;
        ssize_t k;

        do
                k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k <= 0)
                return k < 0 ? negative_errno() : -ECONNRESET;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n < LAUNCH_FDS_MAX; i++)
                                memcpy(&fds[n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        *ret_n = n;
        if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t) k != sizeof *req || req->hdr.magic != PROTO_MAGIC ||
            req->hdr.type != MSG_LAUNCH || n < 4)
                return -EBADMSG;
        return 0;
}

/* In the new process: the descriptors where coredump-forward expects them (3 core, 4 fields,
 * 5 root, 6 user namespace, 7 pidfd, 8 PID namespace), then its own binary; coredump-forward
 * closes every other descriptor itself (they are all close-on-exec here but those). */
static void exec_forwarder(int self, const LaunchRequest *req, const int *fds, size_t n) {
        int place[6] = { -1, -1, -1, -1, -1, -1 }, high[6];
        char *argv[5] = { (char *) "coredump-forward", (char *) req->name };
        int argc = 2;
        size_t i = 4;
        sigset_t none;

        place[0] = fds[0], place[1] = fds[1], place[2] = fds[2], place[5] = fds[3];
        if (req->flags & LAUNCH_FLAG_USERNS) {
                place[3] = fds[i++];
                argv[argc++] = (char *) "--userns";
        }
        if (req->flags & LAUNCH_FLAG_PIDFD) {
                place[4] = fds[i++];
                argv[argc++] = (char *) "--pidfd";
        }
        /* each (and the binary) above the places first, so that no dup2() overwrites another's
         * source; the binary's stays close-on-exec */
        self = fcntl(self, F_DUPFD_CLOEXEC, 3 + 6);
        for (int k = 0; k < 6; k++)
                high[k] = place[k] < 0 ? -1 : fcntl(place[k], F_DUPFD_CLOEXEC, 3 + 6);
        if (self < 0)
                _exit(EXIT_FAILURE);
        for (int k = 0; k < 6; k++)
                if ((high[k] >= 0 && dup2(high[k], 3 + k) < 0) || (high[k] < 0 && place[k] >= 0))
                        _exit(EXIT_FAILURE);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) signal(SIGPIPE, SIG_DFL);
        syscall(SYS_execveat, self, "", argv, environ, AT_EMPTY_PATH);
        _exit(EXIT_FAILURE);
}

static void serve(int sock, int self) {
        for (;;) {
                LaunchReply reply = { .hdr = { PROTO_MAGIC, MSG_LAUNCHED } };
                LaunchRequest req = {};
                int fds[LAUNCH_FDS_MAX];
                size_t n = 0;
                int r;

                r = receive(sock, &req, fds, &n);
                if (r == -ECONNRESET)
                        return;
                if (r >= 0)
                        r = check_request(&req, fds, n);
                if (r >= 0) {
                        pid_t pid = clone_sibling();
                        if (pid == 0)
                                exec_forwarder(self, &req, fds, n);
                        if (pid < 0)
                                r = pid;
                        else
                                reply.pid = (uint32_t) pid;
                }
                for (size_t i = 0; i < n; i++)
                        safe_close(fds[i]);
                reply.error = r < 0 ? r : 0;
                reply.seq = req.seq;
                if (r < 0)
                        log_error_errno(r, "Refused a request to start a forwarder: %m");
                if (proto_send(sock, &reply, sizeof reply, NULL, 0) < 0)
                        return;
        }
}

int launcher_run(void) {
        int keep[] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, LAUNCHER_SOCKET_FD };
        pid_t parent = getppid();
        _cleanup_close_ int self = -EBADF;
        int r;

        (void) prctl(PR_SET_NAME, "cd-fwd-launcher", 0, 0, 0);
        if (forward_stay_private(parent) < 0 || close_all_fds_except(keep, ELEMENTSOF(keep)) < 0)
                return log_error_errno(-EPERM, "Not started by a live coredumpd");
        /* this very binary, for every forwarder: an upgrade replaces the file, not what runs */
        self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
        if (self < 0)
                return log_error_errno(negative_errno(), "Cannot keep its own binary: %m");
        r = keep_capabilities();
        if (r < 0)
                return log_error_errno(r, "Cannot drop the capabilities a forwarder does not need: %m");
        (void) signal(SIGPIPE, SIG_IGN);
        /* ready: named and down to its five capabilities */
        if (proto_send(LAUNCHER_SOCKET_FD, &(LaunchReply) { .hdr = { PROTO_MAGIC, MSG_LAUNCHED } },
                       sizeof(LaunchReply), NULL, 0) < 0)
                return -EPIPE;
        serve(LAUNCHER_SOCKET_FD, self);
        return 0;
}
