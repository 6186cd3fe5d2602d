/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Forwarding a crash into its container (forward.h): which container, whether its unit asked for
 * it (the cgroup xattrs PID 1 sets), and the short-lived coredump-forward that sends it, under a
 * deadline. Manager (root): reads /proc (the crash's pinned directory and its ancestors) and the
 * cgroup file system's xattrs; starts one process per forwarded crash. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "container.h"
#include "crash-record.h"
#include "crash.h"
#include "fd-util.h"
#include "forward-launch.h"
#include "forward-proto.h"
#include "forward.h"
#include "log.h"
#include "manager.h"
#include "meta.h"
#include "parse-util.h"
#include "pidfd-util.h"
#include "time-util.h"

extern char **environ;

void forward_target_free(ForwardTarget *t) {
        if (!t)
                return;
        safe_close(t->root_fd);
        safe_close(t->userns_fd);
        safe_close(t->pidns_fd);
        free(t);
}

/* The pinned /proc directory of the container's PID 1: the outermost ancestor of the process
 * behind dir in its PID namespace. -ESRCH if the process is that PID 1 itself (its container is
 * gone with it: systemd does not forward then either) or the walk cannot be trusted. */
static int pidns_leader_dir(int dir) {
        int cur = dir;

        for (unsigned depth = 0; depth < CONTAINER_DEPTH_MAX; depth++) {
                int next = container_parent_dir(cur);

                if (next < 0 || container_ns_same(next, dir, "ns/pid") != 1) {
                        safe_close(next);
                        if (cur == dir)
                                return -ESRCH;
                        return cur;
                }
                if (cur != dir)
                        safe_close(cur);
                cur = next;
        }
        if (cur != dir)
                safe_close(cur);
        return -ESRCH;
}

/* Where the unified hierarchy is mounted: /sys/fs/cgroup, or its "unified" directory on a
 * hybrid system. */
static const char *cgroup2_mount(void) {
        static const char *const where[] = { FORWARD_CGROUP_FS, FORWARD_CGROUP_FS "/unified" };
        struct statfs sf;

        for (size_t i = 0; i < ELEMENTSOF(where); i++)
                if (statfs(where[i], &sf) >= 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
                        return where[i];
        return NULL;
}

/* The unit's cgroup directory, if PID 1 owns it: a unit with User= and Delegate=yes gets its
 * cgroup chowned to that user, who may then set user.* xattrs on it; such a unit never asked. */
static int unit_cgroup_dir(const char *unit_path) {
        char path[PATH_MAX];
        const char *fs = cgroup2_mount();
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (!fs)
                return -ENOMEDIUM;
        if (snprintf(path, sizeof path, "%s%s", fs, unit_path) >= (int) sizeof path)
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_uid != 0)
                return -EPERM;
        return TAKE_FD(fd);
}

/* An xattr of the unit's cgroup read as a boolean: 1, 0 (absent or false), <0 error. (trusted.*
 * reads as absent without CAP_SYS_ADMIN, which the manager lacks: PID 1 sets user.delegate too,
 * since systemd 252.) */
static int cgroup_xattr_bool(int dir, const char *name) {
        char value[FORWARD_XATTR_VALUE_MAX + 1];
        ssize_t n;

        n = fgetxattr(dir, name, value, sizeof value - 1);
        if (n < 0)
                return errno == ENODATA || errno == ENOTSUP ? 0 : negative_errno();
        value[n] = 0;
        if (memchr(value, 0, (size_t) n))
                return -EINVAL;
        return parse_boolean(value) > 0;
}

/* Whether the unit around the container's PID 1 asked for its crashes: the cgroup above the
 * leader's (systemd-nspawn puts PID 1 in .../payload, or in the unit's cgroup itself, whose
 * parent is then a slice: no unit, no forwarding, as with systemd). */
static int unit_wants_crashes(const char *leader_cgroup, ForwardTarget *t) {
        _cleanup_close_ int dir = -EBADF;
        char *slash;
        int r;

        if (snprintf(t->cgroup_root, sizeof t->cgroup_root, "%s", leader_cgroup) >= (int) sizeof t->cgroup_root)
                return -ENAMETOOLONG;
        slash = strrchr(t->cgroup_root, '/');
        if (!slash || slash == t->cgroup_root)
                return 0;
        *slash = 0;
        r = cgroup_unit_path(t->cgroup_root, t->unit_path, sizeof t->unit_path);
        if (r < 0)
                return r == -ENXIO ? 0 : r;
        snprintf(t->unit, sizeof t->unit, "%s", strrchr(t->unit_path, '/') + 1);
        dir = unit_cgroup_dir(t->unit_path);
        if (dir == -EPERM)
                return 0;
        if (dir < 0)
                return dir;
        r = cgroup_xattr_bool(dir, FORWARD_XATTR_DELEGATE_TRUSTED);
        if (r <= 0)
                r = cgroup_xattr_bool(dir, FORWARD_XATTR_DELEGATE_USER);
        if (r <= 0)
                return r;
        return cgroup_xattr_bool(dir, FORWARD_XATTR_RECEIVE);
}

static int nspid_count(const char *status) {
        const char *p = strstr(status, "\nNSpid:");
        int n = 0;

        if (!p)
                return -ENODATA;
        for (p += strlen("\nNSpid:"); *p && *p != '\n'; p++)
                if ((*p >= '0' && *p <= '9') && (p[-1] == '\t' || p[-1] == ' ' || p[-1] == ':'))
                        n++;
        return n;
}

/* The n-th (from 1) PID of an NSpid line. */
static int nspid_nth(const char *status, int n, pid_t *ret) {
        const char *p = strstr(status, "\nNSpid:");

        if (!p)
                return -ENODATA;
        p += strlen("\nNSpid:");
        for (int i = 1; i <= n; i++) {
                char *end;
                long v = strtol(p, &end, 10);

                if (end == p || v <= 0 || v > INT32_MAX)
                        return -EBADMSG;
                if (i == n) {
                        *ret = (pid_t) v;
                        return 0;
                }
                p = end;
        }
        return -EBADMSG;
}

/* The crashed process's PID, UID and GID as the container's PID 1 sees them. */
static int translate_ids(int procdir, int leader_dir, bool own_userns, uint32_t ruid, uint32_t rgid,
                         ForwardTarget *t) {
        char status[8192], lstatus[8192], map[4096];
        int depth;

        if (read_small_file_at(procdir, "status", status, sizeof status) <= 0 ||
            read_small_file_at(leader_dir, "status", lstatus, sizeof lstatus) <= 0)
                return -ESRCH;
        depth = nspid_count(lstatus);
        if (depth <= 0 || nspid_nth(status, depth, &t->pid) < 0)
                return -EBADMSG;
        t->uid = ruid;
        t->gid = rgid;
        if (!own_userns)
                return 0;
        if (read_small_file_at(leader_dir, "uid_map", map, sizeof map) <= 0 || container_map_id(map, ruid, &t->uid) < 0)
                t->uid = FORWARD_OVERFLOW_ID;
        if (read_small_file_at(leader_dir, "gid_map", map, sizeof map) <= 0 || container_map_id(map, rgid, &t->gid) < 0)
                t->gid = FORWARD_OVERFLOW_ID;
        return 0;
}

static int leader_cgroup(int leader_dir, char *buf, size_t size) {
        char raw[4096];

        if (read_small_file_at(leader_dir, "cgroup", raw, sizeof raw) <= 0)
                return -ESRCH;
        return cgroup_unified_path(raw, buf, size);
}

int forward_target_find(int procdir, int host, uint32_t ruid, uint32_t rgid, ForwardTarget **ret) {
        _cleanup_close_ int leader = -EBADF, self = -EBADF;
        char cg[PATH_MAX], state[4096], *p;
        ForwardTarget *t;
        int r, userns;

        if (host < 0 || container_ns_same(procdir, host, "ns/pid") != 0)
                return 0;
        leader = pidns_leader_dir(procdir);
        if (leader < 0)
                return 0;
        /* alive: not exited, not dumping core itself (its collector is gone with it) */
        if (read_small_file_at(leader, "status", state, sizeof state) <= 0 || !(p = strstr(state, "\nState:")))
                return 0;
        p += strlen("\nState:");
        p += strspn(p, " \t");
        if (*p == 'Z' || *p == 'X' || *p == 0 || meta_process_dumping(leader))
                return 0;
        if (leader_cgroup(leader, cg, sizeof cg) < 0)
                return 0;
        t = calloc(1, sizeof *t);
        if (!t)
                return -ENOMEM;
        *t = (ForwardTarget) { .root_fd = -EBADF, .userns_fd = -EBADF, .pidns_fd = -EBADF };
        r = unit_wants_crashes(cg, t);
        if (r <= 0) {
                if (r < 0)
                        log_debug_errno(r, "Not forwarding: the container's unit cannot be checked: %m");
                forward_target_free(t);
                return 0;
        }
        self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        userns = container_ns_same(leader, self, "ns/user");
        t->root_fd = openat(leader, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        t->pidns_fd = openat(leader, "ns/pid", O_RDONLY | O_CLOEXEC);
        if (userns == 0)
                t->userns_fd = openat(leader, "ns/user", O_RDONLY | O_CLOEXEC);
        r = userns < 0 || t->root_fd < 0 || t->pidns_fd < 0 || (userns == 0 && t->userns_fd < 0) ? -ESRCH : 0;
        if (r >= 0)
                r = translate_ids(procdir, leader, userns == 0, ruid, rgid, t);
        if (r < 0) {
                forward_target_free(t);
                return r;
        }
        *ret = t;
        return 1;
}

static void forwarder_free(Forwarder *f) {
        if (!f)
                return;
        sd_event_source_disable_unref(f->child_source);
        sd_event_source_disable_unref(f->timer_source);
        safe_close(f->pidfd);
        free(f);
}

void forward_stop(Forwarder *f) {
        if (!f)
                return;
        if (f->pidfd >= 0) {
                (void) pidfd_send_sig(f->pidfd, SIGKILL);
                (void) waitid((idtype_t) P_PIDFD, (id_t) f->pidfd, &(siginfo_t) {}, WEXITED);
        }
        forwarder_free(f);
}

static void forward_done(Forwarder *f, int error, const char *why) {
        Crash *c = f->crash;

        c->forwarder = NULL;
        forward_stop(f);
        crash_forwarded(c, error, why);
}

static int on_forwarder_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Forwarder *f = userdata;
        bool ok = si->si_code == CLD_EXITED && si->si_status == FORWARD_EXIT_OK;

        f->pidfd = safe_close(f->pidfd); /* reaped */
        forward_done(f, ok ? 0 : -EPROTO,
                     si->si_code == CLD_EXITED ? forward_exit_to_string(si->si_status) : "the forwarder was killed");
        return 0;
}

static int on_forwarder_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        forward_done(userdata, -ETIMEDOUT, "the container's collector did not take it within ForwardTimeoutSec=");
        return 0;
}

