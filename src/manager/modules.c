/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's module opener: the crashed process's mapped files, opened beneath its root for the
 * worker's traces. Runs as root in coredumpd; opens files read-only, never reads them. */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "macro.h"
#include "modules.h"

#define DELETED_SUFFIX " (deleted)"
#define MAPS_FIELDS_BEFORE_PATH 5 /* range perms offset dev inode */

int modules_maps_path(const char *line, size_t len, char *buf, size_t size) {
        size_t i = 0, fields = 0, l;

        /* skip five space-separated fields, then the padding */
        while (i < len && fields < MAPS_FIELDS_BEFORE_PATH) {
                while (i < len && line[i] != ' ')
                        i++;
                while (i < len && line[i] == ' ')
                        i++;
                fields++;
        }
        if (fields < MAPS_FIELDS_BEFORE_PATH || i >= len || line[i] != '/')
                return -ENOENT;
        l = len - i;
        if (l >= strlen(DELETED_SUFFIX) && memcmp(line + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX)) == 0)
                return -ENOENT;
        if (l >= size || memchr(line + i, 0, l))
                return -ENAMETOOLONG;
        memcpy(buf, line + i, l);
        buf[l] = 0;
        return 0;
}

static bool seen(const ModuleSet *s, const char *path) {
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->entries[i].path, path) == 0)
                        return true;
        return false;
}

#define SYMLINKS_MAX 40

static bool same_inode(int a, int b) {
        struct stat x, y;
        return fstat(a, &x) >= 0 && fstat(b, &y) >= 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* openat2(RESOLVE_IN_ROOT) by hand, for where openat2 is missing or filtered (systemd's
 * seccomp filters answer ENOSYS for calls their libseccomp does not know): one component at a
 * time with O_NOFOLLOW, symlinks re-read and resolved against root, ".." never above root. */
int modules_walk_beneath(int root, const char *path) {
        char buf[2 * PATH_MAX], *rest;
        _cleanup_close_ int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
        unsigned links = 0;

        if (cur < 0 || strlen(path) >= sizeof buf)
                return cur < 0 ? negative_errno() : -ENAMETOOLONG;
        snprintf(buf, sizeof buf, "%s", path);
        rest = buf;
        for (;;) {
                char *comp, target[PATH_MAX];
                struct stat st;
                int fd;
                ssize_t n;

                while (*rest == '/')
                        rest++;
                if (!*rest)
                        return TAKE_FD(cur);
                comp = rest;
                rest = strchrnul(rest, '/');
                if (*rest)
                        *rest++ = 0;
                if (strcmp(comp, ".") == 0 || (strcmp(comp, "..") == 0 && same_inode(cur, root)))
                        continue;
                fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                if (fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode)) {
                        safe_close(cur);
                        cur = fd;
                        continue;
                }
                n = readlinkat(fd, "", target, sizeof target - 1);
                safe_close(fd);
                if (n < 0 || ++links > SYMLINKS_MAX)
                        return n < 0 ? negative_errno() : -ELOOP;
                target[n] = 0;
                if (strlen(target) + 1 + strlen(rest) >= sizeof buf)
                        return -ENAMETOOLONG;
                /* the link's target, then what was left of the path */
                memmove(buf + strlen(target) + 1, rest, strlen(rest) + 1);
                memcpy(buf, target, strlen(target));
                buf[strlen(target)] = '/';
                rest = buf;
                if (target[0] == '/') {
                        safe_close(cur);
                        if ((cur = fcntl(root, F_DUPFD_CLOEXEC, 3)) < 0)
                                return negative_errno();
                }
        }
}

