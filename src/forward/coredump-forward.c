/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump-forward: hands one crash to the collector of the container it happened in, in
 * systemd-coredump's protocol (forward-proto.h), so the container's own coredumpctl lists it.
 *
 *   coredump-forward CORE-NAME [--userns] [--pidfd]
 *   coredump-forward --launcher   (launcher.c: what starts the others, once)
 *
 * Started for one crash by the launcher, as coredumpd's child, with the descriptors it needs and
 * nothing else:
 *   3  the core as the host stored it (CORE-NAME's suffix says how it is compressed)
 *   4  the fields to send (a sealed record, already in the container's terms)
 *   5  the container's root directory (O_PATH), beneath which its collector's socket is found
 *   6  with --userns: the container's user namespace, entered to connect as its root
 *   7  with --pidfd: the crashed process's pidfd, passed on
 *   8  the container's PID namespace, which the sending child joins (systemd's socket unit
 *      names its instance by the peer's PID, which must be visible in the container)
 * It never enters the container's mount namespace and runs none of its code: the socket is
 * resolved beneath the container's root (no symbolic link leaves it, the end must be a socket)
 * and connected to through that descriptor. A child, as nobody and confined (confine.h),
 * decompresses the core into a pipe whose read end the collector gets. Exit 0 once everything
 * was sent and the whole core written into the pipe; coredumpd's deadline kills it (and the
 * child) if the container does not take it. May touch: the descriptors above; host root (the
 * launcher's five capabilities) until it joins the container's user namespace, its root there
 * after; nothing of the file system but the socket beneath fd 5 and /proc/self/fd. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine.h"
#include "ctl-decompress.h"
#include "fd-util.h"
#include "forward-proto.h"
#include "launcher.h"
#include "log.h"
#include "macro.h"
#include "record.h"

#define CORE_FD 3
#define FIELDS_FD 4
#define ROOT_FD 5
#define USERNS_FD 6
#define PIDFD_FD 7
#define PIDNS_FD 8

/* The exit status for the first failure (FORWARD_EXIT_*), as coredumpd reads it. */
static int exit_status = FORWARD_EXIT_FAILED;

static int fail(int status, int r) {
        exit_status = status;
        return r;
}

/* The collector's socket beneath the container's root: symbolic links resolve inside it, the
 * result must be a socket. */
static int open_collector_socket(void) {
        struct open_how how = {
                .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        struct stat st;
        int fd = (int) syscall(SYS_openat2, ROOT_FD, &FORWARD_SOCKET_PATH[1], &how, sizeof how);

        /* where openat2 is filtered (a service manager's seccomp answers ENOSYS for calls its
         * libseccomp does not know): the same walk by hand, stricter (no symlink at all) */
        if (fd < 0 && (errno == ENOSYS || errno == EPERM))
                fd = fd_walk_beneath(ROOT_FD, FORWARD_SOCKET_PATH);
        else if (fd < 0)
                fd = negative_errno();
        if (fd < 0)
                return fail(FORWARD_EXIT_NO_SOCKET, log_error_errno(fd, "The container has no %s: %m", FORWARD_SOCKET_PATH));
        if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
                safe_close(fd);
                return fail(FORWARD_EXIT_NO_SOCKET,
                            log_error_errno(-ENOTSOCK, "The container's %s is not a socket", FORWARD_SOCKET_PATH));
        }
        return fd;
}

/* Its root from here on, so that the collector sees root connect (what systemd's sender is):
 * the namespace's owner first (who may join it without any capability; root for nspawn -U,
 * the user for a rootless container), no supplementary group left, then root inside. */
static int become_container_root(pid_t parent) {
        uid_t owner;
        gid_t none;

        if (ioctl(USERNS_FD, NS_GET_OWNER_UID, &owner) < 0)
                return fail(FORWARD_EXIT_USERNS, log_error_errno(negative_errno(), "Cannot read the owner of the "
                                                                                   "container's user namespace: %m"));
        if (setgroups(0, NULL) < 0 || (owner != 0 && setresuid(owner, owner, owner) < 0))
                return fail(FORWARD_EXIT_USERNS, log_error_errno(negative_errno(), "Cannot become the owner (%u) of the "
                                                                                   "container's user namespace: %m",
                                                                 (unsigned) owner));
        if (setns(USERNS_FD, CLONE_NEWUSER) < 0)
                return fail(FORWARD_EXIT_USERNS,
                            log_error_errno(negative_errno(), "Cannot enter the container's user namespace: %m"));
        if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0 || getgroups(1, &none) != 0)
                return fail(FORWARD_EXIT_USERNS, log_error_errno(negative_errno(),
                                                                 "Cannot become root in the container's user namespace: %m"));
        return forward_stay_private(parent) < 0 ? fail(FORWARD_EXIT_USERNS, -EPERM) : 0;
}

static int connect_to(int sockfd_path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        if (s < 0)
                return negative_errno();
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d", sockfd_path);
        if (connect(s, (struct sockaddr *) &sa, sizeof sa) < 0) {
                int r = negative_errno();
                safe_close(s);
                /* a socket nobody listens on (its collector stopped, the file left behind) */
                return fail(r == -ECONNREFUSED ? FORWARD_EXIT_NO_SOCKET : FORWARD_EXIT_CONNECT,
                            log_error_errno(r, "Cannot connect to the container's %s: %m", FORWARD_SOCKET_PATH));
        }
        return s;
}

static int send_fields(int s, const uint8_t *rec, size_t len) {
        size_t pos = 0;
        RecordField f;
        int r;

        while ((r = record_next(rec, len, &pos, &f)) > 0) {
                r = forward_send_field(s, f.name, f.name_len, f.value, f.value_len);
                if (r < 0)
                        return fail(FORWARD_EXIT_SEND, log_error_errno(r, "Cannot send %.*s: %m", (int) f.name_len, f.name));
        }
        return r < 0 ? log_error_errno(r, "The fields to send are malformed") : 0;
}

static int read_fields(uint8_t **ret, size_t *ret_len) {
        struct stat st;
        uint8_t *buf;
        ssize_t n;

        if (fstat(FIELDS_FD, &st) < 0 || st.st_size <= 0 || (uint64_t) st.st_size > RECORD_MAX)
                return -EBADMSG;
        buf = malloc((size_t) st.st_size);
        if (!buf)
                return -ENOMEM;
        n = pread(FIELDS_FD, buf, (size_t) st.st_size, 0);
        if (n != st.st_size) {
                free(buf);
                return -EIO;
        }
        *ret = buf;
        *ret_len = (size_t) n;
        return 0;
}

/* The decompressor's confinement: nobody, the five descriptors it has, no file it could write
 * (the pipe is none), no process it could start; the address space zstd's window needs (the
 * largest a frame may ask of a decoder by default, ZSTD_WINDOWLOG_LIMIT_DEFAULT, 128 MiB), with
 * room for the rest. No more system calls than reading and writing those descriptors: what the
 * sanitizers' runtime needs besides, it cannot have, so their builds leave the address space
 * unbounded (its shadow memory) and the filter as it is. */
#define DECOMPRESS_NOFILE 8U
#ifdef SANITIZED
#define DECOMPRESS_AS RLIM_INFINITY
#else
#define DECOMPRESS_AS ((rlim_t) 512 << 20)
#endif
static const ConfineSpec decompress_confinement = {
        .id = CONFINE_NOBODY,
        .nofile = DECOMPRESS_NOFILE,
        .as = DECOMPRESS_AS,
        .fsize = 0,
        .nproc = 0,
};

/* The child that writes the core uncompressed into the pipe; the pipe's read end to send. */
static int start_decompressor(const char *name, pid_t *ret_pid) {
        pid_t parent = getpid(), pid;
        int p[2];

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0) {
                safe_close(p[0]);
                safe_close(p[1]);
                return negative_errno();
        }
        if (pid == 0) {
                int keep[] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, CORE_FD, p[1] };
                int r;

                /* nothing but the stored core and the pipe (a copy of the connection would keep its
                 * end from the collector); confined as a worker is (confine.h): what it reads a
                 * worker wrote */
                if (close_all_fds_except(keep, ELEMENTSOF(keep)) < 0)
                        _exit(log_error_errno(negative_errno(), "Cannot close the other descriptors: %m") < 0);
                /* nothing it writes reaches coredumpd's log (a compromised one could write lines as
                 * coredumpd): the forwarder's exit status says what became of the core */
                if (fd_null_stdio() < 0)
                        _exit(EXIT_FAILURE);
                r = confine_drop(&decompress_confinement);
                if (r < 0)
                        _exit(log_error_errno(r, "Cannot become nobody to decompress: %m") < 0);
                if (forward_stay_private(parent) < 0)
                        _exit(log_error_errno(-EPERM, "Cannot stay private while decompressing") < 0);
                r = confine_lock(&decompress_confinement);
                if (r < 0)
                        _exit(log_error_errno(r, "Cannot confine the decompression: %m") < 0);
                r = decompress_core(name, CORE_FD, p[1], false);
                if (r == -EPIPE)
                        log_error("The container's collector stopped reading the core");
                else if (r < 0)
                        log_error_errno(r, "Cannot read the stored core: %m");
                _exit(r < 0 ? 1 : 0);
        }
        safe_close(p[1]);
        safe_close(CORE_FD);
        *ret_pid = pid;
        return p[0];
}

