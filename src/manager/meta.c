/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the kernel says of a crashed process in /proc, as record fields (its memory and mapped
 * files are the collector's, its container container.c's). Manager (root): reads only the task's
 * /proc, through its verified dirfd. */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup-util.h"
#include "fd-util.h"
#include "macro.h"
#include "meta.h"

int meta_parse_auxv_secure(const uint8_t *buf, size_t len, bool *ret) {
        /* Native word size: the manager runs on the machine's own architecture. */
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

size_t meta_join_nul(char *buf, size_t len, char sep) {
        while (len > 0 && buf[len - 1] == 0)
                len--;
        for (size_t i = 0; i < len; i++)
                if (buf[i] == 0)
                        buf[i] = sep;
        return len;
}

/* Reads at most max bytes of dir/name into a fresh buffer (NUL-terminated). */
static ssize_t read_bounded(int dir, const char *name, size_t max, char **ret, bool *cut) {
        _cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        char *buf;
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        buf = malloc(max + 2);
        if (!buf)
                return -ENOMEM;
        n = loop_read(fd, buf, max + 1);
        if (n < 0) {
                free(buf);
                return n;
        }
        *cut = (size_t) n > max;
        if (*cut)
                n = (ssize_t) max;
        buf[n] = 0;
        *ret = buf;
        return n;
}

int meta_add_file(Record *r, int dir, const char *name, const char *field, size_t max, char sep) {
        _cleanup_free_ char *buf = NULL;
        bool cut = false;
        ssize_t n = read_bounded(dir, name, max, &buf, &cut);

        if (n < 0)
                return (int) n;
        if (sep)
                n = (ssize_t) meta_join_nul(buf, (size_t) n, sep);
        if (cut)
                r->overflow = true;
        return record_add(r, field, buf, (size_t) n, 0);
}

static void add_file(CrashMeta *m, int dir, const char *name, const char *field, size_t max) {
        (void) meta_add_file(&m->fields, dir, name, field, max, 0);
}

static void add_link(CrashMeta *m, int dir, const char *name, const char *field) {
        char buf[PATH_MAX];
        ssize_t n = readlinkat(dir, name, buf, sizeof buf - 1);

        if (n > 0)
                (void) record_add(&m->fields, field, buf, (size_t) n, 0);
}

static void add_cgroup(CrashMeta *m, int dir) {
        _cleanup_free_ char *raw = NULL;
        char path[PATH_MAX];
        CgroupInfo ci;
        bool cut;

        if (read_bounded(dir, "cgroup", PROC_FILE_MAX, &raw, &cut) < 0)
                return;
        (void) record_add_str(&m->fields, "COREDUMP_PROC_CGROUP", raw);
        if (cgroup_unified_path(raw, path, sizeof path) < 0)
                return;
        (void) record_add_str(&m->fields, "COREDUMP_CGROUP", path);
        cgroup_parse(path, &ci);
        if (ci.unit[0])
                (void) record_add_str(&m->fields, "COREDUMP_UNIT", ci.unit);
        if (ci.user_unit[0])
                (void) record_add_str(&m->fields, "COREDUMP_USER_UNIT", ci.user_unit);
        if (ci.slice[0])
                (void) record_add_str(&m->fields, "COREDUMP_SLICE", ci.slice);
        if (ci.session[0])
                (void) record_add_str(&m->fields, "COREDUMP_SESSION", ci.session);
        if (ci.owner_uid != UID_INVALID)
                (void) record_addf(&m->fields, "COREDUMP_OWNER_UID", "%u", (unsigned) ci.owner_uid);
}

/* A subdirectory of dir to iterate over, or NULL. */
static DIR *opendir_at(int dir, const char *name) {
        int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;

        if (fd < 0)
                return NULL;
        d = fdopendir(fd);
        if (!d)
                safe_close(fd);
        return d;
}

/* "<fd>:<path>\n<fdinfo>\n" per descriptor, systemd's COREDUMP_OPEN_FDS format. */
static void add_open_fds(CrashMeta *m, int dir) {
        _cleanup_close_ int fdinfo = openat(dir, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = opendir_at(dir, "fd");
        char *text = NULL;
        size_t len, cap = 0;
        unsigned listed = 0;
        struct dirent *de;
        FILE *f;
        int fddir;

        if (!d)
                return;
        fddir = dirfd(d);
        f = open_memstream(&text, &cap);
        while (f && (de = readdir(d))) {
                char target[PATH_MAX], info[4096];
                ssize_t n;

                if (de->d_name[0] == '.')
                        continue;
                if (listed >= OPEN_FDS_MAX || (size_t) ftell(f) >= OPEN_FDS_BYTES_MAX) {
                        m->fields.overflow = true;
                        break;
                }
                n = readlinkat(fddir, de->d_name, target, sizeof target - 1);
                target[n > 0 ? n : 0] = 0;
                fprintf(f, "%s:%s\n", de->d_name, target);
                if (fdinfo >= 0 && read_small_file_at(fdinfo, de->d_name, info, sizeof info) > 0)
                        fputs(info, f);
                fputc('\n', f);
                listed++;
        }
        closedir(d);
        if (f && fclose(f) == 0 && text) {
                len = strlen(text);
                (void) record_add(&m->fields, "COREDUMP_OPEN_FDS", text, MIN(len, (size_t) OPEN_FDS_BYTES_MAX), 0);
        }
        free(text);
}

/* "tid comm" per thread, to name the crashing thread once the core says which it was. */
static void add_task_comms(CrashMeta *m, int dir) {
        DIR *d = opendir_at(dir, "task");
        char *text = NULL;
        size_t cap = 0;
        unsigned n = 0;
        struct dirent *de;
        FILE *f;

        if (!d)
                return;
        f = open_memstream(&text, &cap);
        while (f && (de = readdir(d)) && n < TASKS_MAX) {
                char path[NAME_MAX + sizeof "/comm"], comm[COMM_MAX];
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof path, "%s/comm", de->d_name);
                if (read_small_file_at(dirfd(d), path, comm, sizeof comm) <= 0)
                        continue;
                comm[strcspn(comm, "\n")] = 0;
                fprintf(f, "%s %s\n", de->d_name, comm);
                n++;
        }
        closedir(d);
        if (f && fclose(f) == 0 && text)
                (void) record_add_str(&m->fields, "_CDS_TASK_COMM", text);
        free(text);
}

const char *meta_thread_name(const CrashMeta *m, pid_t tid, char *buf, size_t size) {
        RecordField f;
        char key[24];
        const char *p, *end;
        size_t kl;

        if (!record_find(m->fields.buf, m->fields.len, "_CDS_TASK_COMM", &f))
                return NULL;
        kl = (size_t) snprintf(key, sizeof key, "%d ", (int) tid);
        for (p = (const char *) f.value, end = p + f.value_len; p < end;) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                size_t l = eol ? (size_t) (eol - p) : (size_t) (end - p);
                if (l > kl && memcmp(p, key, kl) == 0) {
                        snprintf(buf, size, "%.*s", (int) (l - kl), p + kl);
                        return buf;
                }
                p += l + 1;
        }
        return NULL;
}

