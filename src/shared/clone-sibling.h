/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: a child of one's own parent (the worker zygote's workers, the forward launcher's
 * forwarders: coredumpd's children). Acts on the calling process only. */
#pragma once

#include <sys/types.h>

/* A child of our parent (its exit signal is SIGCHLD, to our parent); its stack and memory a copy
 * of ours, as fork() makes them. clone3 first; clone where it answers ENOSYS (kernels before
 * 5.3, and systemd's RestrictNamespaces=, which cannot look into clone3's flags and refuses it
 * whole, as coredump-socket.service has it). Returns its PID, 0 in it, or a negative errno. The
 * child keeps glibc's idea of its thread id (ours): glibc 2.34 and later signal themselves with
 * gettid(), and the child is single-threaded. */
pid_t clone_sibling(void);