/* No capability left: the sender needs none (it is root of the socket's owner). */
static int drop_capabilities(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

        return syscall(SYS_capset, &h, d) < 0 ? negative_errno() : 0;
}

/* Connects and sends everything: in a child that is a member of the container's PID namespace
 * (systemd's socket unit names its instance by the peer's PID, which must be visible there);
 * its exit status is the result. */
static int send_from_pidns(int sockpath, const uint8_t *fields, size_t len, int core, bool pidfd) {
        siginfo_t si = {};
        pid_t self = getpid(), pid;

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                _cleanup_close_ int s = -EBADF;
                /* its parent is outside its PID namespace: getppid() says 0 */
                int r = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
                                        (getppid() != 0 && getppid() != self) || drop_capabilities() < 0
                                ? -EPERM
                                : 0;

                if (r >= 0)
                        r = s = connect_to(sockpath);
                if (r >= 0)
                        r = send_fields(s, fields, len);
                if (r >= 0 && (r = forward_send_fd(s, core)) < 0)
                        fail(FORWARD_EXIT_SEND, log_error_errno(r, "Cannot pass the core: %m"));
                if (r >= 0 && pidfd && (r = forward_send_fd(s, PIDFD_FD)) < 0)
                        fail(FORWARD_EXIT_SEND, log_error_errno(r, "Cannot pass the pidfd: %m"));
                _exit(r < 0 ? exit_status : FORWARD_EXIT_OK);
        }
        if (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                return negative_errno();
        if (si.si_code != CLD_EXITED || si.si_status != FORWARD_EXIT_OK)
                return fail(si.si_code == CLD_EXITED ? si.si_status : FORWARD_EXIT_FAILED, -EPROTO);
        return 0;
}

