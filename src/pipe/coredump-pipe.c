/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump-pipe: the usermode helper of pipe mode, for kernels without the coredump socket.
 *
 *   core_pattern = |.../coredump-pipe HANDOVER-SOCKET %P %I %u %g %s %t %c %h %d %F
 *
 * The kernel runs it per crash as root with every privilege, the core on stdin and (with %F,
 * Linux 6.16 and stable kernels that took it) a pidfd of the crashed process as fd 3. So it does
 * as little as possible: it is never dumpable, checks its arguments strictly, and hands the
 * pipe, the pidfd and the arguments to the running coredumpd over its root-only handover
 * socket, then exits. It never reads the core and never writes a file. If coredumpd is not
 * running the core is dropped and the kernel log says so: storing it here would mean a fully
 * privileged process parsing hostile input, which is what the socket design is for avoiding. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "macro.h"
#include "parse-util.h"
#include "proto.h"

#define ARGS_WITHOUT_PIDFD 11 /* argv[0] SOCKET %P %I %u %g %s %t %c %h %d */
#define ARGS_WITH_PIDFD 12    /* ... %F ("3") */
#define PIDFD_FD 3
#define ACK_TIMEOUT_MS 2000
#define KMSG_LINE_MAX 256

/* The kernel log is all a usermode helper has to report to. */
_printf_(1, 2) static void kmsg(const char *fmt, ...) {
        char line[KMSG_LINE_MAX];
        va_list ap;
        int fd, n;

        n = snprintf(line, sizeof line, "<3>coredump-pipe[%d]: ", (int) getpid());
        va_start(ap, fmt);
        n += vsnprintf(line + n, sizeof line - (size_t) n, fmt, ap);
        va_end(ap);
        fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
                (void) !write(fd, line, (size_t) MIN(n, (int) sizeof line - 1));
                close(fd);
        }
}

static int parse_u32(const char *s, uint32_t *ret) {
        uint64_t v;

        if (parse_uint64(s, &v) < 0 || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

static int parse_pid(const char *s, int32_t *ret) {
        uint32_t v;

        if (parse_u32(s, &v) < 0 || v == 0 || v > INT32_MAX)
                return -EINVAL;
        *ret = (int32_t) v;
        return 0;
}

static bool hostname_valid(const char *h) {
        size_t l = strlen(h);

        if (l == 0 || l > HANDOVER_HOSTNAME_MAX)
                return false;
        for (size_t i = 0; i < l; i++)
                if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
                      h[i] == '-' || h[i] == '.' || h[i] == '_'))
                        return false;
        return true;
}

/* fd 3 is a pidfd of pid: its fdinfo says so. */
static bool is_pidfd_of(int fd, int32_t pid) {
        char path[64], buf[1024], *p;
        ssize_t n;
        int f;

        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
        f = open(path, O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return false;
        n = read(f, buf, sizeof buf - 1);
        close(f);
        if (n <= 0)
                return false;
        buf[n] = 0;
        p = strstr(buf, "\nPid:\t");
        return p && strtol(p + 6, NULL, 10) == pid;
}

static int parse_args(int argc, char **argv, MsgHandover *m) {
        uint32_t sig, dumpable;
        uint64_t v;

        if (argc != ARGS_WITHOUT_PIDFD && argc != ARGS_WITH_PIDFD)
                return -EINVAL;
        *m = (MsgHandover) { .hdr = { PROTO_MAGIC, MSG_HANDOVER } };
        if (argv[1][0] != '/' || strlen(argv[1]) >= sizeof ((struct sockaddr_un *) 0)->sun_path ||
            parse_pid(argv[2], &m->pid) < 0 || parse_pid(argv[3], &m->tid) < 0 || parse_u32(argv[4], &m->uid) < 0 ||
            parse_u32(argv[5], &m->gid) < 0 || parse_u32(argv[6], &sig) < 0 || sig == 0 || sig > 64 ||
            parse_uint64(argv[7], &m->timestamp) < 0 || parse_uint64(argv[8], &v) < 0 || !hostname_valid(argv[9]) ||
            parse_u32(argv[10], &dumpable) < 0 || dumpable > 2)
                return -EINVAL;
        m->signal = (int32_t) sig;
        m->rlimit = v;
        m->dumpable = dumpable;
        memcpy(m->hostname, argv[9], strlen(argv[9]));
        if (argc == ARGS_WITH_PIDFD) {
                if (strcmp(argv[11], "3") != 0 || !is_pidfd_of(PIDFD_FD, m->pid))
                        return -EBADF;
                m->has_pidfd = 1;
        }
        return 0;
}

/* socket: from core_pattern, which only root can write */
static int hand_over(const char *socket_path, const MsgHandover *m) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const int fds[2] = { STDIN_FILENO, PIDFD_FD };
        _cleanup_close_ int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        struct pollfd p;
        ssize_t n;
        char ack;
        int r;

        if (sock < 0)
                return -errno;
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", socket_path);
        if (connect(sock, (struct sockaddr *) &sa, sizeof sa) < 0)
                return -errno;
        r = proto_send(sock, m, sizeof *m, fds, m->has_pidfd ? 2 : 1);
        if (r < 0)
                return r;
        /* wait for coredumpd to say it took them (or why not) */
        p = (struct pollfd) { .fd = sock, .events = POLLIN };
        r = poll(&p, 1, ACK_TIMEOUT_MS);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT; /* sent: the handover is in coredumpd's queue */
        n = read(sock, &ack, 1);
        if (n < 0)
                return -errno;
        if (n == 0)
                return -ECONNRESET; /* closed unanswered (at its connection limit): not taken */
        return ack == 1 ? 0 : -EPROTO;
}

int main(int argc, char **argv) {
        MsgHandover m;
        int null, r;

        /* first: a crash of ours must not recurse into another dump */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        null = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (null >= 0) {
                (void) dup2(null, STDOUT_FILENO);
                (void) dup2(null, STDERR_FILENO);
                if (null > STDERR_FILENO && null != PIDFD_FD)
                        close(null);
        }
        r = parse_args(argc, argv, &m);
        if (r < 0) {
                kmsg("refusing a core: malformed arguments (%d given)\n", argc - 1);
                return 1;
        }
        r = hand_over(argv[1], &m);
        if (r == -ETIMEDOUT) {
                kmsg("core of PID %d: no answer from coredumpd within %d ms; the handover waits queued for it\n",
                     (int) m.pid, ACK_TIMEOUT_MS);
                return 0;
        }
        if (r < 0) {
                kmsg("core of PID %d dropped: coredumpd did not take it (%s)\n", (int) m.pid,
                     r == -ECONNRESET ? "it closed the handover unanswered (at its connection limit, or stopping)"
                     : r == -EPROTO   ? "it refused the handover"
                                      : strerror(-r));
                return 1;
        }
        return 0;
}