/* A regular file beneath root, opened for reading without ever opening anything else. */
static int open_beneath(int root, const char *path) {
        /* symlinks are followed, but never out of the root, and no /proc magic links */
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int pfd = -EBADF;
        char proc[64];
        struct stat st;
        int fd;

        pfd = (int) syscall(SYS_openat2, root, path, &how, sizeof how);
        if (pfd < 0 && (errno == ENOSYS || errno == EPERM))
                pfd = modules_walk_beneath(root, path);
        if (pfd < 0)
                return pfd == -1 ? negative_errno() : pfd;
        if (fstat(pfd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        return fd < 0 ? negative_errno() : fd;
}

#define OMITTED_TRACKED 1024U /* distinct files past MODULES_MAX told apart; beyond, runs of lines */

typedef struct ModulesWalk {
        int root;
        char last_failed[MODULE_PATH_MAX];  /* a file's other mappings follow its first */
        char last_omitted[MODULE_PATH_MAX]; /* likewise: one run of lines, one file */
        uint64_t *omitted;                  /* hashes of the paths counted past MODULES_MAX */
        size_t n_omitted;
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

static void module_add(ModuleSet *s, ModulesWalk *w, const char *path) {
        int fd;

        if (seen(s, path) || strcmp(path, w->last_failed) == 0)
                return;
        if (s->n >= MODULES_MAX) {
                s->omitted += omitted_new(w, path);
                return;
        }
        fd = open_beneath(w->root, path);
        if (fd < 0) {
                log_debug_errno(fd, "Module %s of the crashed process not opened: %m", path);
                snprintf(w->last_failed, sizeof w->last_failed, "%s", path);
                return;
        }
        s->fds[s->n] = fd;
        snprintf(s->entries[s->n].path, sizeof s->entries[s->n].path, "%s", path);
        s->n++;
}

/* The file of the maps line [p, eol), if any, to the set. */
static void module_line(ModuleSet *s, ModulesWalk *w, const char *p, const char *eol) {
        char path[MODULE_PATH_MAX];

        if (modules_maps_path(p, (size_t) (eol - p), path, sizeof path) >= 0)
                module_add(s, w, path);
}

/* The executable's file, if maps lists it (the first line naming it). */
static void module_exe_first(ModuleSet *s, ModulesWalk *w, const char *maps, size_t len, const char *exe) {
        const char *p = maps, *end = maps + len;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end;
                char path[MODULE_PATH_MAX];

                if (modules_maps_path(p, (size_t) (eol - p), path, sizeof path) >= 0 && strcmp(path, exe) == 0) {
                        module_add(s, w, path);
                        return;
                }
                p = eol + 1;
        }
}

int modules_open(int procdir, const char *maps, size_t len, ModuleSet *ret) {
        ModulesWalk w = { .root = openat(procdir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC) };
        const char *end = maps + len;
        char exe[MODULE_PATH_MAX];
        ssize_t n;

        ret->n = 0;
        ret->omitted = 0;
        if (w.root < 0)
                return log_debug_errno(negative_errno(), "No root of the crashed process for its modules: %m");
        /* Past MODULES_MAX, which files the traces get matters: the executable first, then the
         * rest from the highest address down. mmap() hands out addresses top-down, so that is
         * the order they were mapped in: ld.so and the libraries linked at start (libc, the
         * language runtime) before the ones dlopen()ed later, which are the ones left out. The
         * executable is taken as maps names it (its path from the exe link only picks the line):
         * nothing is opened that maps does not list. */
        n = readlinkat(procdir, "exe", exe, sizeof exe - 1);
        if (n > 0) {
                exe[n] = 0;
                module_exe_first(ret, &w, maps, len, exe);
        }
        while (end > maps) {
                const char *eol = end, *p;

                if (eol[-1] == '\n')
                        eol--;
                p = memrchr(maps, '\n', (size_t) (eol - maps));
                p = p ? p + 1 : maps;
                module_line(ret, &w, p, eol);
                end = p;
        }
        safe_close(w.root);
        free(w.omitted);
        return (int) ret->n;
}

void modules_close(ModuleSet *s) {
        for (size_t i = 0; i < s->n; i++)
                s->fds[i] = safe_close(s->fds[i]);
        s->n = 0;
}
