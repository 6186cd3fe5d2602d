/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The module opener: the crashed process's mapped files, opened beneath its root for the worker's
 * traces. Runs in the per-crash collector (collector.c) with the crashed task's file-system
 * credentials; opens files read-only, never reads them. */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "fs-kind.h"
#include "hash.h"
#include "macro.h"
#include "modules.h"
#include "test-fault.h"

#define MOUNT_FSTYPE_MAX 64    /* a mountinfo type ("fuse.sshfs"): longer ones are no virtiofs */
#define MOUNT_ID_DIGITS_MAX 20 /* a 64-bit mount ID in decimal */
#define MOUNT_HEAD_MAX 128     /* "ID PARENT MAJ:MIN ", and more */

#define DELETED_SUFFIX " (deleted)"
#define MAPS_FIELDS_BEFORE_DEV 3 /* range perms offset */

/* The next space-separated field of [*p, end), the spaces after it skipped. */
static const char *maps_field(const char **p, const char *end, size_t *ret_len) {
        const char *f = *p, *e = f;

        while (e < end && *e != ' ')
                e++;
        *ret_len = (size_t) (e - f);
        while (e < end && *e == ' ')
                e++;
        *p = e;
        return f;
}

int modules_maps_line(const char *line, size_t len, MapsFile *ret) {
        const char *p = line, *end = line + len, *f;
        char num[32];
        unsigned maj, min;
        unsigned long long ino;
        size_t l;

        for (unsigned i = 0; i < MAPS_FIELDS_BEFORE_DEV; i++)
                (void) maps_field(&p, end, &l);
        f = maps_field(&p, end, &l);
        if (l == 0 || l >= sizeof num)
                return -ENOENT;
        memcpy(num, f, l);
        num[l] = 0;
        if (sscanf(num, "%x:%x", &maj, &min) != 2)
                return -ENOENT;
        f = maps_field(&p, end, &l);
        if (l == 0 || l >= sizeof num)
                return -ENOENT;
        memcpy(num, f, l);
        num[l] = 0;
        if (sscanf(num, "%llu", &ino) != 1 || ino == 0 || p >= end || *p != '/')
                return -ENOENT;
        l = (size_t) (end - p);
        if (l >= strlen(DELETED_SUFFIX) && memcmp(end - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX)) == 0)
                return -ENOENT;
        if (l >= sizeof ret->path || memchr(p, 0, l))
                return -ENAMETOOLONG;
        memcpy(ret->path, p, l);
        ret->path[l] = 0;
        ret->dev = makedev(maj, min);
        ret->ino = (ino_t) ino;
        return 0;
}

/* How many bytes of [p, end) come before a space. */
static size_t field_len(const char *p, const char *end) {
        const char *e = memchr(p, ' ', (size_t) (end - p));
        return (size_t) ((e ?: end) - p);
}

/* The line of mountinfo for the mount with ID mnt_id, without its newline. */
static int mount_line(const char *mountinfo, size_t len, uint64_t mnt_id, const char **ret, size_t *ret_len) {
        const char *p = mountinfo, *end = mountinfo + len;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end;
                char id[MOUNT_ID_DIGITS_MAX + 1];
                size_t l = field_len(p, eol);

                /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE OPTIONS" */
                if (l > 0 && l < sizeof id) {
                        memcpy(id, p, l);
                        id[l] = 0;
                        if (strspn(id, "0123456789") == l && strtoull(id, NULL, 10) == mnt_id) {
                                *ret = p;
                                *ret_len = (size_t) (eol - p);
                                return 0;
                        }
                }
                p = eol < end ? eol + 1 : end;
        }
        return -ENOENT;
}