static int run(const char *name, bool userns, bool pidfd, pid_t parent) {
        _cleanup_free_ uint8_t *fields = NULL;
        _cleanup_close_ int sockpath = -EBADF, core = -EBADF;
        size_t len = 0;
        pid_t child = 0;
        siginfo_t si = {};
        int r;

        r = read_fields(&fields, &len);
        if (r < 0)
                return log_error_errno(r, "No fields to send: %m");
        sockpath = open_collector_socket();
        if (sockpath < 0)
                return sockpath;
        /* before any change of credentials: the child is nobody, never the container's root */
        core = start_decompressor(name, &child);
        if (core < 0)
                return log_error_errno(core, "Cannot start reading the stored core: %m");
        /* the PID namespace first: with the host's CAP_SYS_ADMIN, which joining the user namespace
         * leaves behind (systemd-nspawn makes the PID namespace outside the user namespace) */
        r = setns(PIDNS_FD, CLONE_NEWPID) < 0
                    ? fail(FORWARD_EXIT_PIDNS,
                           log_error_errno(negative_errno(), "Cannot join the container's PID namespace: %m"))
                    : 0;
        if (r >= 0 && userns)
                r = become_container_root(parent);
        if (r >= 0)
                r = send_from_pidns(sockpath, fields, len, core, pidfd);
        core = safe_close(core); /* the end of the message went with the connection */
        if (r < 0) {
                (void) kill(child, SIGKILL);
                (void) waitid(P_PID, (id_t) child, &si, WEXITED);
                return r;
        }
        /* done when the whole core went into the pipe (or the collector gave up: it broke) */
        if (waitid(P_PID, (id_t) child, &si, WEXITED) < 0)
                return negative_errno();
        if (si.si_code != CLD_EXITED || si.si_status != 0)
                return fail(FORWARD_EXIT_CORE, log_error_errno(-EPIPE, "The container's collector did not read the whole core"));
        return 0;
}

int main(int argc, char **argv) {
        int keep[] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, CORE_FD, FIELDS_FD, ROOT_FD, USERNS_FD, PIDFD_FD,
                       PIDNS_FD };
        pid_t parent = getppid();
        bool userns = false, pidfd = false;

        log_setup("coredump-forward");
        if (argc == 2 && strcmp(argv[1], "--launcher") == 0)
                return launcher_run() < 0 ? 1 : 0;
        if (forward_stay_private(parent) < 0 || close_all_fds_except(keep, ELEMENTSOF(keep)) < 0)
                return 1;
        (void) signal(SIGPIPE, SIG_IGN);
        if (argc < 2 || strchr(argv[1], '/')) {
                fprintf(stderr, "usage: coredump-forward CORE-NAME [--userns] [--pidfd] (started by coredumpd)\n");
                return 2;
        }
        for (int i = 2; i < argc; i++) {
                if (strcmp(argv[i], "--userns") == 0)
                        userns = true;
                else if (strcmp(argv[i], "--pidfd") == 0)
                        pidfd = true;
                else {
                        fprintf(stderr, "coredump-forward: unknown argument %s\n", argv[i]);
                        return 2;
                }
        }
        return run(argv[1], userns, pidfd, parent) < 0 ? exit_status : FORWARD_EXIT_OK;
}