static void read_identity(CrashMeta *m, int dir) {
        uint8_t auxv[AUXV_MAX];
        char limits[4096];
        _cleanup_close_ int afd = -EBADF;
        ssize_t n;

        if (read_small_file_at(dir, "comm", m->comm, sizeof m->comm) > 0)
                m->comm[strcspn(m->comm, "\n")] = 0;
        n = readlinkat(dir, "exe", m->exe, sizeof m->exe - 1);
        m->exe[n > 0 ? n : 0] = 0;
        afd = openat(dir, "auxv", O_RDONLY | O_CLOEXEC);
        if (afd >= 0 && (n = loop_read(afd, auxv, sizeof auxv)) > 0) {
                m->auxv_valid = meta_parse_auxv_secure(auxv, (size_t) n, &m->at_secure) >= 0;
                (void) record_add(&m->fields, "COREDUMP_PROC_AUXV", auxv, (size_t) n, 0);
        }
        if (read_small_file_at(dir, "limits", limits, sizeof limits) > 0) {
                m->rlimit_valid = meta_parse_limits_core(limits, &m->rlimit_core) >= 0;
                (void) record_add_str(&m->fields, "COREDUMP_PROC_LIMITS", limits);
        }
}

/* Only what the kernel itself answers, here and in meta_collect_rest(): no read touches the
 * process's memory or a file it mapped, or waits for its address space's lock (maps does: a
 * process sharing it, stuck in a fault on a user's FUSE file with the lock held, would hold the
 * event loop too): the collector does those. These are the ones the worker's user and the
 * collector's request depend on. */