int modules_mount_dev(const char *mountinfo, size_t len, uint64_t mnt_id, dev_t *ret) {
        const char *p;
        char line[MOUNT_HEAD_MAX];
        unsigned maj, min;
        size_t l;

        if (mount_line(mountinfo, len, mnt_id, &p, &l) < 0)
                return -ENOENT;
        snprintf(line, sizeof line, "%.*s", (int) MIN(l, sizeof line - 1), p);
        if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2)
                return -ENOENT;
        *ret = makedev(maj, min);
        return 0;
}

int modules_mount_fstype(const char *mountinfo, size_t len, uint64_t mnt_id, char *buf, size_t size) {
        const char *p, *sep, *end;
        size_t l, n;

        assert(size > 0);
        if (mount_line(mountinfo, len, mnt_id, &p, &l) < 0)
                return -ENOENT;
        end = p + l;
        /* the optional fields end at a lone "-"; no field before has a space (mountinfo escapes them) */
        sep = memmem(p, l, " - ", strlen(" - "));
        if (!sep)
                return -ENOENT;
        p = sep + strlen(" - ");
        n = field_len(p, end);
        if (n == 0 || n >= size)
                return -ENOENT;
        memcpy(buf, p, n);
        buf[n] = 0;
        return 0;
}

bool modules_mount_trusted_fuse(const char *mountinfo, size_t len, uint64_t mnt_id, dev_t dev) {
        char fstype[MOUNT_FSTYPE_MAX];
        dev_t mdev;

        /* mountinfo was read before: a mount ID freed since may name another mount now, but not
         * with the device of a superblock that is still there (the file's, on its mount) */
        return modules_mount_fstype(mountinfo, len, mnt_id, fstype, sizeof fstype) == 0 &&
               strcmp(fstype, "virtiofs") == 0 && modules_mount_dev(mountinfo, len, mnt_id, &mdev) == 0 && mdev == dev;
}

static bool seen(const ModuleSet *s, const char *path) {
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->entries[i].path, path) == 0)
                        return true;
        return false;
}

const char *modules_path_in_root(const char *root_path, const char *path) {
        size_t l = root_path ? strlen(root_path) : 0;

        while (l > 0 && root_path[l - 1] == '/')
                l--;
        if (l == 0 || strncmp(path, root_path, l) != 0 || path[l] != '/')
                return path;
        return path + l;
}

/* path beneath root, as an O_PATH descriptor, with no symlink followed on the way. */
static int resolve_beneath(int root, const char *path) {
        struct open_how how = {
                .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd = (int) syscall(SYS_openat2, root, path, &how, sizeof how);

        if (fd < 0 && (errno == ENOSYS || errno == EPERM))
                return fd_walk_beneath(root, path);
        return fd < 0 ? negative_errno() : fd;
}

#ifdef MANAGER_TEST_FAULTS
/* Test builds only (meson -Dworker-test-faults=true): COREDUMPD_TEST_FAULT=modules-fuse opens a
 * file on FUSE as any other, as a file system stacked over FUSE (overlayfs, ecryptfs) would be
 * opened: what must hold then (the manager never holding one) is tested with it. */
static bool fault_fuse_opened(void) {
        return test_fault_is("modules-fuse");
}
#else
static bool fault_fuse_opened(void) {
        return false;
}
#endif

/* Whether a file on a FUSE file system (statx gave sx) may be opened. Every close of a descriptor
 * of a FUSE file asks its server to FLUSH and waits for the answer uninterruptibly, SIGKILL or not
 * (the request is forced): one in the manager's or a worker's hands would let the server, any
 * user's program, freeze them for ever. virtiofs shares the magic; its server is the host's, and
 * no user mounts it, so its files are opened as any other. Undecided is refused. */
static bool fuse_trusted(const struct statx *sx, const char *mountinfo, size_t mlen) {
        return fault_fuse_opened() ||
               ((sx->stx_mask & STATX_MNT_ID) &&
                modules_mount_trusted_fuse(mountinfo, mlen, sx->stx_mnt_id, makedev(sx->stx_dev_major, sx->stx_dev_minor)));
}

/* Whether the O_PATH fd is the very file the maps line names: a regular file with its inode,
 * on its device. maps gives the superblock's device; stat() may give another where a file
 * system numbers its subvolumes apart (btrfs): then the mount the file was reached through
 * must be on maps' device (mountinfo gives the superblock's device too). */
static int check_mapped(int fd, const MapsFile *mf, const char *mountinfo, size_t mlen) {
        struct statx sx;
        struct statfs sf;
        dev_t mdev;

        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_MNT_ID, &sx) < 0)
                return negative_errno();
        if (!S_ISREG(sx.stx_mode))
                return -EBADFD;
        if (sx.stx_ino != (uint64_t) mf->ino)
                return -ESTALE;
        if (makedev(sx.stx_dev_major, sx.stx_dev_minor) != mf->dev &&
            (!(sx.stx_mask & STATX_MNT_ID) || modules_mount_dev(mountinfo, mlen, sx.stx_mnt_id, &mdev) < 0 ||
             mdev != mf->dev))
                return -ESTALE;
        if (fstatfs(fd, &sf) < 0)
                return negative_errno();
        if (fs_is_kernel_interface((uint64_t) sf.f_type))
                return -EREMOTEIO;
        if (fs_is_fuse((uint64_t) sf.f_type) && !fuse_trusted(&sx, mountinfo, mlen))
                return -EREMOTE;
        return 0;
}

