/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump-worker: single use. Started by coredumpd ahead of time with its control socket on
 * fd 3, it enters its sandbox, says READY, takes exactly one job (the kernel's connection and
 * the unnamed output file), streams and compresses that core, reports, and exits. */
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <sys/prctl.h>

#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "proto.h"
#include "receive.h"
#include "sandbox.h"
#include "sink.h"

enum { JOB_FD_CONN, JOB_FD_OUT, JOB_FDS };

static int parse_id(const char *s, unsigned *ret) {
        uint64_t v;
        int r = parse_uint64(s, &v);

        if (r < 0)
                return r;
        if (v >= UINT32_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

static int parse_args(int argc, char **argv, uid_t *uid, gid_t *gid) {
        static const struct option opts[] = {
                { "uid", required_argument, NULL, 'u' },
                { "gid", required_argument, NULL, 'g' },
                {},
        };
        unsigned u = UID_INVALID, g = GID_INVALID;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (c) {
                case 'u':
                        if (parse_id(optarg, &u) < 0)
                                return log_error_errno(-EINVAL, "Invalid --uid '%s'", optarg);
                        break;
                case 'g':
                        if (parse_id(optarg, &g) < 0)
                                return log_error_errno(-EINVAL, "Invalid --gid '%s'", optarg);
                        break;
                default:
                        return -EINVAL;
                }
        if (u == UID_INVALID || g == GID_INVALID || optind != argc)
                return log_error_errno(-EINVAL, "Usage: coredump-worker --uid UID --gid GID (started by coredumpd)");
        *uid = u;
        *gid = g;
        return 0;
}

static int wait_job(MsgJob *job, int fds[JOB_FDS]) {
        struct pollfd p = { .fd = WORKER_CONTROL_FD, .events = POLLIN };
        int r;

        for (;;) {
                if (poll(&p, 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                r = proto_recv(WORKER_CONTROL_FD, MSG_JOB, job, sizeof *job, fds, JOB_FDS);
                if (r != -EAGAIN)
                        return r;
        }
}

static int job_valid(const MsgJob *job) {
        if (job->compression > COMPRESSION_LZ4 || (job->flags & ~JOB_FLAG_STORE) || job->spare != 0)
                return -EBADMSG;
        return 0;
}

static int run_job(const MsgJob *job, int conn, int out) {
        _cleanup_(sink_freep) Sink *sink = NULL;
        MsgResult res;
        int r;

        /* The manager accepted it non-blocking; this process only ever waits on it. */
        r = fd_set_nonblock(conn, false);
        if (r < 0)
                return log_error_errno(r, "Failed to make the connection blocking: %m");
        if (job->flags & JOB_FLAG_STORE) {
                r = sink_new((Compression) job->compression, job->compress_level, out, &sink);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up %s compression: %m",
                                               compression_to_string((Compression) job->compression));
        }
        r = core_receive(conn, sink, out, job, &res);
        if (r < 0)
                return log_error_errno(r, "Failed to receive the core: %m");
        r = proto_send(WORKER_CONTROL_FD, &res, sizeof res, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to report to the manager: %m");
        return 0;
}

int main(int argc, char **argv) {
        MsgReady ready = { .hdr = { PROTO_MAGIC, MSG_READY } };
        int fds[JOB_FDS] = { -EBADF, -EBADF };
        MsgJob job;
        uid_t uid = UID_INVALID;
        gid_t gid = GID_INVALID;
        int r;

        /* First thing: a crash in here must never be dumped into the daemon. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        log_setup("coredump-worker");

        if (parse_args(argc, argv, &uid, &gid) < 0)
                return 2;
        if (sandbox_enter(uid, gid) < 0)
                return 3;

        ready.pid = (uint32_t) getpid();
        r = proto_send(WORKER_CONTROL_FD, &ready, sizeof ready, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to announce readiness: %m"), 1;

        r = wait_job(&job, fds);
        if (r == -ECONNRESET)
                return 0; /* the manager let us go without a job */
        if (r < 0 || job_valid(&job) < 0)
                return log_error_errno(r < 0 ? r : -EBADMSG, "Invalid job from the manager: %m"), 1;

        r = run_job(&job, fds[JOB_FD_CONN], fds[JOB_FD_OUT]);
        safe_close(fds[JOB_FD_OUT]);
        return r < 0 ? 1 : 0;
}