int forward_start(Crash *c, int core_fd, const char *name) {
        Manager *m = c->manager;
        const ForwardTarget *t = c->forward;
        _cleanup_close_ int memfd = -EBADF;
        Record fields = {};
        Forwarder *f;
        int r;

        if (!forward_launcher_ready(m))
                return -ENOENT;
        r = forward_fields(c->record.buf, c->record.len, t, c->forward_signal,
                           c->pipe && c->pipe_hostname[0] ? c->pipe_hostname : NULL, c->pidfd >= 0, &fields);
        if (r < 0)
                return r;
        memfd = crash_record_memfd(&fields);
        record_free(&fields);
        if (memfd < 0)
                return memfd;
        f = calloc(1, sizeof *f);
        if (!f)
                return -ENOMEM;
        *f = (Forwarder) { .crash = c, .pidfd = -EBADF };
        /* started by the launcher, which keeps CAP_SYS_ADMIN for it, as our child */
        r = forward_launcher_request(m, name, core_fd, memfd, t->root_fd, t->pidns_fd, t->userns_fd, c->pidfd, &f->pid);
        if (r >= 0) {
                f->pidfd = pidfd_open_pid(f->pid);
                r = f->pidfd < 0 ? f->pidfd : 0;
        }
        if (r >= 0)
                r = sd_event_add_child_pidfd(m->event, &f->child_source, f->pidfd, WEXITED, on_forwarder_exit, f);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &f->timer_source, CLOCK_MONOTONIC,
                                               m->config.forward_timeout_usec, 0, on_forwarder_deadline, f);
        if (r < 0) {
                if (f->pid > 0 && f->pidfd < 0) { /* started, but not to be watched: gone at once */
                        (void) kill(f->pid, SIGKILL);
                        (void) waitpid(f->pid, NULL, 0);
                }
                forward_stop(f);
                return r;
        }
        c->forwarder = f;
        return 0;
}
