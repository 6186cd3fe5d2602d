/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: coredumpctl's text formatting (times, sizes, signals, ids, colours) for every verb.
 * No I/O beyond the libc lookups it needs (time zone, user and group names). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Output formatting shared by the verbs, matching systemd's tools byte for byte where scripts
 * may parse it. */

#define FORMAT_TIMESTAMP_MAX 64U
#define FORMAT_BYTES_MAX 16U
#define SIGNAL_NAME_MAX 24U

/* "Thu 2026-12-03 12:37:57 UTC" in local time. */
char *format_timestamp(char *buf, size_t size, uint64_t usec);
/* "3s ago", "5min 2s ago", "1 day 2h ago", "2 weeks 3 days ago" relative to now. */
char *format_timestamp_relative(char *buf, size_t size, uint64_t usec, uint64_t now);
/* 1024-based with one decimal: "512B", "1.5K", "12.0M". */
char *format_bytes(char *buf, size_t size, uint64_t bytes);
/* "SEGV", "RTMIN+3", or the number. */
char *signal_abbrev(char *buf, size_t size, int sig);
/* The user (group) name of a numeric id, or the number itself. */
char *uid_name(char *buf, size_t size, uid_t uid);
char *gid_name(char *buf, size_t size, gid_t gid);

/* Colours on a terminal, none in a pipe, SYSTEMD_COLORS / NO_COLOR respected. */
void colors_init(int fd);
const char *ansi_highlight(void);
const char *ansi_grey(void);
const char *ansi_yellow(void);
const char *ansi_red(void);
const char *ansi_underline(void);
const char *ansi_normal(void);
