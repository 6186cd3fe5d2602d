/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files coredumpctl info's confined symbolizer child asks for, opened here with the invoking
 * user's privileges: a module's own file (under --root), debug files by build-id below
 * /usr/lib/debug/.build-id, and what the debuginfod client (loaded when DEBUGINFOD_URLS is set)
 * fetches into its cache. Opens each as O_PATH first and reads none: only a regular file on a
 * file system that is neither a kernel interface nor FUSE is opened for reading, so no FIFO blocks
 * it, no device is opened and no user's server is asked. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "ctl-symbolize-proto.h"
#include "fd-util.h"
#include "fs-kind.h"

#define BUILD_ID_DIR "/usr/lib/debug/.build-id"
#define DEBUGINFOD_LIBRARY "libdebuginfod.so.1"
/* the hex of a build-id, "/", ".debug", the directory and its NUL */
#define BUILD_ID_PATH_MAX (sizeof BUILD_ID_DIR + 2 * SYMBOLIZE_BUILD_ID_MAX + 16)

/* path's file for reading, if it is a regular file (st) on no kernel interface or FUSE: opened
 * again through its O_PATH descriptor, so that what is read is what was looked at. */
static int reopen_regular(int pfd, struct stat *st) {
        struct statfs sf;
        int fd;

        if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode) || (uint64_t) st->st_size > SYMBOLIZE_FILE_MAX)
                return -ENOENT;
        if (fstatfs(pfd, &sf) < 0 || fs_is_kernel_interface((uint64_t) sf.f_type) || fs_is_fuse((uint64_t) sf.f_type))
                return -ENOENT;
        fd = fd_reopen_regular(pfd, O_RDONLY | O_NONBLOCK);
        return fd < 0 ? -ENOENT : fd;
}

/* Whether the file of a module a user's entry names may be read at all: root's or the caller's,
 * no one else may write it (one the user can write has whatever build-id and DWARF the user
 * chose, and can change under the reader), and everyone may read it (a program's libraries are:
 * a file only root may read, /etc/shadow, is never handed to the child, which could otherwise
 * spell its bytes in the build-ids it asks debuginfod for). The parsing is confined whatever the
 * file. */
static bool trusted_owner(const struct stat *st) {
        return (st->st_uid == 0 || st->st_uid == geteuid()) && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
               (st->st_mode & S_IROTH);
}

static int open_module_file(const SymModule *m, const char *root) {
        _cleanup_close_ int pfd = fd_open_beneath(root, m->path);
        struct stat st;
        int fd;

        if (pfd < 0)
                return -ENOENT;
        fd = reopen_regular(pfd, &st);
        if (fd >= 0 && !trusted_owner(&st)) {
                safe_close(fd);
                return -ENOENT;
        }
        return fd;
}

/* BUILD_ID_DIR/xx/rest[.debug]: root's directory, whose entries are often symbolic links into it */
static int open_by_build_id(const SymRequest *req, bool debug) {
        char path[BUILD_ID_PATH_MAX];
        _cleanup_close_ int pfd = -EBADF;
        struct stat st;
        size_t o;

        if (req->build_id_len < 2)
                return -ENOENT;
        o = (size_t) snprintf(path, sizeof path, BUILD_ID_DIR "/%02x/", req->build_id[0]);
        for (size_t i = 1; i < req->build_id_len; i++)
                o += (size_t) snprintf(path + o, sizeof path - o, "%02x", req->build_id[i]);
        if (debug)
                snprintf(path + o, sizeof path - o, ".debug");
        pfd = open(path, O_PATH | O_CLOEXEC);
        return pfd < 0 ? -ENOENT : reopen_regular(pfd, &st);
}

/* As root, a cache of root's: the client creates, renames and deletes files in it, which must
 * not be a tree a user controls through HOME or XDG_CACHE_HOME (sudo may keep them). */
static void pin_cache(void) {
        const struct passwd *pw;
        char path[PATH_MAX];

        if (geteuid() != 0 || getenv("DEBUGINFOD_CACHE_PATH") || !(pw = getpwuid(0)) || !pw->pw_dir)
                return;
        snprintf(path, sizeof path, "%s/.cache/debuginfod_client", pw->pw_dir);
        (void) setenv("DEBUGINFOD_CACHE_PATH", path, 1);
}

typedef struct debuginfod_client debuginfod_client;
typedef debuginfod_client *(*DebuginfodBegin)(void);
typedef int (*DebuginfodFind)(debuginfod_client *c, const unsigned char *id, int id_len, char **path);

/* The debuginfod client, loaded once on the first lookup (as libdwfl loads it): NULL if it is
 * not installed. */
static debuginfod_client *debuginfod(DebuginfodFind *ret_debuginfo, DebuginfodFind *ret_executable) {
        static debuginfod_client *client;
        static DebuginfodFind find_debuginfo, find_executable;
        static bool loaded;

        if (!loaded) {
                void *lib;
                DebuginfodBegin begin;

                loaded = true;
                pin_cache(); /* before the client exists: it must never see the other cache */
                lib = dlopen(DEBUGINFOD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
                begin = lib ? (DebuginfodBegin) dlsym(lib, "debuginfod_begin") : NULL;
                find_debuginfo = lib ? (DebuginfodFind) dlsym(lib, "debuginfod_find_debuginfo") : NULL;
                find_executable = lib ? (DebuginfodFind) dlsym(lib, "debuginfod_find_executable") : NULL;
                if (begin && find_debuginfo && find_executable)
                        client = begin();
        }
        *ret_debuginfo = find_debuginfo;
        *ret_executable = find_executable;
        return client;
}

/* By build-id from the debuginfod servers: the cached file, opened again read-only (the client's
 * descriptor of a fresh download is writable) and checked as every other. */
static int fetch(const SymRequest *req, bool debug) {
        DebuginfodFind find_debuginfo, find_executable;
        debuginfod_client *c = debuginfod(&find_debuginfo, &find_executable);
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (!c)
                return -ENOENT;
        fd = (debug ? find_debuginfo : find_executable)(c, req->build_id, (int) req->build_id_len, NULL);
        if (fd == -ENOSYS || fd == -ENOENT)
                return -ENOENT;
        if (fd < 0)
                return fd;
        return reopen_regular(fd, &st);
}

int symbolize_provide(const SymRequest *req, const SymModules *mods, const char *root) {
        SymRequest by_id = *req;
        int fd;

        if (req->want == SYM_WANT_ELF) {
                const SymModule *m;

                if (req->module >= mods->n)
                        return -EINVAL;
                m = &mods->items[req->module];
                fd = open_module_file(m, root);
                if (fd >= 0)
                        return fd;
                /* by the module's build-id as the message gave it, not the child's word */
                by_id.build_id_len = (uint32_t) m->build_id_len;
                memcpy(by_id.build_id, m->build_id, m->build_id_len);
        }
        fd = open_by_build_id(&by_id, req->want != SYM_WANT_ELF);
        return fd >= 0 ? fd : fetch(&by_id, req->want != SYM_WANT_ELF);
}
