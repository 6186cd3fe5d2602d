/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker's sandbox: see sandbox.h for the order of the steps and why. */
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "sandbox.h"

/* The worker holds stdin/out/err, the control socket, the three fds of its one job, a memfd
 * for Storage=journal and the journal socket, plus what libc may open. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"
/* The new root is a tmpfs this small: it holds one directory chain and one socket. */
#define EMPTY_ROOT_OPTIONS "size=64k,nr_inodes=16,mode=0755"
#define EMPTY_ROOT_MOUNTPOINT "/tmp"

static int write_file_once(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return negative_errno();
        return loop_write(fd, text, strlen(text));
}

/* Writes the id maps of process pid: one id each, the target, the same number inside and out,
 * so what the journal sees (SCM_CREDENTIALS) is the real user. */
static int write_id_maps(pid_t pid, uid_t uid, gid_t gid) {
        char path[64], map[64];
        int r;

        snprintf(map, sizeof map, "%u %u 1\n", (unsigned) uid, (unsigned) uid);
        snprintf(path, sizeof path, "/proc/%d/uid_map", (int) pid);
        r = write_file_once(path, map);
        if (r < 0)
                return r;
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned) gid, (unsigned) gid);
        snprintf(path, sizeof path, "/proc/%d/gid_map", (int) pid);
        return write_file_once(path, map);
}

static int drop_bounding_set(void);

/* Every change of the effective or file system ids (and any gain of capabilities) resets the
 * dumpable flag to fs.suid_dumpable; at 1 (the kernel's unsafe debugging mode) the worker would
 * then be ptraceable, and its memory and descriptors readable, by the user it became. So after
 * each change the flag is cleared again, and read back: a worker still dumpable stops. */
static int make_undumpable(void) {
        int r;

        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return negative_errno();
        r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        if (r < 0)
                return negative_errno();
        return r == 0 ? 0 : -EPERM;
}

static int bind_journal_socket(void) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (stat(JOURNAL_SOCKET, &st) < 0 || !S_ISSOCK(st.st_mode))
                return 0; /* no journald: the record beside the core is all there will be */
        if (mkdir("run", 0755) < 0 || mkdir("run/systemd", 0755) < 0 || mkdir("run/systemd/journal", 0755) < 0)
                return negative_errno();
        fd = open("run/systemd/journal/socket", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        if (mount(JOURNAL_SOCKET, "run/systemd/journal/socket", NULL, MS_BIND, NULL) < 0)
                return negative_errno();
        return 0;
}

static int pivot_root_(const char *new_root, const char *put_old) {
        return syscall(SYS_pivot_root, new_root, put_old) < 0 ? negative_errno() : 0;
}

/* The current mount namespace's whole tree becomes a read-only tmpfs with the journal socket
 * bound in; the old tree is detached. Its directories are 0755 whatever the umask (the worker,
 * as the job's user, must reach the socket). */
static int build_empty_root(void) {
        int r;

        (void) umask(0022);
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return negative_errno();
        if (mount("tmpfs", EMPTY_ROOT_MOUNTPOINT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, EMPTY_ROOT_OPTIONS) < 0)
                return negative_errno();
        if (chdir(EMPTY_ROOT_MOUNTPOINT) < 0)
                return negative_errno();
        r = bind_journal_socket();
        if (r < 0)
                return r;
        if (mkdir("oldroot", 0700) < 0)
                return negative_errno();
        r = pivot_root_(".", "oldroot");
        if (r < 0)
                return r;
        if (umount2("/oldroot", MNT_DETACH) < 0 || rmdir("/oldroot") < 0)
                return negative_errno();
        if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return negative_errno();
        return chdir("/") < 0 ? negative_errno() : 0;
}

