/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#include "macro.h"
#include "pidfd-util.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static uint64_t load_u64(const uint8_t *p) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return v;
}

int pidfd_info_parse(const void *buf, size_t len, PidfdInfo *ret) {
        struct pidfd_info_raw raw = {};
        const uint8_t *b;

        if (len < PIDFD_INFO_SIZE_VER0)
                return -EBADMSG;
        memcpy(&raw, buf, MIN(len, sizeof raw));
        b = (const uint8_t *) &raw;

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
                .coredump_mask = (raw.mask & PIDFD_INFO_COREDUMP) ? raw.coredump_mask : 0,
        };

        if (raw.mask & PIDFD_INFO_COREDUMP_SIGNAL)
                ret->coredump_signal = raw.u68;

        if (raw.mask & PIDFD_INFO_COREDUMP_CODE) {
                /* 7.1+: code @72, supported_mask moved to @80 */
                ret->coredump_code = (uint32_t) raw.u72;
                if (raw.mask & PIDFD_INFO_SUPPORTED_MASK)
                        ret->supported_mask = raw.u80;
        } else if (raw.mask & PIDFD_INFO_SUPPORTED_MASK) {
                /* 6.19-7.0 keep it @72; 7.1+ without a coredump leave @72 zero and use @80.
                 * A real supported mask always has PID|CREDS, so it is never zero. */
                ret->supported_mask = raw.u80 != 0 ? raw.u80 : raw.u72;
        } else if (len >= 80 && load_u64(b + 72) != 0) {
                /* Neither newer field: a non-zero u64 @72 can only be the seed v4 cookie. */
                ret->has_cookie = true;
                ret->cookie = load_u64(b + 72);
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

int pidfd_open_pid(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? negative_errno() : fd;
}