/* The file a maps line names, opened for reading with the caller's credentials. The O_PATH
 * descriptor opens nothing (no device, FIFO or FUSE open is ever triggered before the checks);
 * reopening it through /proc/self/fd is an open like any other, permission check included. */
static int open_mapped(int root, const char *root_path, const MapsFile *mf, const char *mountinfo, size_t mlen) {
        _cleanup_close_ int pfd = resolve_beneath(root, modules_path_in_root(root_path, mf->path));
        char proc[64];
        struct stat a, b;
        int r, fd;

        if (pfd < 0)
                return pfd;
        r = check_mapped(pfd, mf, mountinfo, mlen);
        if (r < 0)
                return r;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(pfd, &a) < 0 || fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
                safe_close(fd);
                return -ESTALE;
        }
        return fd;
}

#define OMITTED_TRACKED 1024U /* distinct files past MODULES_MAX told apart; beyond, runs of lines */

typedef struct ModulesWalk {
        int root;
        const char *root_path;
        const char *mountinfo;
        size_t mountinfo_len;
        char last_failed[MODULE_PATH_MAX];  /* a file's other mappings follow its first */
        char last_omitted[MODULE_PATH_MAX]; /* likewise: one run of lines, one file */
        uint64_t *omitted;                  /* hashes of the paths counted past MODULES_MAX */
        size_t n_omitted;
        ModulesProgress progress;           /* told of each file before it is opened */
        void *userdata;
} ModulesWalk;

/* Whether path is a file past MODULES_MAX not counted yet (then it is now). */
static bool omitted_new(ModulesWalk *w, const char *path) {
        uint64_t h = fnv1a_64(FNV1A_64_OFFSET, path);

        if (strcmp(path, w->last_omitted) == 0)
                return false;
        snprintf(w->last_omitted, sizeof w->last_omitted, "%s", path);
        if (!w->omitted)
                w->omitted = calloc(OMITTED_TRACKED, sizeof *w->omitted);
        if (!w->omitted || w->n_omitted >= OMITTED_TRACKED)
                return true;
        for (size_t i = 0; i < w->n_omitted; i++)
                if (w->omitted[i] == h)
                        return false;
        w->omitted[w->n_omitted++] = h;
        return true;
}