/* The empty root in a mount namespace of its own, made as the real root before the user
 * namespace: its files are root's (no user is mapped yet, and none needs to be), and the mount
 * namespace belongs to the initial user namespace, so the worker's capabilities in its own
 * (until it drops them) reach none of its mounts. Detaching the old tree is the slow part of the
 * sandbox (every mount of the host goes), so it is done before READY, off the crashed task's
 * clock. -EOPNOTSUPP without CAP_SYS_ADMIN here, which is how coredumpd starts its workers (only
 * its forward launcher keeps that capability; also a unit whose CapabilityBoundingSet= lacks it,
 * a container): then it is made inside the user namespace once the job's user is mapped
 * (enter_empty_root_mapped()); a spare mapped ahead makes it so before READY, a spare not mapped
 * yet once its job comes (measured here: no difference beyond the noise, 3.4 ms a plain user's
 * tiny crash held either way). The sandbox test probe, root with every capability, takes this
 * path. */
static int enter_empty_root(void) {
        if (unshare(CLONE_NEWNS) < 0)
                return errno == EPERM || errno == EINVAL ? -EOPNOTSUPP : negative_errno();
        return build_empty_root();
}

/* The same inside the worker's own user and mount namespaces, after the job's ids are mapped:
 * files are created as the fs ids, and root is not mapped in there, so as the target's. */
static int enter_empty_root_mapped(uid_t uid, gid_t gid) {
        int r;

        (void) setfsgid(gid);
        (void) setfsuid(uid);
        if ((gid_t) setfsgid((gid_t) -1) != gid || (uid_t) setfsuid((uid_t) -1) != uid)
                return -EPERM;
        r = make_undumpable();
        if (r < 0)
                return r;
        return build_empty_root();
}

/* Namespaces made before the job (they do not depend on it), waiting for the user to map. */
static struct {
        int state;  /* 0: not prepared; 1: made, helper waiting; -EOPNOTSUPP: refused by the kernel */
        bool empty_root; /* made, before the user namespace or (enter_empty_root_mapped()) in it */
        pid_t helper;
        int pipe_fd; /* to the helper: the ids to map, or nothing (it exits) */
        bool bounding_dropped; /* emptied in the new user namespace (none is entered after it) */
} ns_prep = { .pipe_fd = -EBADF };

/* The helper, left behind in the parent namespaces: reads "UID GID" and maps them for its
 * parent, or exits on EOF. */
static _noreturn_ void id_map_helper(int fd) {
        char buf[64];
        unsigned uid, gid;
        ssize_t n = read(fd, buf, sizeof buf - 1);

        if (n <= 0)
                _exit(0);
        buf[n] = 0;
        if (sscanf(buf, "%u %u", &uid, &gid) != 2)
                _exit(1);
        _exit(write_id_maps(getppid(), (uid_t) uid, (gid_t) gid) < 0 ? 1 : 0);
}

/* Mapping another user needs CAP_SETUID in the parent namespace, which a process loses for
 * itself by entering the new one: someone left in the parent writes the maps. coredumpd does,
 * for its workers (sandbox_prepare(false): the worker says in READY that it has namespaces, and
 * the manager maps the job's ids before sending the job, or WorkerUser='s ahead of any job); a
 * process without such a parent (sandbox_prepare(true), or sandbox_enter() unprepared) forks a
 * helper child that stays in the parent namespace. Making the namespaces (a network namespace
 * above all) and detaching the old file system tree are the slow part of the sandbox and do not
 * depend on the job, so they are done before the worker says READY; only the mapping waits for a
 * user. Returns 0, or -EOPNOTSUPP if the kernel refuses the namespaces (sandbox_enter then goes
 * on without), or another error. */
