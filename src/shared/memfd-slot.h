/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: memfds made ahead of the seccomp filter that refuses memfd_create (the worker's),
 * each sealed against growing past a bound before untrusted bytes are read, filled from its
 * start, then cut to what was written and sealed whole. Acts on the memfds given only. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A new memfd that takes seals (close-on-exec). */
int memfd_slot_new(const char *name);
/* Sized to max and sealed against growing: writes past max fail (EPERM), and nobody holding the
 * descriptor can undo the seal. */
int memfd_slot_limit(int fd, uint64_t max);
/* len bytes written from its start. */
int memfd_slot_fill(int fd, const void *buf, size_t len);
/* Cut to len bytes (what was written) and sealed whole: neither shrunk, grown nor written
 * again, as journald and the manager require of the memfds they are given. */
int memfd_slot_finish(int fd, uint64_t len);
