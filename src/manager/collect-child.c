/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-crash collector's child (collector.h): reads the crashed process's memory (command line,
 * environment, its container leader's command line) and memory map as root, then opens its
 * mapped files with the process's own file-system credentials. Touches only the descriptors it
 * is given. */
#include <assert.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "fd-util.h"
#include "macro.h"
#include "modules.h"
#include "test-fault.h"

const char *collect_step_to_string(CollectStep step) {
        static const char *const table[_COLLECT_STEP_MAX] = {
                [COLLECT_STARTING] = "starting",
                [COLLECT_CMDLINE] = "reading its command line",
                [COLLECT_ENVIRON] = "reading its environment",
                [COLLECT_LEADER_CMDLINE] = "reading its container leader's command line",
                [COLLECT_MAPS] = "reading its memory map",
                [COLLECT_CREDENTIALS] = "taking its credentials",
                [COLLECT_MODULES] = "opening its mapped files",
                [COLLECT_DONE] = "done",
        };
        return step < _COLLECT_STEP_MAX ? table[step] : "unknown";
}

static void set_step(CollectShared *sh, CollectStep step) {
        __atomic_store_n(&sh->step, (uint32_t) step, __ATOMIC_RELEASE);
}

/* One field read as root, published once complete; kept in *keep if given (else freed). */
static void publish_file(CollectShared *sh, int dir, const char *name, const char *field, size_t max, char sep,
                         Record *keep) {
        Record r = {};
        uint32_t len = sh->record_len;

        if (meta_add_file(&r, dir, name, field, max, sep) >= 0 && r.len <= sizeof sh->record - len) {
                if (r.overflow)
                        sh->overflow = 1;
                memcpy(sh->record + len, r.buf, r.len);
                __atomic_store_n(&sh->record_len, len + (uint32_t) r.len, __ATOMIC_RELEASE);
        }
        if (keep)
                *keep = r;
        else
                record_free(&r);
}

/* The process's file-system credentials from here on: its fs uid and gid and its groups, and,
 * where the process itself could read past permissions (root in the initial user namespace with
 * CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH), CAP_DAC_READ_SEARCH; no other capability. */
static int take_creds(const TaskCreds *t, bool init_userns) {
        bool dac = init_userns && (t->cap_eff & ((1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH)));
        cap_value_t keep = CAP_DAC_READ_SEARCH;
        cap_t caps;
        int r = 0;

        if (setgroups(t->n_groups, t->groups) < 0)
                return negative_errno();
        (void) setfsgid(t->fsgid);
        (void) setfsuid(t->fsuid);
        /* setfs*id() say nothing of failure: read them back (an invalid id changes nothing) */
        if ((gid_t) setfsgid((gid_t) -1) != t->fsgid || (uid_t) setfsuid((uid_t) -1) != t->fsuid)
                return -EPERM;
        caps = cap_init();
        if (!caps)
                return -ENOMEM;
        if (dac && (cap_set_flag(caps, CAP_PERMITTED, 1, &keep, CAP_SET) < 0 ||
                    cap_set_flag(caps, CAP_EFFECTIVE, 1, &keep, CAP_SET) < 0))
                r = negative_errno();
        if (r == 0 && cap_set_proc(caps) < 0)
                r = negative_errno();
        cap_free(caps);
        /* a change of credentials makes a process dumpable again under fs.suid_dumpable=1 */
        if (r == 0 && (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0))
                r = -EPERM;
        return r;
}

static bool in_init_userns(int procdir) {
        struct stat a, b;
        return fstatat(procdir, "ns/user", &a, 0) == 0 && stat("/proc/self/ns/user", &b) == 0 &&
               a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static void on_module(void *userdata, const char *path) {
        CollectShared *sh = userdata;
        snprintf(sh->current, sizeof sh->current, "%s", path);
}

/* The module files queued in one message on queue, for the worker (the manager only passes the
 * queue on: modules.h); SCM_MAX_FD is 253, MODULES_MAX is below. */
static int queue_modules(int queue, const ModuleSet *set) {
        uint32_t n = (uint32_t) set->n;
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * MODULES_MAX)];
        } control = {};
        struct iovec iov = { .iov_base = &n, .iov_len = sizeof n };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                             .msg_controllen = CMSG_SPACE(sizeof(int) * n) };
        struct cmsghdr *cm;

        assert(n > 0 && n <= MODULES_MAX);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
        memcpy(CMSG_DATA(cm), set->fds, sizeof(int) * n);
        return sendmsg(queue, &mh, MSG_NOSIGNAL) < 0 ? negative_errno() : 0;
}

/* Once its result is out: the manager it woke runs next, not its exit, which tears down a copy
 * of the manager's address space while the task is held (a task woken is often queued on the
 * CPU of the one that woke it, behind it). At idle priority the exit takes no CPU from anything
 * else either. */
static void step_aside(void) {
        (void) sched_setscheduler(0, SCHED_IDLE, &(struct sched_param) {});
        (void) sched_yield();
}