int sandbox_prepare(bool helper) {
        int p[2] = { -EBADF, -EBADF }, r;
        pid_t child = 0;

        if (ns_prep.state != 0)
                return ns_prep.state < 0 ? ns_prep.state : 0;
        if (helper) {
                if (pipe2(p, O_CLOEXEC) < 0)
                        return negative_errno();
                child = fork();
                if (child < 0) {
                        r = negative_errno();
                        safe_close(p[0]);
                        safe_close(p[1]);
                        return r;
                }
                if (child == 0) {
                        safe_close(p[1]);
                        id_map_helper(p[0]);
                }
                p[0] = safe_close(p[0]);
        }
        /* the helper keeps the old tree: it writes the maps through /proc */
        r = enter_empty_root();
        if (r >= 0)
                ns_prep.empty_root = true;
        else if (r != -EOPNOTSUPP) {
                safe_close(p[1]);
                if (child > 0)
                        (void) waitpid(child, NULL, 0);
                return r;
        }
        /* with the empty root, no mount namespace of its own: the one above belongs to the real
         * root, so nothing in it can be mounted or unmounted from the user namespace; without, one
         * of its own, where sandbox_enter() makes the empty root */
        r = unshare(CLONE_NEWUSER | CLONE_NEWIPC | (ns_prep.empty_root ? 0 : CLONE_NEWNS) |
                    (sandbox_landlock_scopes_sockets() ? 0 : CLONE_NEWNET)) < 0 ? negative_errno() : 0;
        if (r < 0) {
                safe_close(p[1]); /* the helper exits */
                if (child > 0)
                        (void) waitpid(child, NULL, 0);
                if (r == -EPERM || r == -EINVAL || r == -ENOSPC || r == -EUSERS) {
                        ns_prep.state = -EOPNOTSUPP; /* user namespaces off here (sysctl, nesting, limits) */
                        return -EOPNOTSUPP;
                }
                return r;
        }
        ns_prep.state = 1;
        ns_prep.helper = child;
        ns_prep.pipe_fd = p[1];
        /* The new user namespace grants every capability in it: a spare waiting for its job
         * must not hold a bounding set beyond the manager's. */
        r = drop_bounding_set();
        ns_prep.bounding_dropped = r >= 0;
        return r;
}

/* Has the helper map uid and gid in the namespaces sandbox_prepare() made; without a helper,
 * the parent has mapped them (drop_ids() fails if it has not). */
static int enter_namespaces(uid_t uid, gid_t gid) {
        char ids[64];
        int status, r;

        r = sandbox_prepare(true);
        if (r < 0)
                return r;
        if (ns_prep.helper <= 0) {
                ns_prep.state = -EBADF; /* used up */
                return 0;
        }
        snprintf(ids, sizeof ids, "%u %u", (unsigned) uid, (unsigned) gid);
        r = loop_write(ns_prep.pipe_fd, ids, strlen(ids));
        ns_prep.pipe_fd = safe_close(ns_prep.pipe_fd);
        if (waitpid(ns_prep.helper, &status, 0) < 0)
                return negative_errno();
        ns_prep.state = -EBADF; /* used up */
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EIO;
        return 0;
}

static int drop_bounding_set(void) {
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return negative_errno();
        return 0;
}

static int drop_ids(uid_t uid, gid_t gid) {
        uid_t ru, eu, su;
        gid_t rg, eg, sg;
        int r;

        if (setgroups(0, NULL) < 0)
                return negative_errno();
        if (setresgid(gid, gid, gid) < 0)
                return negative_errno();
        r = make_undumpable();
        if (r < 0)
                return r;
        /* ptrace and /proc/PID/{mem,environ,fd} need the caller's uid to be all three of ours: the
         * saved uid stays root until the flag the effective uid change reset is cleared, so the
         * user never sees this process dumpable. Changing the saved uid alone leaves it cleared. */
        if (setresuid(uid, uid, (uid_t) -1) < 0)
                return negative_errno();
        r = make_undumpable();
        if (r < 0)
                return r;
        if (setresuid((uid_t) -1, (uid_t) -1, uid) < 0)
                return negative_errno();
        /* Prove it: the old ids must be gone for good. */
        if (setresuid(0, 0, 0) == 0 || setuid(0) == 0 || setresgid(0, 0, 0) == 0)
                return -EPERM;
        if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid)
                return -EPERM;
        if (getresgid(&rg, &eg, &sg) < 0 || rg != gid || eg != gid || sg != gid)
                return -EPERM;
        return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -EPERM;
}

