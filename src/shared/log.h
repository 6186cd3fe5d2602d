/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: logging for every program, and the rate limiter for repeated messages. Shared:
 * writes only to stderr. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "macro.h"

/* Logging to stderr. When stderr is a journal stream (JOURNAL_STREAM matches it), every line
 * carries a "<N>" priority prefix that journald understands; otherwise lines read
 * "ident[pid]: message". Callers log once, where the error is handled. */
void log_setup(const char *ident);
/* For command line tools: bare messages on stderr, as users expect from a CLI. */
void log_setup_plain(void);
/* Messages above level are dropped (LOG_INFO unless COREDUMP_SOCKET_LOG_LEVEL=debug). */
void log_set_max_level(int level);
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...) log_internal((level), (error), __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
/* These return the (negative) error so "return log_error_errno(r, ...)" works; %m prints it. */
#define log_debug_errno(e, ...) log_internal(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_internal(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_ERR, (e), __VA_ARGS__)

/* A token bucket for messages an attacker or a crash storm could repeat. */
typedef struct RateLimit {
        uint64_t interval_usec;
        unsigned burst;
        uint64_t begin;
        unsigned num;
        unsigned suppressed;
} RateLimit;

#define RATELIMIT_INIT(interval, b) { .interval_usec = (interval), .burst = (b) }

/* True if the message may be logged now; counts suppressed ones. */
bool ratelimit_below(RateLimit *rl);
