/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fd-util.h"
#include "macro.h"
#include "meta.h"

/* /proc/<pid>/auxv is a few hundred bytes; /proc/<pid>/limits about 1.5 KiB. */
#define AUXV_MAX 4096
#define LIMITS_MAX 4096

int meta_parse_auxv_secure(const uint8_t *buf, size_t len, bool *ret) {
        /* The native word size: the manager reads auxv of processes on its own architecture;
         * a 32-bit process's auxv is read with 64-bit words here only if the kernel writes
         * them so, which it does not: treat that as unknown. */
        for (size_t o = 0; o + 2 * sizeof(uint64_t) <= len; o += 2 * sizeof(uint64_t)) {
                uint64_t type, val;
                memcpy(&type, buf + o, sizeof type);
                memcpy(&val, buf + o + sizeof type, sizeof val);
                if (type == AT_NULL)
                        break;
                if (type == AT_SECURE) {
                        *ret = val != 0;
                        return 0;
                }
        }
        return -ENODATA;
}

int meta_parse_limits_core(const char *limits, uint64_t *ret) {
        const char *l = strstr(limits, "\nMax core file size");
        char soft[32];

        if (!l)
                return -ENODATA;
        l += strlen("\nMax core file size");
        if (sscanf(l, " %31s", soft) != 1)
                return -EBADMSG;
        if (strcmp(soft, "unlimited") == 0) {
                *ret = UINT64_MAX;
                return 0;
        }
        return sscanf(soft, "%" SCNu64, ret) == 1 ? 0 : -EBADMSG;
}

static void read_proc_fields(int dir, CrashMeta *m) {
        uint8_t auxv[AUXV_MAX];
        char limits[LIMITS_MAX];
        _cleanup_close_ int afd = -EBADF;
        ssize_t n;

        if (read_small_file_at(dir, "comm", m->comm, sizeof m->comm) > 0)
                m->comm[strcspn(m->comm, "\n")] = 0;
        n = readlinkat(dir, "exe", m->exe, sizeof m->exe - 1);
        m->exe[n > 0 ? n : 0] = 0;

        afd = openat(dir, "auxv", O_RDONLY | O_CLOEXEC);
        if (afd >= 0 && (n = loop_read(afd, auxv, sizeof auxv)) > 0)
                m->auxv_valid = meta_parse_auxv_secure(auxv, (size_t) n, &m->at_secure) >= 0;
        if (read_small_file_at(dir, "limits", limits, sizeof limits) > 0)
                m->rlimit_valid = meta_parse_limits_core(limits, &m->rlimit_core) >= 0;
}

int meta_collect(int pidfd, const PidfdInfo *info, CrashMeta *ret) {
        _cleanup_close_ int dir = -EBADF;
        char path[32];
        PidfdInfo again;
        int r;

        *ret = (CrashMeta) {};
        snprintf(path, sizeof path, "/proc/%d", (int) info->pid);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dir < 0)
                return negative_errno();
        /* The dirfd was opened while the pidfd's process still held this PID: it is that process. */
        r = pidfd_check_alive(pidfd);
        if (r < 0)
                return r;
        read_proc_fields(dir, ret);
        /* And it still is after the reads (belt and braces: WAIT keeps it, but a future policy may not). */
        r = pidfd_get_info(pidfd, PIDFD_INFO_PID, &again);
        if (r < 0 || again.pid != info->pid || pidfd_check_alive(pidfd) < 0) {
                *ret = (CrashMeta) {};
                return r < 0 ? r : -ESRCH;
        }
        ret->proc_valid = true;
        return 0;
}
