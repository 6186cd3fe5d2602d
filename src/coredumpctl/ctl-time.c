/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --since/--until parsing: dates, "today" and friends, relative spans, all in local time. Pure
 * but for reading the clock and libc's time zone. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl-time.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

#define TIMESTAMP_TEXT_MAX 64U
#define SECONDS_PER_DAY 86400

static int day_start(uint64_t now, int day_offset, uint64_t *ret) {
        time_t t = (time_t) (now / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm))
                return -EINVAL;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday += day_offset;
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t == (time_t) -1)
                return -EINVAL;
        *ret = (uint64_t) t * USEC_PER_SEC;
        return 0;
}

static int relative(const char *span, uint64_t now, int sign, uint64_t *ret) {
        uint64_t d;
        int r = parse_sec(span, &d);

        if (r < 0)
                return r;
        if (sign < 0)
                *ret = d > now ? 0 : now - d;
        else
                *ret = d > UINT64_MAX - now ? UINT64_MAX - 1 : now + d;
        return 0;
}

/* "YYYY-MM-DD[ HH:MM[:SS]]" or "HH:MM[:SS]" */
static int absolute(const char *s, uint64_t now, uint64_t *ret) {
        time_t t = (time_t) (now / USEC_PER_SEC);
        struct tm tm, today;
        const char *end;

        if (!localtime_r(&t, &today))
                return -EINVAL;
        today.tm_hour = today.tm_min = today.tm_sec = 0;
        tm = today;
        end = strptime(s, "%Y-%m-%d", &tm);
        if (!end)
                tm = today; /* a failed strptime() may have filled fields */
        if (end) {
                if (*end == ' ' || *end == 'T')
                        end++;
                else if (*end == 0)
                        goto done;
                else
                        return -EINVAL;
        } else
                end = s;
        s = end;
        {
                struct tm date = tm;
                end = strptime(s, "%H:%M:%S", &tm);
                if (!end) {
                        tm = date;
                        end = strptime(s, "%H:%M", &tm);
                }
        }
        if (!end || *end)
                return -EINVAL;
done:
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t == (time_t) -1)
                return -EINVAL;
        *ret = (uint64_t) t * USEC_PER_SEC;
        return 0;
}

int parse_timestamp_at(const char *s, uint64_t now, uint64_t *ret) {
        char buf[TIMESTAMP_TEXT_MAX];
        size_t l = strlen(s);
        uint64_t secs;

        if (strcmp(s, "now") == 0)
                return (*ret = now), 0;
        if (strcmp(s, "today") == 0)
                return day_start(now, 0, ret);
        if (strcmp(s, "yesterday") == 0)
                return day_start(now, -1, ret);
        if (strcmp(s, "tomorrow") == 0)
                return day_start(now, 1, ret);
        if (s[0] == '@') {
                if (parse_uint64(s + 1, &secs) < 0 || secs > UINT64_MAX / USEC_PER_SEC)
                        return -EINVAL;
                return (*ret = secs * USEC_PER_SEC), 0;
        }
        if (s[0] == '-' || s[0] == '+')
                return relative(s + 1, now, s[0] == '-' ? -1 : 1, ret);
        if (l > 4 && l < sizeof buf && strcmp(s + l - 4, " ago") == 0) {
                memcpy(buf, s, l - 4);
                buf[l - 4] = 0;
                return relative(buf, now, -1, ret);
        }
        return absolute(s, now, ret);
}

int parse_timestamp(const char *s, uint64_t *ret_usec) {
        return parse_timestamp_at(s, now_usec(CLOCK_REALTIME), ret_usec);
}
