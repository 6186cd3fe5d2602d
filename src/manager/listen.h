/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of coredumpd's listening socket and the checks of its path. Manager (root): creates
 * only the socket and its own directory. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

#define SOCKET_PATH_MAX sizeof(((struct sockaddr_un *) 0)->sun_path)
/* Crash storms arrive as one connection each; the kernel drops a dump when this is full. */
#define LISTEN_BACKLOG 4096

/* The sockets systemd passed (LISTEN_FDS), if any: returns the kernel's (a listening AF_UNIX
 * stream socket), 0 if none was passed, negative errno if what was passed is not ours. Its
 * path goes to ret_path; the pipe helper's handover socket (seqpacket), if passed, to
 * *ret_handover (else -EBADF); the one for crashes forwarded from the host (seqpacket, bound to
 * /run/systemd/coredump), if passed, to *ret_receive. */
int listen_from_systemd(char *ret_path, size_t size, int *ret_handover, int *ret_receive);
/* Binds path ourselves: the parent chain must have no symlink and no group/world-writable
 * directory, the directory itself is root-owned 0700, the socket 0600. */
int listen_bind(const char *path);
/* Refuses a path the kernel could not reach or that others could tamper with. */
int socket_path_check(const char *path);
