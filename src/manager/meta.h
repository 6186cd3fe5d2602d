/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the crashed process's /proc metadata, read by the manager (root) under its pidfd
 * (or PF_DUMPCORE) guard; pure parsers of auxv, limits and status for the tests. */
#pragma once

/* What the manager learns about a crashed process from /proc, read through one dirfd opened
 * after the pidfd check and confirmed afterwards, so PID reuse cannot swap the process: if the
 * confirmation fails, everything read is thrown away and only the kernel's pidfd info counts.
 * meta_collect() reads what the kernel answers by itself, on the event loop; the collector
 * (collector.h) then reads the process's memory and opens its mapped files through the same
 * dirfd, while meta_collect_rest() reads the kernel's remaining answers; meta_confirm() comes
 * after all of them. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "modules.h"
#include "pidfd-util.h"
#include "record.h"

#define COMM_MAX 64 /* TASK_COMM_LEN is 16; newer kernels allow 64 */

/* Every read is bounded; what does not fit is cut and COREDUMP_RECORD_TRUNCATED says so. */
#define PROC_FILE_MAX (1U << 20)  /* maps, mountinfo, status, limits, cgroup */
#define CMDLINE_MAX (64U << 10)
#define ENVIRON_MAX (128U << 10)
#define AUXV_MAX 4096U
#define OPEN_FDS_MAX 1024U        /* descriptors listed in COREDUMP_OPEN_FDS */
#define OPEN_FDS_BYTES_MAX (256U << 10)
#define TASKS_MAX 4096U           /* thread names remembered */

typedef struct CrashMeta {
        bool proc_valid; /* the fields below belong to the crashed process */
        char comm[COMM_MAX];
        char exe[PATH_MAX];
        bool auxv_valid;
        bool at_secure;
        uint64_t rlimit_core; /* soft limit; UINT64_MAX = unlimited */
        bool rlimit_valid;
        Record fields; /* COREDUMP_* from /proc, and _CDS_TASK_COMM ("tid comm" lines) */
        ModuleHandoff *modules; /* its mapped files, for the worker's stack traces (NULL: none) */
} CrashMeta;

#define TASK_GROUPS_MAX 65536U /* NGROUPS_MAX */

/* A task's file-system credentials, from its status: what the collector opens files as. */
typedef struct TaskCreds {
        uid_t fsuid;
        gid_t fsgid;
        gid_t *groups;
        size_t n_groups;
        uint64_t cap_eff;
} TaskCreds;

/* Fills ret with what the collector's request and the worker's user depend on (identity,
 * auxv, limits, status, mountinfo, root) and gives the verified /proc directory (for the
 * collector, meta_collect_rest() and meta_confirm). */
int meta_collect(int pidfd, const PidfdInfo *info, CrashMeta *ret, int *ret_dir);
/* The rest (cgroup, cwd, open descriptors, thread names), read through the same directory while
 * the collector runs; meta_confirm() covers these reads too. */
void meta_collect_rest(CrashMeta *m, int dir);
/* Pipe mode without a pidfd: /proc guarded by the dumping thread's PF_DUMPCORE flag. */
int meta_collect_unpinned(pid_t pid, pid_t tid, CrashMeta *ret, int *ret_dir);
/* After every read: still the same process? If not, everything read is thrown away (-ESRCH). */
int meta_confirm(CrashMeta *m, int pidfd, pid_t pid);
int meta_confirm_unpinned(CrashMeta *m, int dir, pid_t tid);
/* Adds dir/name as a record field, NULs replaced by sep (0: kept), cut at max (r->overflow). */
int meta_add_file(Record *r, int dir, const char *name, const char *field, size_t max, char sep);
/* Whether thread tid of the process whose /proc directory is dir is dumping core (PF_DUMPCORE):
 * the guard of every /proc read without a pidfd, before and after the reads. */
bool meta_task_dumping(int dir, pid_t tid);
/* Whether any thread of the process behind dir is (at most TASKS_MAX looked at). */
bool meta_process_dumping(int dir);
void meta_done(CrashMeta *m);
/* The comm of thread tid from _CDS_TASK_COMM, or NULL. */
const char *meta_thread_name(const CrashMeta *m, pid_t tid, char *buf, size_t size);

/* Pure parsers, for tests. */
int meta_parse_auxv_secure(const uint8_t *buf, size_t len, bool *ret);
int meta_parse_limits_core(const char *limits, uint64_t *ret);
/* NUL-separated argv → space-separated (in place); returns the new length. */
size_t meta_join_nul(char *buf, size_t len, char sep);
/* The fs uid and gid, groups and effective capabilities of a /proc/PID/status text. */
int meta_parse_status_creds(const char *status, TaskCreds *ret);
void meta_creds_done(TaskCreds *c);
