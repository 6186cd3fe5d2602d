/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pidfd helpers: PIDFD_GET_INFO over every layout, the PID (fdinfo fallback), liveness, signals,
 * a child's state in its exit. Shared (manager): only the pidfds given (and /proc/self/fdinfo, a child's
 * /proc/PID/stat); pidfd_open_pid() opens one. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "fd-util.h"
#include "macro.h"
#include "pidfd-util.h"

#define PROC_STAT_READ_MAX 1024U /* of /proc/PID/stat: the state comes after the pid and comm (64 at most) */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* Where the fields past the 64-byte base sit, by kernel: see kernel-abi.h, and "The pidfd_info
 * layout trap" in kernel-patches/README.md. */
#define PIDFD_INFO_COREDUMP_AT 64U   /* u32, 6.16+ */
#define PIDFD_INFO_SIGNAL_AT 68U     /* u32, 6.19+ */
#define PIDFD_INFO_CODE_AT 72U       /* u32, 7.1+ */
#define PIDFD_INFO_SUPPORTED_V2_AT 72U /* u64, 6.19 and 7.0 */
#define PIDFD_INFO_SUPPORTED_V3_AT 80U /* u64, 7.1+ */
#define PIDFD_INFO_COOKIE_AT 72U     /* u64, the seed v4 series only */

/* Whether the len bytes handed to the kernel hold a field of n bytes at off. The kernel copies
 * min(its size, len) bytes but raises a field's mask bit even when the field was not copied: a
 * bit is believed only if its field was within len. */
static bool covers(size_t len, size_t off, size_t n) {
        return len >= off + n;
}

/* PIDFD_INFO_SUPPORTED_MASK: at 80 on 7.1+, at 72 on 6.19 and 7.0. On 7.1 a task without a
 * coredump leaves 72 zero; on 6.19 and 7.0 nothing is written at 80 (our buffer is zeroed). A
 * real supported mask always has PID and CREDS, so it is never zero. 0 if none was copied. */
static uint64_t supported_mask_of(const struct pidfd_info_raw *raw, size_t len) {
        if (raw->mask & PIDFD_INFO_COREDUMP_CODE) /* only 7.1+ knows the code: the 7.1 layout */
                return covers(len, PIDFD_INFO_SUPPORTED_V3_AT, sizeof raw->u80) ? raw->u80 : 0;
        if (covers(len, PIDFD_INFO_SUPPORTED_V3_AT, sizeof raw->u80) && raw->u80 != 0)
                return raw->u80;
        return covers(len, PIDFD_INFO_SUPPORTED_V2_AT, sizeof raw->u72) ? raw->u72 : 0;
}

int pidfd_info_parse(const void *buf, size_t len, PidfdInfo *ret) {
        struct pidfd_info_raw raw = {};

        if (len < PIDFD_INFO_SIZE_VER0)
                return -EBADMSG;
        memcpy(&raw, buf, MIN(len, sizeof raw));

        /* PID and CREDS come together, or not at all (a reaped task has only EXIT info). */
        if (!(raw.mask & PIDFD_INFO_PID) != !(raw.mask & PIDFD_INFO_CREDS))
                return -EBADMSG;

        *ret = (PidfdInfo) {
                .mask = raw.mask,
                .cgroupid = raw.cgroupid,
                .pid = (pid_t) raw.pid,
                .tgid = (pid_t) raw.tgid,
                .ppid = (pid_t) raw.ppid,
                .ruid = raw.ruid, .euid = raw.euid, .suid = raw.suid, .fsuid = raw.fsuid,
                .rgid = raw.rgid, .egid = raw.egid, .sgid = raw.sgid, .fsgid = raw.fsgid,
                .exit_code = raw.exit_code,
        };

        if ((raw.mask & PIDFD_INFO_COREDUMP) && covers(len, PIDFD_INFO_COREDUMP_AT, sizeof raw.coredump_mask))
                ret->coredump_mask = raw.coredump_mask;
        else
                ret->mask &= ~PIDFD_INFO_COREDUMP;

        if ((raw.mask & PIDFD_INFO_COREDUMP_SIGNAL) && covers(len, PIDFD_INFO_SIGNAL_AT, sizeof raw.u68))
                ret->coredump_signal = raw.u68;
        else
                ret->mask &= ~PIDFD_INFO_COREDUMP_SIGNAL;

        if ((raw.mask & PIDFD_INFO_COREDUMP_CODE) && covers(len, PIDFD_INFO_CODE_AT, sizeof(uint32_t)))
                ret->coredump_code = (uint32_t) raw.u72;
        else
                ret->mask &= ~PIDFD_INFO_COREDUMP_CODE;

        if (raw.mask & PIDFD_INFO_SUPPORTED_MASK)
                ret->supported_mask = supported_mask_of(&raw, len);
        if (ret->supported_mask == 0)
                ret->mask &= ~PIDFD_INFO_SUPPORTED_MASK;

        /* Neither newer field: a non-zero u64 at 72 can only be the seed v4 cookie. */
        if (!(raw.mask & (PIDFD_INFO_COREDUMP_SIGNAL | PIDFD_INFO_COREDUMP_CODE | PIDFD_INFO_SUPPORTED_MASK)) &&
            covers(len, PIDFD_INFO_COOKIE_AT, sizeof raw.u72) && raw.u72 != 0) {
                ret->has_cookie = true;
                ret->cookie = raw.u72;
        }
        return 0;
}

