/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: pidfd information and operations. Shared (used by the manager): acts only on the
 * pidfds given; the info parser is pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel-abi.h"

/* PIDFD_GET_INFO, normalised over every layout the kernel (or the seed series) has used. */
typedef struct PidfdInfo {
        uint64_t mask; /* what the kernel filled in (PIDFD_INFO_*) */
        uint64_t cgroupid;
        pid_t pid, tgid, ppid;
        uid_t ruid, euid, suid, fsuid;
        gid_t rgid, egid, sgid, fsgid;
        int exit_code;
        uint32_t coredump_mask;
        uint32_t coredump_signal; /* valid if mask & PIDFD_INFO_COREDUMP_SIGNAL */
        uint32_t coredump_code;   /* valid if mask & PIDFD_INFO_COREDUMP_CODE */
        uint64_t supported_mask;  /* valid if mask & PIDFD_INFO_SUPPORTED_MASK */
        bool has_cookie;          /* seed v4 ABI only */
        uint64_t cookie;
        bool reaped; /* no PID/CREDS any more: identity from SO_PEERCRED (set by verify_peer) */
} PidfdInfo;

#define PIDFD_INFO_WANT                                                                      \
        (PIDFD_INFO_PID | PIDFD_INFO_CREDS | PIDFD_INFO_CGROUPID | PIDFD_INFO_EXIT |         \
         PIDFD_INFO_COREDUMP | PIDFD_INFO_SUPPORTED_MASK | PIDFD_INFO_COREDUMP_SIGNAL |      \
         PIDFD_INFO_COREDUMP_CODE)

/* Pure: interprets the bytes the kernel returned (len = bytes of the buffer handed in, zeroed
 * before: the kernel copies no more than its own struct). A field's mask bit is kept only where
 * the field lies within len: the kernel raises it for fields a short buffer did not get. */
int pidfd_info_parse(const void *buf, size_t len, PidfdInfo *ret);
int pidfd_get_info(int pidfd, uint64_t want, PidfdInfo *ret);
/* The PID the pidfd's process has, with PIDFD_GET_INFO or, on kernels before it, its fdinfo;
 * -ESRCH once it is gone. */
int pidfd_get_pid(int pidfd, pid_t *ret);
/* 0 if the process behind pidfd is still alive (signal 0), negative errno otherwise. */
int pidfd_check_alive(int pidfd);
int pidfd_send_sig(int pidfd, int sig);
int pidfd_open_pid(pid_t pid);
/* Pure: the state letter of a /proc/PID/stat text ('R', 'D', ...), 0 if it has none. */
char proc_stat_state(const char *stat);
/* What a /proc/PID/stat text says, as far as it goes: the state letter, utime and stime (fields
 * 14 and 15, clock ticks), and vsize (field 23: bytes of address space, 0 once the exit released
 * it) if the text reaches it. */
typedef struct ProcStat {
        char state;
        uint64_t utime, stime;
        bool has_vsize;
        uint64_t vsize;
} ProcStat;
/* Pure: -EBADMSG if the text does not reach stime. */
int proc_stat_parse(const char *stat, ProcStat *ret);
/* Whether pid, a child of ours not reaped yet (so its pid is its own), is asleep in its exit past
 * the release of its address space (vsize 0, state S or D): what is left there is the closing
 * of its files, which only a file system can make wait. False if that cannot be read. A process
 * its user stopped, or that sleeps before its exit, has its address space. */
bool child_asleep_in_exit(pid_t pid);
