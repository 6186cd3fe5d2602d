/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Output formatting as systemd prints it: timestamps, sizes, signal, user and group names,
 * colours. No I/O beyond libc's time zone and NSS lookups and isatty() on the output. */
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl-format.h"
#include "macro.h"
#include "parse-util.h"

#define USEC_PER_MINUTE (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)
#define USEC_PER_WEEK (7 * USEC_PER_DAY)
#define USEC_PER_MONTH (2629800 * USEC_PER_SEC)
#define USEC_PER_YEAR (31557600 * USEC_PER_SEC)

char *format_timestamp(char *buf, size_t size, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                snprintf(buf, size, "%" PRIu64, usec);
        return buf;
}

static const char *plural(uint64_t n, const char *one, const char *many) {
        return n == 1 ? one : many;
}

char *format_timestamp_relative(char *buf, size_t size, uint64_t usec, uint64_t now) {
        const char *s = now >= usec ? "ago" : "left";
        uint64_t d = now >= usec ? now - usec : usec - now;

        if (d >= USEC_PER_YEAR) {
                uint64_t y = d / USEC_PER_YEAR, m = (d % USEC_PER_YEAR) / USEC_PER_MONTH;
                snprintf(buf, size, "%" PRIu64 " %s %" PRIu64 " %s %s", y, plural(y, "year", "years"), m,
                         plural(m, "month", "months"), s);
        } else if (d >= USEC_PER_MONTH) {
                uint64_t m = d / USEC_PER_MONTH, dd = (d % USEC_PER_MONTH) / USEC_PER_DAY;
                snprintf(buf, size, "%" PRIu64 " %s %" PRIu64 " %s %s", m, plural(m, "month", "months"), dd,
                         plural(dd, "day", "days"), s);
        } else if (d >= USEC_PER_WEEK) {
                uint64_t w = d / USEC_PER_WEEK, dd = (d % USEC_PER_WEEK) / USEC_PER_DAY;
                snprintf(buf, size, "%" PRIu64 " %s %" PRIu64 " %s %s", w, plural(w, "week", "weeks"), dd,
                         plural(dd, "day", "days"), s);
        } else if (d >= 2 * USEC_PER_DAY)
                snprintf(buf, size, "%" PRIu64 " days %s", d / USEC_PER_DAY, s);
        else if (d >= 25 * USEC_PER_HOUR)
                snprintf(buf, size, "1 day %" PRIu64 "h %s", (d - USEC_PER_DAY) / USEC_PER_HOUR, s);
        else if (d >= 6 * USEC_PER_HOUR)
                snprintf(buf, size, "%" PRIu64 "h %s", d / USEC_PER_HOUR, s);
        else if (d >= USEC_PER_HOUR)
                snprintf(buf, size, "%" PRIu64 "h %" PRIu64 "min %s", d / USEC_PER_HOUR,
                         (d % USEC_PER_HOUR) / USEC_PER_MINUTE, s);
        else if (d >= 5 * USEC_PER_MINUTE)
                snprintf(buf, size, "%" PRIu64 "min %s", d / USEC_PER_MINUTE, s);
        else if (d >= USEC_PER_MINUTE)
                snprintf(buf, size, "%" PRIu64 "min %" PRIu64 "s %s", d / USEC_PER_MINUTE,
                         (d % USEC_PER_MINUTE) / USEC_PER_SEC, s);
        else if (d >= USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 "s %s", d / USEC_PER_SEC, s);
        else if (d >= USEC_PER_MSEC)
                snprintf(buf, size, "%" PRIu64 "ms %s", d / USEC_PER_MSEC, s);
        else if (d > 0)
                snprintf(buf, size, "%" PRIu64 "us %s", d, s);
        else
                snprintf(buf, size, "now");
        return buf;
}

char *format_bytes(char *buf, size_t size, uint64_t bytes) {
        static const char suffix[] = "KMGTPE";
        unsigned i = 0;
        uint64_t unit = 1024;

        if (bytes < 1024) {
                snprintf(buf, size, "%" PRIu64 "B", bytes);
                return buf;
        }
        /* the largest unit not above the value; the decimal is truncated the way systemd does it,
         * from the value in the next smaller unit */
        while (i + 1 < strlen(suffix) && bytes / 1024 >= unit) {
                unit *= 1024;
                i++;
        }
        snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", bytes / unit, (bytes / (unit / 1024) * 10 / 1024) % 10,
                 suffix[i]);
        return buf;
}

char *signal_abbrev(char *buf, size_t size, int sig) {
        const char *n = sig > 0 ? sigabbrev_np(sig) : NULL;

        if (n)
                snprintf(buf, size, "%s", n);
        else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
                snprintf(buf, size, "RTMIN+%d", sig - SIGRTMIN);
        else
                snprintf(buf, size, "%d", sig);
        return buf;
}

char *uid_name(char *buf, size_t size, uid_t uid) {
        struct passwd *pw = getpwuid(uid);

        snprintf(buf, size, pw ? "%s" : "%.0s%u", pw ? pw->pw_name : "", (unsigned) uid);
        return buf;
}

char *gid_name(char *buf, size_t size, gid_t gid) {
        struct group *gr = getgrgid(gid);

        snprintf(buf, size, gr ? "%s" : "%.0s%u", gr ? gr->gr_name : "", (unsigned) gid);
        return buf;
}

static bool use_colors;

void colors_init(int fd) {
        const char *e = getenv("SYSTEMD_COLORS"), *term = getenv("TERM");

        if (e && parse_boolean(e) >= 0)
                use_colors = parse_boolean(e) > 0;
        else
                use_colors = !getenv("NO_COLOR") && isatty(fd) && !(term && strcmp(term, "dumb") == 0);
}

const char *ansi_highlight(void) { return use_colors ? "\x1b[0;1;39m" : ""; }
const char *ansi_grey(void) { return use_colors ? "\x1b[0;38;5;245m" : ""; }
const char *ansi_yellow(void) { return use_colors ? "\x1b[0;1;33m" : ""; }
const char *ansi_red(void) { return use_colors ? "\x1b[0;1;31m" : ""; }
const char *ansi_underline(void) { return use_colors ? "\x1b[0;4m" : ""; }
const char *ansi_normal(void) { return use_colors ? "\x1b[0m" : ""; }
