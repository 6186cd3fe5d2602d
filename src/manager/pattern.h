/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

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
/* Registers the socket, saving the previous pattern into saved. */
int pattern_register(const char *socket_path, char *saved, size_t saved_size, char *ours, size_t ours_size);
/* Puts saved back, but only while the kernel still has ours (someone else may have taken over). */
int pattern_restore(const char *saved, const char *ours);
