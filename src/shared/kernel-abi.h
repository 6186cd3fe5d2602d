/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the kernel's coredump socket protocol and PIDFD_GET_INFO, for older uapi headers.
 * Shared, declarations only. */
#pragma once

/* The kernel interfaces coredump-socket talks to, defined here because distribution headers
 * lag behind (Debian 12 ships 6.1 uapi). Values from include/uapi/linux/{coredump,pidfd}.h;
 * see docs: kernel-abi.md. */

#include <stdint.h>
#include <sys/ioctl.h>

/* ---- the @@ request protocol (Linux 6.17+) ---- */
#define COREDUMP_KERNEL (UINT64_C(1) << 0)
#define COREDUMP_USERSPACE (UINT64_C(1) << 1)
#define COREDUMP_REJECT (UINT64_C(1) << 2)
#define COREDUMP_WAIT (UINT64_C(1) << 3)
/* Every flag this daemon knows (7.3's). A later kernel may offer more in its request (queued for
 * 7.4: COREDUMP_RECORDS, COREDUMP_SPARSE, COREDUMP_MEMORY_TYPES with a 32-byte request and a
 * 24-byte ack, not merged: see kernel-patches/README.md); they are never asked for. */
#define COREDUMP_MASK_KNOWN (COREDUMP_KERNEL | COREDUMP_USERSPACE | COREDUMP_REJECT | COREDUMP_WAIT)

struct coredump_req {
        uint32_t size;
        uint32_t size_ack;
        uint64_t mask;
};

struct coredump_ack {
        uint32_t size;
        uint32_t spare;
        uint64_t mask;
};

#define COREDUMP_REQ_SIZE_VER0 16U
#define COREDUMP_ACK_SIZE_VER0 16U
/* A later kernel may grow the request; anything beyond this is not a kernel we understand. */
#define COREDUMP_REQ_SIZE_MAX 4096U

/* The kernel sends the mark as sizeof(enum), 4 bytes, whatever the uapi comment says. */
enum coredump_mark {
        COREDUMP_MARK_REQACK = 0,
        COREDUMP_MARK_MINSIZE = 1,
        COREDUMP_MARK_MAXSIZE = 2,
        COREDUMP_MARK_UNSUPPORTED = 3,
        COREDUMP_MARK_CONFLICTING = 4,
};
#define COREDUMP_MARK_SIZE 4U

/* ---- pidfd info (Linux 6.13+) ---- */
#define PIDFD_INFO_PID (UINT64_C(1) << 0)
#define PIDFD_INFO_CREDS (UINT64_C(1) << 1)
#define PIDFD_INFO_CGROUPID (UINT64_C(1) << 2)
#define PIDFD_INFO_EXIT (UINT64_C(1) << 3)
#define PIDFD_INFO_COREDUMP (UINT64_C(1) << 4)
#define PIDFD_INFO_SUPPORTED_MASK (UINT64_C(1) << 5)
#define PIDFD_INFO_COREDUMP_SIGNAL (UINT64_C(1) << 6)
#define PIDFD_INFO_COREDUMP_CODE (UINT64_C(1) << 7)

#define PIDFD_COREDUMPED (1U << 0)
#define PIDFD_COREDUMP_SKIP (1U << 1)
#define PIDFD_COREDUMP_USER (1U << 2)
#define PIDFD_COREDUMP_ROOT (1U << 3)

/* The largest layout we know (7.1+, 88 bytes). Offsets 68.. depend on the returned mask:
 * 6.16-6.18: spare u32 @68, end @72; 6.19-7.0: signal @68, supported_mask @72;
 * 7.1+: signal @68, code @72, pad @76, supported_mask @80; seed v4: cookie @72. */
struct pidfd_info_raw {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
        uint32_t coredump_mask;
        uint32_t u68;
        uint64_t u72;
        uint64_t u80;
};
_Static_assert(sizeof(struct pidfd_info_raw) == 88, "pidfd_info layout");

#define PIDFD_INFO_SIZE_VER0 64U
/* The ioctl number encodes the size; the kernel copies min(ours, its own). */
#define PIDFD_GET_INFO_IOCTL _IOWR(0xFF, 11, struct pidfd_info_raw)

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif
#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK 04000
#endif