static void module_set_unmap(ModuleSet **s) {
        if (*s)
                (void) munmap(*s, sizeof **s);
}

/* Opens the mapped files into *ret (kept open: the collector keeps them for the worker). */
static int collect_modules(const CollectInput *in, CollectShared *sh, const Record *maps_field, ModuleSet **ret) {
        RecordField maps, mountinfo, status, rootf;
        _cleanup_free_ char *root_path = NULL;
        _cleanup_close_ int root = -EBADF;
        _cleanup_(module_set_unmap) ModuleSet *set = NULL;
        _cleanup_free_ char *st = NULL;
        TaskCreds creds;
        bool init_userns;
        int r;

        if (!record_find(maps_field->buf, maps_field->len, "COREDUMP_PROC_MAPS", &maps) ||
            !record_find(in->request, in->request_len, "COREDUMP_PROC_STATUS", &status))
                return 0;
        if (!record_find(in->request, in->request_len, "COREDUMP_PROC_MOUNTINFO", &mountinfo))
                mountinfo = (RecordField) { .value = (const uint8_t *) "" };
        set_step(sh, COLLECT_CREDENTIALS);
        st = strndup((const char *) status.value, status.value_len);
        /* pages of its own: from the heap (a copy of the manager's), calloc() would copy and zero
         * all 64 KiB of it with the task held; fresh ones are touched only as far as it is filled */
        set = mmap(NULL, sizeof *set, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (set == MAP_FAILED)
                set = NULL;
        if (!st || !set)
                return -ENOMEM;
        r = meta_parse_status_creds(st, &creds);
        if (r < 0)
                return r;
        /* the root is opened as root (it takes ptrace access); nothing below it is */
        init_userns = in_init_userns(in->procdir);
        root = in->files_root >= 0 ? fcntl(in->files_root, F_DUPFD_CLOEXEC, 3)
                                   : openat(in->procdir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = root < 0 ? negative_errno() : take_creds(&creds, init_userns);
        meta_creds_done(&creds);
        if (r < 0)
                return r;
        /* the fs id change cleared the parent-death signal: set again, the manager checked after */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != in->parent)
                return -ESRCH;
        /* maps names a chroot's files by their path from the host's root: beneath the task's
         * root they are the rest of it (not so beneath the host's, for EnterNamespace=no) */
        if (in->files_root < 0 && record_find(in->request, in->request_len, "COREDUMP_ROOT", &rootf) &&
            !(root_path = strndup((const char *) rootf.value, rootf.value_len)))
                return -ENOMEM;
        set_step(sh, COLLECT_MODULES);
        (void) modules_open(&(ModulesSource) {
                                    .root = root,
                                    .root_path = root_path,
                                    .exe = in->exe,
                                    .maps = (const char *) maps.value,
                                    .maps_len = maps.value_len,
                                    .mountinfo = (const char *) mountinfo.value,
                                    .mountinfo_len = mountinfo.value_len,
                                    .progress = on_module,
                                    .userdata = sh,
                            },
                            set);
        memcpy(sh->entries, set->entries, set->n * sizeof(ModuleEntry));
        sh->n_modules = (uint32_t) set->n;
        sh->omitted = set->omitted;
        sh->refused = set->refused;
        sh->first_refusal = set->first_refusal;
        snprintf(sh->first_refused, sizeof sh->first_refused, "%s", set->first_refused);
        *ret = TAKE_PTR(set);
        return 0;
}

/* Once done: the module files kept until the manager lets go (EOF), queued on each socket a
 * COLLECT_QUEUE brings (one, unless the manager asks again). */
static void keep_modules(int sock, const ModuleSet *set) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control;
        CollectQueue q;
        struct iovec iov = { .iov_base = &q, .iov_len = sizeof q };

        for (;;) {
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                                     .msg_controllen = CMSG_LEN(sizeof(int)) };
                _cleanup_close_ int queue = -EBADF;
                ssize_t k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return; /* let go */
                if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
                    cm->cmsg_len == CMSG_LEN(sizeof(int)))
                        memcpy(&queue, CMSG_DATA(cm), sizeof(int));
                if (k == (ssize_t) sizeof q && q.magic == COLLECT_QUEUE_MAGIC && queue >= 0)
                        (void) queue_modules(queue, set);
        }
}

#define COLLECT_COMM "coredump-proc" /* ps, pgrep: not to be taken for coredumpd */

/* Nothing of the manager's but its socket and stdio; default signal handling, and gone with the
 * manager. Done when the spare is forked, before any crash. */
static int spare_setup(int sock, pid_t parent) {
        int keep[] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, sock };
        sigset_t all;

        (void) prctl(PR_SET_NAME, COLLECT_COMM, 0, 0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                return -ESRCH;
        sigfillset(&all);
        for (int sig = 1; sig < NSIG; sig++)
                (void) signal(sig, sig == SIGPIPE ? SIG_IGN : SIG_DFL);
        (void) sigprocmask(SIG_UNBLOCK, &all, NULL);
        return close_all_fds_except(keep, ELEMENTSOF(keep));
}