static void read_proc_fields(CrashMeta *m, int dir) {
        read_identity(m, dir);
        if (m->comm[0])
                (void) record_add_str(&m->fields, "COREDUMP_COMM", m->comm);
        if (m->exe[0])
                (void) record_add_str(&m->fields, "COREDUMP_EXE", m->exe);
        add_file(m, dir, "status", "COREDUMP_PROC_STATUS", PROC_FILE_MAX);
        add_file(m, dir, "mountinfo", "COREDUMP_PROC_MOUNTINFO", PROC_FILE_MAX);
        add_link(m, dir, "root", "COREDUMP_ROOT");
}

void meta_collect_rest(CrashMeta *m, int dir) {
        assert(m->proc_valid && dir >= 0);
        add_cgroup(m, dir);
        add_link(m, dir, "cwd", "COREDUMP_CWD");
        add_open_fds(m, dir);
        add_task_comms(m, dir);
}

void meta_done(CrashMeta *m) {
        record_free(&m->fields);
        module_handoff_free(m->modules);
        m->modules = NULL;
}

/* Without a pidfd (pipe mode on kernels before %F) the best guard there is: the thread the
 * kernel named is the one dumping (PF_DUMPCORE in its flags), before and after the reads. A PID
 * recycled after the crasher was killed belongs to a process that is not dumping core. */
#define PF_DUMPCORE 0x00000200UL
#define STAT_FLAGS_FIELD 9

bool meta_task_dumping(int dir, pid_t tid) {
        char path[64], stat[1024], *p;
        unsigned long flags = 0;

        snprintf(path, sizeof path, "task/%d/stat", (int) tid);
        if (read_small_file_at(dir, path, stat, sizeof stat) <= 0)
                return false;
        p = strrchr(stat, ')'); /* comm may hold anything */
        if (!p)
                return false;
        for (int field = 2; field < STAT_FLAGS_FIELD && p; field++)
                p = strchr(p + 1, ' ');
        return p && sscanf(p + 1, "%lu", &flags) == 1 && (flags & PF_DUMPCORE);
}

/* Whether any thread of the process behind dir is dumping core (PF_DUMPCORE). */
bool meta_process_dumping(int dir) {
        _cleanup_close_ int tasks = openat(dir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = tasks >= 0 ? fdopendir(TAKE_FD(tasks)) : NULL;
        struct dirent *de;
        unsigned n = 0;
        bool dumping = false;

        if (!d)
                return false;
        while (!dumping && n++ < TASKS_MAX && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        dumping = meta_task_dumping(dir, (pid_t) strtol(de->d_name, NULL, 10));
        closedir(d);
        return dumping;
}

int meta_collect_unpinned(pid_t pid, pid_t tid, CrashMeta *ret, int *ret_dir) {
        _cleanup_close_ int dir = -EBADF;
        char path[32];

        *ret = (CrashMeta) {};
        snprintf(path, sizeof path, "/proc/%d", (int) pid);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dir < 0)
                return negative_errno();
        if (!meta_task_dumping(dir, tid))
                return -ESRCH;
        read_proc_fields(ret, dir);
        ret->proc_valid = true; /* until meta_confirm_unpinned() says otherwise */
        *ret_dir = TAKE_FD(dir);
        return 0;
}

int meta_collect(int pidfd, const PidfdInfo *info, CrashMeta *ret, int *ret_dir) {
        _cleanup_close_ int dir = -EBADF;
        char path[32];
        int r;

        *ret = (CrashMeta) {};
        if (info->reaped)
                return -ESRCH; /* its PID may already name someone else: never look */
        snprintf(path, sizeof path, "/proc/%d", (int) info->pid);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dir < 0)
                return negative_errno();
        /* The dirfd was opened while the pidfd's process still held this PID: it is that
         * process (a reaped one would fail here, and only a reaped PID can be reused). */
        r = pidfd_check_alive(pidfd);
        if (r < 0)
                return r;
        read_proc_fields(ret, dir);
        ret->proc_valid = true; /* until meta_confirm() says otherwise */
        *ret_dir = TAKE_FD(dir);
        return 0;
}

