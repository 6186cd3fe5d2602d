/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: choosing, setting and restoring kernel.core_pattern (and core_pipe_limit). Manager
 * (root): touches only /proc/sys/kernel. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* kernel.core_pattern holds at most this much (CORENAME_MAX_SIZE). */
#define CORE_PATTERN_MAX 128
#define CORE_PATTERN_FILE "/proc/sys/kernel/core_pattern"

int pattern_read(char *buf, size_t size);
/* Writes the pattern, reads it back and, if the kernel did not take it exactly (some kernels
 * accept invalid patterns, others change them), puts the previous one back: -EIO. */
int pattern_write(const char *pattern);
/* "@@path" on kernels with the request protocol (6.17+), "@path" on 6.16; -EOPNOTSUPP on a
 * kernel without the coredump socket. */
int pattern_for_socket(const char *socket_path, char *buf, size_t size);
/* The handover socket of pipe mode, beside the kernel socket: DIR/pipe.sock. */
#define PIPE_SOCKET_NAME "pipe.sock"
int pipe_socket_path(const char *socket_path, char *buf, size_t size);
/* "|DIR/coredump-pipe HANDOVER %P %I %u %g %s %t %c %h %d %F", the helper next to coredumpd. */
int pattern_for_pipe(const char *socket_path, char *buf, size_t size);
/* The pattern Mode= and the running kernel call for: the socket (auto, socket) where the kernel
 * has it, else the pipe (auto, pipe). Returns 1 for pipe mode, 0 for socket mode; *ret_why says
 * why, for the log and --check-config. */
int pattern_choose(CaptureMode mode, const char *socket_path, char *buf, size_t size, const char **ret_why);
/* Registers, saving the previous pattern into saved; *ret_pipe tells the mode chosen. */
int pattern_register(CaptureMode mode, const char *socket_path, char *saved, size_t saved_size, char *ours,
                     size_t ours_size, bool *ret_pipe);
/* kernel.core_pipe_limit: the kernel keeps a crashed task until its helper (and whoever took
 * the pipe) is done, for up to this many crashes at once. Set while pipe mode is registered. */
#define CORE_PIPE_LIMIT_FILE "/proc/sys/kernel/core_pipe_limit"
int pipe_limit_raise(unsigned want, unsigned *ret_old);
int pipe_limit_set(unsigned value);
/* Puts saved back, but only while the kernel still has ours (someone else may have taken over). */
int pattern_restore(const char *saved, const char *ours);
