/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Container facts of a crashed process: its namespaces against the host's (PID 1's), the process
 * that started its container, its PID, UID and GID as the container sees them. Manager (root):
 * reads only /proc: the task by its verified dirfd, pinned ancestors, PID 1. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "container.h"
#include "fd-util.h"
#include "macro.h"
#include "meta.h"
#include "pidfd-util.h"

int container_ns_same(int dir_a, int dir_b, const char *ns) {
        struct stat a, b;

        if (fstatat(dir_a, ns, &a, 0) < 0 || fstatat(dir_b, ns, &b, 0) < 0)
                return negative_errno();
        return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static pid_t parent_of(int dir) {
        char status[4096];
        const char *p;

        if (read_small_file_at(dir, "status", status, sizeof status) <= 0 || !(p = strstr(status, "\nPPid:")))
                return 0;
        return (pid_t) strtol(p + 6, NULL, 10);
}

/* Pinned: its pidfd is taken, then the child is checked to still have that parent. A parent
 * that died meanwhile has reparented its children before its PID could be reused, so a PID
 * recycled between reading PPid and pidfd_open() never passes. */
int container_parent_dir(int dir) {
        pid_t ppid = parent_of(dir);
        _cleanup_close_ int pidfd = -EBADF, pdir = -EBADF;
        char path[32];

        if (ppid <= 1)
                return -ESRCH;
        pidfd = pidfd_open_pid(ppid);
        if (pidfd < 0)
                return -ESRCH;
        snprintf(path, sizeof path, "/proc/%d", (int) ppid);
        pdir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (pdir < 0 || pidfd_check_alive(pidfd) < 0 || parent_of(dir) != ppid)
                return -ESRCH;
        return TAKE_FD(pdir);
}

/* The outermost ancestor of this process below PID 1 whose namespaces can be inspected: the
 * session that started the manager by hand, in the host's namespaces. */
static int outermost_ancestor_dir(void) {
        int cur = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;

        for (unsigned depth = 0; cur >= 0 && depth < CONTAINER_DEPTH_MAX; depth++) {
                int next = container_parent_dir(cur);

                if (next < 0 || fstatat(next, "ns/mnt", &st, 0) < 0 || fstatat(next, "ns/pid", &st, 0) < 0) {
                        safe_close(next);
                        break;
                }
                safe_close(cur);
                cur = next;
        }
        return cur;
}

/* The outermost ancestor's directory, found once and kept while that process lives (a walk up
 * the manager's ancestors per crash cost more than the rest of its /proc reads): what is asked of
 * it is the host's namespaces, which it keeps even if the manager is reparented away from it;
 * once it is gone (its namespaces read as missing) the walk is made again. A kept directory names
 * that process only, never a later one with its PID. */
static int outermost_ancestor_kept(void) {
        static int kept = -EBADF;
        struct stat st;
        int fd;

        if (kept >= 0 && fstatat(kept, "ns/mnt", &st, 0) < 0)
                kept = safe_close(kept);
        if (kept < 0)
                kept = outermost_ancestor_dir();
        if (kept < 0)
                return kept;
        fd = fcntl(kept, F_DUPFD_CLOEXEC, 3);
        return fd < 0 ? negative_errno() : fd;
}

/* PID 1's /proc directory if its namespaces can be inspected. */
static int pid1_dir(void) {
        _cleanup_close_ int fd = open("/proc/1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstatat(fd, "ns/mnt", &st, 0) < 0 || fstatat(fd, "ns/pid", &st, 0) < 0)
                return -EACCES;
        return TAKE_FD(fd);
}

int container_host_dir(void) {
        static int pid1 = -EBADF; /* kept once found: PID 1 lives as long as the system */
        int fd;

        if (pid1 < 0)
                pid1 = pid1_dir();
        if (pid1 >= 0) {
                fd = fcntl(pid1, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? negative_errno() : fd;
        }
        /* A service manager's units may run in namespaces of their own (ours does): its PID 1 is
         * the only reference then, and one that cannot be inspected leaves the question open. */
        if (getenv("INVOCATION_ID"))
                return -EACCES;
        return outermost_ancestor_kept();
}

int container_leader(int dir, int host) {
        int cur = dir;

        if (host < 0 || container_ns_same(dir, host, "ns/mnt") != 0)
                return -ESRCH;
        /* systemd's COREDUMP_CONTAINER_CMDLINE: the first ancestor in another mount namespace
         * than the crashed process's, i.e. the one that started (or moved it into) its own */
        for (unsigned depth = 0; depth < CONTAINER_DEPTH_MAX; depth++) {
                int next = container_parent_dir(cur), same;

                if (next < 0)
                        break;
                if (cur != dir)
                        safe_close(cur);
                same = container_ns_same(next, dir, "ns/mnt");
                if (same == 0)
                        return next;
                cur = next;
                if (same < 0)
                        break;
        }
        if (cur != dir)
                safe_close(cur);
        return -ESRCH;
}

int container_map_id(const char *map, uint32_t outside, uint32_t *ret) {
        const char *p = map;

        /* "ID-inside ID-outside length" per line, as read from outside the namespace */
        while (p && *p) {
                unsigned long long in, out, len;
                int n = 0;

                if (sscanf(p, " %llu %llu %llu%n", &in, &out, &len, &n) == 3 && n > 0 && in <= UINT32_MAX &&
                    out <= UINT32_MAX && len <= UINT32_MAX && outside >= out && outside - out < len &&
                    in + (outside - out) < UINT32_MAX) {
                        *ret = (uint32_t) (in + (outside - out));
                        return 0;
                }
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return -ENOENT; /* unmapped there: the overflow id, which says nothing */
}

int container_last_nspid(const char *status, pid_t *ret) {
        const char *p = strstr(status, "\nNSpid:");
        long long last = -1;

        if (!p)
                return -ENODATA;
        p += strlen("\nNSpid:");
        for (;;) {
                char *end;
                long long v;

                p += strspn(p, " \t");
                if (!isdigit((unsigned char) *p))
                        break;
                v = strtoll(p, &end, 10);
                if (v <= 0 || v > INT32_MAX)
                        return -EBADMSG;
                last = v;
                p = end;
        }
        if (last < 0)
                return -EBADMSG;
        *ret = (pid_t) last;
        return 0;
}

/* The "real" (first) id of a status line ("Uid:" or "Gid:"). */
static int status_real_id(const char *status, const char *key, uint32_t *ret) {
        const char *p = strstr(status, key);
        unsigned long long v;

        if (!p || sscanf(p + strlen(key), " %llu", &v) != 1 || v >= UINT32_MAX)
                return -ENODATA;
        *ret = (uint32_t) v;
        return 0;
}

/* The id as the process's user namespace sees it (the same where it shares the host's). */
static void add_mapped_id(Record *r, int dir, bool own_userns, const char *status, const char *key,
                          const char *map_file, const char *field) {
        char map[4096];
        uint32_t id, inside;

        if (status_real_id(status, key, &id) < 0)
                return;
        if (!own_userns)
                inside = id;
        else if (read_small_file_at(dir, map_file, map, sizeof map) <= 0 || container_map_id(map, id, &inside) < 0)
                return;
        (void) record_addf(r, field, "%" PRIu32, inside);
}

void container_add_fields(Record *r, int dir, int host) {
        char status[8192];
        pid_t inner;
        int pidns = host >= 0 ? container_ns_same(dir, host, "ns/pid") : -EACCES,
            userns = host >= 0 ? container_ns_same(dir, host, "ns/user") : -EACCES;

        /* a container has a PID namespace of its own: a unit's private mounts do not make one */
        if (pidns != 0 || read_small_file_at(dir, "status", status, sizeof status) <= 0)
                return;
        if (container_last_nspid(status, &inner) >= 0)
                (void) record_addf(r, "COREDUMP_CONTAINER_PID", "%d", (int) inner);
        if (userns < 0)
                return;
        add_mapped_id(r, dir, userns == 0, status, "\nUid:", "uid_map", "COREDUMP_CONTAINER_UID");
        add_mapped_id(r, dir, userns == 0, status, "\nGid:", "gid_map", "COREDUMP_CONTAINER_GID");
}