static void module_add(ModuleSet *s, ModulesWalk *w, const MapsFile *mf) {
        int fd;

        if (seen(s, mf->path) || strcmp(mf->path, w->last_failed) == 0)
                return;
        if (s->n >= MODULES_MAX) {
                s->omitted += omitted_new(w, mf->path);
                return;
        }
        if (w->progress)
                w->progress(w->userdata, mf->path);
        fd = open_mapped(w->root, w->root_path, mf, w->mountinfo, w->mountinfo_len);
        if (fd < 0) {
                if (s->refused++ == 0) {
                        s->first_refusal = fd;
                        snprintf(s->first_refused, sizeof s->first_refused, "%s", mf->path);
                }
                snprintf(w->last_failed, sizeof w->last_failed, "%s", mf->path);
                return;
        }
        s->fds[s->n] = fd;
        /* named as the core names it: from the task's root */
        snprintf(s->entries[s->n].path, sizeof s->entries[s->n].path, "%s", modules_path_in_root(w->root_path, mf->path));
        s->n++;
}

/* The file of the maps line [p, eol), if any, to the set. */
static void module_line(ModuleSet *s, ModulesWalk *w, const char *p, const char *eol) {
        MapsFile mf;

        if (modules_maps_line(p, (size_t) (eol - p), &mf) >= 0)
                module_add(s, w, &mf);
}

/* The executable's file, if maps lists it (the first line naming it). */
static void module_exe_first(ModuleSet *s, ModulesWalk *w, const char *maps, size_t len, const char *exe) {
        const char *p = maps, *end = maps + len;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end;
                MapsFile mf;

                if (modules_maps_line(p, (size_t) (eol - p), &mf) >= 0 && strcmp(mf.path, exe) == 0) {
                        module_add(s, w, &mf);
                        return;
                }
                p = eol + 1;
        }
}

int modules_open(const ModulesSource *src, ModuleSet *ret) {
        ModulesWalk w = {
                .root = src->root,
                .root_path = src->root_path,
                .mountinfo = src->mountinfo,
                .mountinfo_len = src->mountinfo_len,
                .progress = src->progress,
                .userdata = src->userdata,
        };
        const char *maps = src->maps, *end = src->maps + src->maps_len;

        assert(src->root >= 0);
        /* the counts only: nothing past n is read (the tables are 64 KiB) */
        ret->n = 0;
        ret->omitted = ret->refused = 0;
        ret->first_refusal = 0;
        ret->first_refused[0] = 0;
        /* Past MODULES_MAX, which files the traces get matters: the executable first, then the
         * rest from the highest address down. mmap() hands out addresses top-down, so that is
         * the order they were mapped in: ld.so and the libraries linked at start (libc, the
         * language runtime) before the ones dlopen()ed later, which are the ones left out. The
         * executable is taken as maps names it (its path from the exe link only picks the line):
         * nothing is opened that maps does not list. */
        if (src->exe && src->exe[0])
                module_exe_first(ret, &w, maps, src->maps_len, src->exe);
        while (end > maps) {
                const char *eol = end, *p;

                if (eol[-1] == '\n')
                        eol--;
                p = memrchr(maps, '\n', (size_t) (eol - maps));
                p = p ? p + 1 : maps;
                module_line(ret, &w, p, eol);
                end = p;
        }
        free(w.omitted);
        return (int) ret->n;
}

ModuleHandoff *module_handoff_new(void) {
        ModuleHandoff *h = malloc(sizeof *h);

        if (!h)
                return NULL;
        h->n = 0;
        h->collector = h->queue = h->collector_end = -EBADF;
        return h;
}

void module_handoff_let_go(ModuleHandoff *h) {
        h->queue = safe_close(h->queue);
        h->collector_end = safe_close(h->collector_end);
        h->collector = safe_close(h->collector);
}

void module_handoff_free(ModuleHandoff *h) {
        if (!h)
                return;
        module_handoff_let_go(h);
        free(h);
}

void modules_close(ModuleSet *s) {
        for (size_t i = 0; i < s->n; i++)
                s->fds[i] = safe_close(s->fds[i]);
        s->n = 0;
}