static int drop_caps(void) {
        cap_t caps = cap_init(); /* all sets empty */
        int r = 0;

        if (!caps)
                return -ENOMEM;
        if (cap_set_proc(caps) < 0)
                r = negative_errno();
        cap_free(caps);
        if (r == 0 && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                r = negative_errno();
        return r;
}

/* RLIMIT_NPROC counts the tasks of the worker's uid in its own user namespace (where there is
 * none, in the whole system: then threads may be refused, and zstd goes on without). */
static int set_rlimits(uint64_t address_space, unsigned nofile, unsigned threads) {
        struct {
                int resource;
                rlim_t value;
        } limits[] = {
                { RLIMIT_CORE, 0 },
                { RLIMIT_NOFILE, nofile > 0 ? nofile : SANDBOX_NOFILE_BASE },
                { RLIMIT_NPROC, threads > 0 ? (rlim_t) threads + 1 : 0 },
                { RLIMIT_AS, address_space },
        };

        for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
                struct rlimit rl = { limits[i].value, limits[i].value };
                if (limits[i].resource == RLIMIT_AS && address_space == 0)
                        continue;
                if (setrlimit(limits[i].resource, &rl) < 0)
                        return negative_errno();
        }
        return 0;
}

int sandbox_narrow(const SandboxParams *p) {
        return set_rlimits(p->address_space, p->nofile, p->threads);
}

/* Changing the effective or filesystem ids clears the parent-death signal (prctl(2)): a worker
 * would outlive a manager killed mid-core, holding the crashed task until its core was done. Set
 * it again, then make sure the parent did not go in between. */
static int keep_dying_with_parent(pid_t parent) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return negative_errno();
        return getppid() == parent ? 0 : -ESRCH;
}

int sandbox_enter(const SandboxParams *p, SandboxReport *ret) {
        int keep[SANDBOX_KEEP_FDS_MAX];
        pid_t parent = getppid();
        int r, e;

        *ret = (SandboxReport) {};
        if (p->n_keep_fds > ELEMENTSOF(keep) || p->uid == 0)
                return -EINVAL;
        memcpy(keep, p->keep_fds, sizeof(int) * p->n_keep_fds);
        r = make_undumpable();
        if (r < 0)
                return log_error_errno(r, "Failed to make the worker non-dumpable: %m");

        /* first, while the pipe to the helper is still open */
        r = enter_namespaces(p->uid, p->gid);
        if (r < 0 && r != -EOPNOTSUPP)
                return log_error_errno(r, "Failed to set up namespaces: %m");
        e = close_all_fds_except(keep, p->n_keep_fds);
        if (e < 0)
                return log_error_errno(e, "Failed to close stray fds: %m");
        ret->namespaces = r >= 0; /* else: user namespaces are off here: the remaining steps still hold */
        if (ret->namespaces && !ns_prep.empty_root) {
                r = enter_empty_root_mapped(p->uid, p->gid);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the empty root: %m");
                ns_prep.empty_root = true;
        }
        ret->empty_root = ns_prep.empty_root;
        /* once is enough (CAP_LAST_CAP + 1 prctl()s, with the task held): only entering a user
         * namespace fills the set again, and none is entered after sandbox_prepare() */
        r = ns_prep.bounding_dropped ? 0 : drop_bounding_set();
        if (r < 0)
                return log_error_errno(r, "Failed to drop the capability bounding set: %m");
        r = drop_ids(p->uid, p->gid);
        if (r < 0)
                return log_error_errno(r, "Failed to become uid %u gid %u for good: %m", (unsigned) p->uid,
                                       (unsigned) p->gid);
        r = keep_dying_with_parent(parent);
        if (r < 0)
                return log_error_errno(r, "Failed to die with the manager again after the id change: %m");
        r = drop_caps();
        if (r < 0)
                return log_error_errno(r, "Failed to clear capabilities: %m");
        r = set_rlimits(p->address_space, p->nofile, p->threads);
        if (r < 0)
                return log_error_errno(r, "Failed to set resource limits: %m");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return log_error_errno(negative_errno(), "PR_SET_NO_NEW_PRIVS: %m");
        ret->landlock_abi = sandbox_landlock();
        if (ret->landlock_abi < 0)
                return log_error_errno(ret->landlock_abi, "Failed to apply Landlock: %m");
        /* the last credential change (Landlock's): still not dumpable, checked */
        r = make_undumpable();
        if (r < 0)
                return log_error_errno(r, "Failed to make the worker non-dumpable again: %m");
        r = sandbox_seccomp();
        if (r < 0)
                return log_error_errno(r, "Failed to install the seccomp filter: %m");
        return 0;
}