int pidfd_get_info(int pidfd, uint64_t want, PidfdInfo *ret) {
        struct pidfd_info_raw raw = { .mask = want };

        if (ioctl(pidfd, PIDFD_GET_INFO_IOCTL, &raw) < 0)
                return negative_errno();
        return pidfd_info_parse(&raw, sizeof raw, ret);
}

int pidfd_send_sig(int pidfd, int sig) {
        if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
                return negative_errno();
        return 0;
}

int pidfd_check_alive(int pidfd) {
        return pidfd_send_sig(pidfd, 0);
}

char proc_stat_state(const char *stat) {
        /* "PID (COMM) S ...": comm may hold anything, ") " too; the last ")" ends it */
        const char *p = strrchr(stat, ')');

        return p && p[1] == ' ' && p[2] >= 'A' && p[2] <= 'z' ? p[2] : 0;
}

int proc_stat_parse(const char *stat, ProcStat *ret) {
        const char *p = strrchr(stat, ')');
        ProcStat s = {};
        int n;

        /* state, ppid .. cmajflt (10 numbers), utime, stime, cutime .. starttime (7), vsize */
        if (!p || !proc_stat_state(stat))
                return -EBADMSG;
        n = sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %" SCNu64 " %" SCNu64
                   " %*d %*d %*d %*d %*d %*d %*u %" SCNu64, &s.state, &s.utime, &s.stime, &s.vsize);
        if (n < 3)
                return -EBADMSG;
        s.has_vsize = n == 4;
        *ret = s;
        return 0;
}

bool child_asleep_in_exit(pid_t pid) {
        char path[64], buf[PROC_STAT_READ_MAX];
        ProcStat s;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        return read_small_file_at(AT_FDCWD, path, buf, sizeof buf) >= 0 && proc_stat_parse(buf, &s) >= 0 &&
               s.has_vsize && s.vsize == 0 && (s.state == 'S' || s.state == 'D');
}

int pidfd_open_pid(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? negative_errno() : fd;
}

int pidfd_get_pid(int pidfd, pid_t *ret) {
        char path[64], buf[1024], *p;
        PidfdInfo info;
        ssize_t n;
        long v;
        int r, fd;

        r = pidfd_get_info(pidfd, PIDFD_INFO_PID, &info);
        if (r >= 0) {
                if (!(info.mask & PIDFD_INFO_PID))
                        return -ESRCH;
                *ret = info.pid;
                return 0;
        }
        if (r != -ENOTTY && r != -EINVAL && r != -EOPNOTSUPP)
                return r;
        /* before PIDFD_GET_INFO (6.13): the fdinfo line, -1 once the process is gone */
        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = 0;
        p = strstr(buf, "Pid:\t");
        if (!p)
                return -EBADF;
        v = strtol(p + 5, NULL, 10);
        if (v <= 0)
                return -ESRCH;
        *ret = (pid_t) v;
        return 0;
}
