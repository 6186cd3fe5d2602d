/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel socket: systemd's (LISTEN_FDS), or bound here in a root-owned 0700 directory reached
 * without symlinks. Manager (root): creates only that directory and socket, unlinks a stale one. */
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "forward-proto.h"
#include "listen.h"
#include "log.h"
#include "macro.h"

#define SOCKET_DIR_MODE 0700
#define SOCKET_MODE 0600

int listen_from_systemd(char *ret_path, size_t size, int *ret_handover, int *ret_receive) {
        struct sockaddr_un sa = {};
        socklen_t l = sizeof sa;
        int n, fd = -EBADF;

        *ret_handover = *ret_receive = -EBADF;
        n = sd_listen_fds(true);
        if (n < 0)
                return log_error_errno(n, "Failed to read LISTEN_FDS: %m");
        if (n == 0)
                return 0;
        if (n > 3)
                return log_error_errno(-EINVAL, "Expected at most three sockets from the service manager, got %d", n);
        /* told apart by type: the kernel's stream socket, the pipe helper's seqpacket one, and by
         * path the seqpacket one for forwarded crashes */
        for (int i = SD_LISTEN_FDS_START; i < SD_LISTEN_FDS_START + n; i++) {
                if (sd_is_socket_unix(i, SOCK_STREAM, 1, NULL, 0) > 0 && fd < 0)
                        fd = i;
                else if (sd_is_socket_unix(i, SOCK_SEQPACKET, 1, FORWARD_SOCKET_PATH, 0) > 0 && *ret_receive < 0)
                        *ret_receive = i;
                else if (sd_is_socket_unix(i, SOCK_SEQPACKET, 1, NULL, 0) > 0 && *ret_handover < 0)
                        *ret_handover = i;
                else
                        return log_error_errno(-EINVAL, "Passed fd %d is not one of our listening sockets", i);
                (void) fcntl(i, F_SETFD, FD_CLOEXEC);
        }
        if (fd < 0)
                return log_error_errno(-EINVAL, "No listening AF_UNIX stream socket was passed");
        if (getsockname(fd, (struct sockaddr *) &sa, &l) < 0)
                return log_error_errno(negative_errno(), "getsockname: %m");
        if (l <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] != '/')
                return log_error_errno(-EINVAL, "The passed socket is not bound to a path");
        snprintf(ret_path, size, "%.*s", (int) (l - offsetof(struct sockaddr_un, sun_path)), sa.sun_path);
        return fd;
}

/* Walks the path from "/" one component at a time, never following a symlink. Returns an
 * O_PATH fd of the last directory. */
static int walk_dirs(const char *dir) {
        _cleanup_close_ int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        char copy[SOCKET_PATH_MAX];
        char *save = NULL;

        if (fd < 0)
                return negative_errno();
        snprintf(copy, sizeof copy, "%s", dir);
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                struct stat st;
                int next;

                if (strcmp(c, "..") == 0 || strcmp(c, ".") == 0)
                        return log_error_errno(-EINVAL, "Socket path %s has a '%s' component", dir, c);
                next = openat(fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return log_error_errno(negative_errno(), "Cannot open %s of %s: %m", c, dir);
                safe_close(fd);
                fd = next;
                if (fstat(fd, &st) < 0)
                        return negative_errno();
                if (S_ISLNK(st.st_mode))
                        return log_error_errno(-ELOOP, "Socket path %s has a symlink at '%s': the kernel refuses symlinks", dir, c);
                if (!S_ISDIR(st.st_mode))
                        return log_error_errno(-ENOTDIR, "'%s' in %s is not a directory", c, dir);
                if (st.st_mode & (S_IWGRP | S_IWOTH))
                        return log_error_errno(-EPERM, "'%s' in %s is group- or world-writable", c, dir);
                if (st.st_uid != 0)
                        return log_error_errno(-EPERM, "'%s' in %s is not owned by root", c, dir);
        }
        return TAKE_FD(fd);
}

static int socket_path_valid(const char *path) {
        if (path[0] != '/' || strlen(path) >= SOCKET_PATH_MAX || strchr(path, ' '))
                return log_error_errno(-EINVAL, "Socket path '%s' must be absolute, without spaces, shorter than %zu bytes",
                                       path, SOCKET_PATH_MAX);
        return 0;
}

int socket_path_check(const char *path) {
        char copy[SOCKET_PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = socket_path_valid(path);
        if (r < 0)
                return r;
        snprintf(copy, sizeof copy, "%s", path);
        fd = walk_dirs(dirname(copy));
        return fd < 0 ? fd : 0;
}

/* The socket's own directory is made here if missing (after a boot /run is empty; under
 * systemd the socket unit makes it): beneath its parent, reached without symlinks like every
 * other component, then checked like them and for its mode. */
static int ensure_socket_dir(const char *dir) {
        char parent[SOCKET_PATH_MAX], name[SOCKET_PATH_MAX];
        _cleanup_close_ int pfd = -EBADF, fd = -EBADF;
        struct stat st;

        snprintf(parent, sizeof parent, "%s", dir);
        snprintf(name, sizeof name, "%s", dir);
        pfd = walk_dirs(dirname(parent));
        if (pfd < 0)
                return pfd;
        if (mkdirat(pfd, basename(name), SOCKET_DIR_MODE) < 0 && errno != EEXIST)
                return log_error_errno(negative_errno(), "Failed to create %s: %m", dir);
        fd = walk_dirs(dir);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((st.st_mode & 07777) != SOCKET_DIR_MODE)
                return log_error_errno(-EPERM, "%s has mode %04o, expected %04o", dir, st.st_mode & 07777,
                                       SOCKET_DIR_MODE);
        return 0;
}

int listen_bind(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        char copy[SOCKET_PATH_MAX];
        struct stat st;
        mode_t old;
        int r;

        r = socket_path_valid(path);
        if (r < 0)
                return r;
        snprintf(copy, sizeof copy, "%s", path);
        r = ensure_socket_dir(dirname(copy));
        if (r < 0)
                return r;
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode))
                        return log_error_errno(-EEXIST, "%s exists and is not a socket", path);
                (void) unlink(path); /* stale, from a previous run */
        }

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return log_error_errno(negative_errno(), "socket: %m");
        memcpy(sa.sun_path, path, strlen(path) + 1);
        old = umask(0777 & ~SOCKET_MODE);
        r = bind(fd, (struct sockaddr *) &sa, sizeof sa);
        umask(old);
        if (r < 0)
                return log_error_errno(negative_errno(), "Failed to bind %s: %m", path);
        if (chmod(path, SOCKET_MODE) < 0)
                return log_error_errno(negative_errno(), "chmod %s: %m", path);
        if (listen(fd, LISTEN_BACKLOG) < 0)
                return log_error_errno(negative_errno(), "listen: %m");
        return TAKE_FD(fd);
}