/* COLLECT_GO and its descriptors into in; -ECONNRESET at EOF, -EBADMSG for anything else. */
static int wait_go(int sock, const CollectShared *sh, CollectInput *in) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * COLLECT_GO_FDS_MAX)];
        } control;
        CollectGo go = {};
        struct iovec iov = { .iov_base = &go, .iov_len = sizeof go };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                             .msg_controllen = sizeof control.buf };
        int fds[COLLECT_GO_FDS_MAX];
        size_t n = 0, want;
        ssize_t k;

        do
                k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k == 0)
                return -ECONNRESET;
        if (k < 0)
                return negative_errno();
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                        n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        memcpy(fds, CMSG_DATA(cm), sizeof(int) * MIN(n, (size_t) COLLECT_GO_FDS_MAX));
                }
        want = 1 + !!(go.flags & COLLECT_GO_LEADER) + !!(go.flags & COLLECT_GO_FILES_ROOT);
        if (k != (ssize_t) sizeof go || (mh.msg_flags & MSG_CTRUNC) || go.magic != COLLECT_GO_MAGIC ||
            (go.flags & ~(COLLECT_GO_LEADER | COLLECT_GO_FILES_ROOT | COLLECT_GO_NO_MODULES)) || n != want ||
            sh->request_len > sizeof sh->request)
                return -EBADMSG;
        *in = (CollectInput) {
                .procdir = fds[0],
                .leader_dir = (go.flags & COLLECT_GO_LEADER) ? fds[1] : -EBADF,
                .files_root = (go.flags & COLLECT_GO_FILES_ROOT) ? fds[n - 1] : -EBADF,
                .sock = sock,
                .exe = sh->exe,
                .request = sh->request,
                .request_len = sh->request_len,
                .no_modules = go.flags & COLLECT_GO_NO_MODULES,
        };
        return 0;
}

static int collect(const CollectInput *in, CollectShared *sh, ModuleSet **ret_modules) {
        Record maps = {};
        int r;

        set_step(sh, COLLECT_CMDLINE);
        publish_file(sh, in->procdir, "cmdline", "COREDUMP_CMDLINE", CMDLINE_MAX, ' ', NULL);
        set_step(sh, COLLECT_ENVIRON);
        publish_file(sh, in->procdir, "environ", "COREDUMP_ENVIRON", ENVIRON_MAX, '\n', NULL);
        if (in->leader_dir >= 0) {
                set_step(sh, COLLECT_LEADER_CMDLINE);
                publish_file(sh, in->leader_dir, "cmdline", "COREDUMP_CONTAINER_CMDLINE", CMDLINE_MAX, ' ', NULL);
        }
        set_step(sh, COLLECT_MAPS);
        publish_file(sh, in->procdir, "maps", "COREDUMP_PROC_MAPS", PROC_FILE_MAX, 0, &maps);
        r = in->no_modules ? 0 : collect_modules(in, sh, &maps, ret_modules);
        record_free(&maps);
        return r;
}

#ifdef MANAGER_TEST_FAULTS
#define FAULT_COLLECT_SLOW_MSEC 3000
/* Test builds only (meson -Dworker-test-faults=true): COREDUMPD_TEST_FAULT=collect-slow makes
 * each collection take FAULT_COLLECT_SLOW_MSEC longer, as a slow file system would. */
static void fault_collect_slow(void) {
        if (test_fault_is("collect-slow"))
                (void) poll(NULL, 0, FAULT_COLLECT_SLOW_MSEC);
}
#else
static void fault_collect_slow(void) {
}
#endif

_noreturn_ void collect_spare_main(int sock, CollectShared *sh, pid_t parent) {
        _cleanup_(module_set_unmap) ModuleSet *modules = NULL;
        CollectInput in = {}; /* (set by wait_go(), used only if it succeeded) */
        int r = spare_setup(sock, parent);

        if (r >= 0)
                r = wait_go(sock, sh, &in);
        in.parent = parent;
        if (r == -ECONNRESET)
                _exit(0); /* let go without a crash */
        if (r >= 0) {
                /* what the manager wrote before it sent GO is there now */
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                sh->exe[sizeof sh->exe - 1] = 0;
                r = collect(&in, sh, &modules);
                fault_collect_slow();
        }
        sh->error = r < 0 ? r : 0;
        if (r >= 0) /* otherwise the step stays where it stopped, for the record */
                set_step(sh, COLLECT_DONE);
        /* EOF now says it is done (everything above is published), not at the exit: the files it
         * holds are closed only after its address space is torn down. */
        __atomic_thread_fence(__ATOMIC_RELEASE);
        (void) shutdown(sock, SHUT_WR);
        if (r >= 0 && modules && modules->n > 0)
                keep_modules(sock, modules);
        step_aside();
        _exit(r < 0 ? 1 : 0);
}
