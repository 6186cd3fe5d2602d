/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cheap look at a crashing process before the ack: exe, comm, service, RLIMIT_CORE, size.
 * Manager (root): reads only /proc/PID of that task, guarded by its pidfd (or PF_DUMPCORE). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "peek.h"
#include "record-fields.h"

#define KIB UINT64_C(1024)

static bool ends_with(const char *s, const char *suffix) {
        size_t l = strlen(s), k = strlen(suffix);
        return l >= k && strcmp(s + l - k, suffix) == 0;
}

void peek_service(const char *cgroup_path, char *buf, size_t size) {
        CgroupInfo ci;

        cgroup_parse(cgroup_path, &ci);
        buf[0] = 0;
        if (ci.user_unit[0] && ends_with(ci.user_unit, ".service"))
                snprintf(buf, size, "%s/%s", ci.unit, ci.user_unit);
        else if (ci.unit[0] && ends_with(ci.unit, ".service") && !ci.user_unit[0])
                snprintf(buf, size, "%s", ci.unit);
}

static int status_kib(const char *status, const char *key, uint64_t *ret) {
        const char *p = strstr(status, key);
        unsigned long long v;

        /* a key starts a line */
        while (p && p != status && p[-1] != '\n')
                p = strstr(p + 1, key);
        if (!p || sscanf(p + strlen(key), " %llu kB", &v) != 1)
                return -ENOENT;
        *ret = (uint64_t) v * KIB;
        return 0;
}

int peek_parse_anon_size(const char *status, uint64_t *ret) {
        uint64_t anon, swap = 0;
        int r = status_kib(status, "RssAnon:", &anon);

        if (r < 0)
                return r;
        (void) status_kib(status, "VmSwap:", &swap);
        *ret = anon + swap;
        return 0;
}

static void peek_read(int dir, PeekWant want, CrashPeek *p) {
        char buf[MAX(MAX(PEEK_STATUS_MAX, PEEK_CGROUP_MAX), PEEK_LIMITS_MAX)], path[PATH_MAX];
        ssize_t n = readlinkat(dir, "exe", p->exe, sizeof p->exe - 1);

        p->exe[MAX(n, 0)] = 0;
        if (read_small_file_at(dir, "comm", p->comm, sizeof p->comm) > 0)
                p->comm[strcspn(p->comm, "\n")] = 0;
        if (read_small_file_at(dir, "cgroup", buf, PEEK_CGROUP_MAX) > 0 && cgroup_unified_path(buf, path, sizeof path) >= 0)
                peek_service(path, p->service, sizeof p->service);
        if ((want & PEEK_RLIMIT) && read_small_file_at(dir, "limits", buf, PEEK_LIMITS_MAX) > 0)
                p->rlimit_valid = meta_parse_limits_core(buf, &p->rlimit_core) >= 0;
        if ((want & PEEK_SIZE) && read_small_file_at(dir, "status", buf, PEEK_STATUS_MAX) > 0)
                p->size_valid = peek_parse_anon_size(buf, &p->size_min) >= 0;
        /* the process chose these: they go into log lines and summaries, so no control bytes */
        string_sanitize(p->exe);
        string_sanitize(p->comm);
        string_sanitize(p->service);
}

/* The process behind dir is the crashing one: by its pidfd, or by its dumping thread. */
static int peek_confirm(int dir, int pidfd, pid_t pid, pid_t tid) {
        pid_t again;
        int r;

        if (pidfd < 0)
                return meta_task_dumping(dir, tid) ? 0 : -ESRCH;
        r = pidfd_get_pid(pidfd, &again);
        if (r < 0)
                return r;
        return again == pid ? pidfd_check_alive(pidfd) : -ESRCH;
}

int peek_collect(int pidfd, pid_t pid, pid_t tid, PeekWant want, CrashPeek *ret) {
        _cleanup_close_ int dir = -EBADF;
        char path[32];
        int r;

        *ret = (CrashPeek) {};
        snprintf(path, sizeof path, "/proc/%d", (int) pid);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dir < 0)
                return negative_errno();
        r = pidfd >= 0 ? pidfd_check_alive(pidfd) : peek_confirm(dir, pidfd, pid, tid);
        if (r < 0)
                return r;
        peek_read(dir, want, ret);
        r = peek_confirm(dir, pidfd, pid, tid);
        if (r < 0) {
                *ret = (CrashPeek) {};
                return r;
        }
        return 0;
}