/* Throws away everything read when the confirmation fails: only the kernel's word counts then. */
static int confirmed(CrashMeta *m, int r) {
        if (r >= 0)
                return 0;
        meta_done(m);
        *m = (CrashMeta) {};
        return r;
}

int meta_confirm(CrashMeta *m, int pidfd, pid_t pid) {
        pid_t again;
        int r = pidfd_get_pid(pidfd, &again);

        if (r >= 0 && (again != pid || pidfd_check_alive(pidfd) < 0))
                r = -ESRCH;
        return confirmed(m, r);
}

int meta_confirm_unpinned(CrashMeta *m, int dir, pid_t tid) {
        return confirmed(m, meta_task_dumping(dir, tid) ? 0 : -ESRCH);
}

/* The value after "\nName:" in a status text, or NULL. */
static const char *status_line(const char *status, const char *name) {
        char key[32];
        const char *p;

        snprintf(key, sizeof key, "\n%s:", name);
        if (strncmp(status, key + 1, strlen(key + 1)) == 0)
                return status + strlen(key + 1);
        p = strstr(status, key);
        return p ? p + strlen(key) : NULL;
}

/* The n-th (from 0) number of a status line's list. */
static int status_nth(const char *v, unsigned n, unsigned long long *ret) {
        char *end;

        for (unsigned i = 0;; i++) {
                v += strspn(v, " \t");
                if (!isdigit((unsigned char) *v))
                        return -EBADMSG;
                errno = 0;
                *ret = strtoull(v, &end, 10);
                if (errno)
                        return -EBADMSG;
                if (i == n)
                        return 0;
                v = end;
        }
}

/* The groups of a "Groups:" line into groups (NULL: only counted); their number, or -EBADMSG. */
static ssize_t status_groups_parse(const char *v, gid_t *groups) {
        const char *eol = strchrnul(v, '\n');
        size_t n = 0;

        for (;;) {
                char *end;
                unsigned long long g;

                v += strspn(v, " \t");
                if (v >= eol)
                        return (ssize_t) n;
                errno = 0;
                g = strtoull(v, &end, 10);
                if (errno || end == v || g > UINT32_MAX - 1 || n >= TASK_GROUPS_MAX)
                        return -EBADMSG;
                if (groups)
                        groups[n] = (gid_t) g;
                n++;
                v = end;
        }
}

/* Counted first, then read into an array of that size: NGROUPS_MAX of them, 256 KiB, come from
 * the heap once glibc's mmap threshold has grown past it (after a larger block was freed), and
 * the collector, a fork of the manager, then zeroed (and so copied) that much of the manager's
 * heap for every crash, with the task held. */
static int status_groups(const char *v, TaskCreds *ret) {
        ssize_t n = status_groups_parse(v, NULL);

        if (n < 0)
                return (int) n;
        ret->groups = calloc(MAX((size_t) n, (size_t) 1), sizeof(gid_t));
        if (!ret->groups)
                return -ENOMEM;
        ret->n_groups = (size_t) status_groups_parse(v, ret->groups);
        return 0;
}

int meta_parse_status_creds(const char *status, TaskCreds *ret) {
        const char *uid = status_line(status, "Uid"), *gid = status_line(status, "Gid"),
                   *groups = status_line(status, "Groups"), *cap = status_line(status, "CapEff");
        unsigned long long fsuid, fsgid;
        int r;

        *ret = (TaskCreds) {};
        if (!uid || !gid || !groups || !cap)
                return -EBADMSG;
        /* "Uid: real effective saved fs" */
        if (status_nth(uid, 3, &fsuid) < 0 || status_nth(gid, 3, &fsgid) < 0 || fsuid >= UINT32_MAX ||
            fsgid >= UINT32_MAX || sscanf(cap, " %" SCNx64, &ret->cap_eff) != 1)
                return -EBADMSG;
        ret->fsuid = (uid_t) fsuid;
        ret->fsgid = (gid_t) fsgid;
        r = status_groups(groups, ret);
        if (r < 0)
                meta_creds_done(ret);
        return r;
}

void meta_creds_done(TaskCreds *c) {
        free(c->groups);
        c->groups = NULL;
        c->n_groups = 0;
}
