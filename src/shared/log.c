/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging to stderr (journald priority prefixes on a journal stream, bare lines for the CLI) and
 * the rate limiter. Shared by every program: writes only to stderr; reads two environment vars. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "log.h"
#include "time-util.h"
#include "utf8-util.h"

/* One log line, including prefix; longer messages are cut, never split. */
#define LOG_LINE_MAX 2048

static const char *log_ident = "coredump-socket";
static int log_max_level = LOG_INFO;
static bool log_to_journal_stream;
static bool log_plain;

static bool stderr_is_journal_stream(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return st.st_dev == dev && st.st_ino == ino;
}

void log_set_max_level(int level) {
        log_max_level = level;
}

void log_setup(const char *ident) {
        const char *lvl = getenv("COREDUMP_SOCKET_LOG_LEVEL");

        log_ident = ident;
        log_to_journal_stream = stderr_is_journal_stream();
        if (lvl && strcmp(lvl, "debug") == 0)
                log_max_level = LOG_DEBUG;
}

void log_setup_plain(void) {
        log_setup(program_invocation_short_name);
        log_to_journal_stream = false;
        log_plain = true;
}

/* A line shows what it says and nothing else: names in it (a crashed process's comm, paths)
 * are chosen by whoever crashed, so control characters (C0, DEL, and C1 as UTF-8), format
 * characters (a right-to-left override, zero-width ones) and bytes that are not UTF-8 become
 * '?', one per byte, and no escape
 * sequence reaches a terminal, splits a journal line or reorders it. */
static void log_sanitize(char *msg) {
        for (unsigned char *p = (unsigned char *) msg; *p;) {
                size_t n = utf8_seq_len(p);

                if (*p < ' ' || *p == 0x7f || n == 0) /* n == 0: not UTF-8 (a lone 0x9b is CSI to some terminals) */
                        *p = '?';
                else if (n >= 2 && ((p[0] == 0xc2 && p[1] <= 0x9f) || unichar_is_format(utf8_decode(p, n))))
                        memset(p, '?', n);
                p += MAX(n, (size_t) 1);
        }
}

int log_internal(int level, int error, const char *fmt, ...) {
        char msg[LOG_LINE_MAX];
        int saved = errno;
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > log_max_level)
                return -error;

        errno = error;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        log_sanitize(msg);

        if (log_to_journal_stream)
                (void) fprintf(stderr, "<%d>%s\n", level, msg);
        else if (log_plain)
                (void) fprintf(stderr, "%s\n", msg);
        else
                (void) fprintf(stderr, "%s[%d]: %s\n", log_ident, (int) getpid(), msg);
        errno = saved;
        return -error;
}

bool ratelimit_below(RateLimit *rl) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (rl->begin == 0 || now - rl->begin > rl->interval_usec) {
                if (rl->suppressed > 0)
                        log_warning("%u similar messages suppressed", rl->suppressed);
                rl->begin = now;
                rl->num = 0;
                rl->suppressed = 0;
        }
        if (rl->num < rl->burst) {
                rl->num++;
                return true;
        }
        rl->suppressed++;
        return false;
}
