/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsers of configuration and command-line values: booleans, sizes, integers, times, percents.
 * Shared, pure: no I/O. */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "parse-util.h"

int parse_boolean(const char *s) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

int parse_uint64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_int_range(const char *s, int min, int max, int *ret) {
        long v;
        char *end;

        if (!isdigit((unsigned char) s[0]) && !(s[0] == '-' && isdigit((unsigned char) s[1])))
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno == ERANGE || *end != 0)
                return errno == ERANGE ? -ERANGE : -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

/* Multiplies the decimal number at the start of s by unit factors; shared by sizes and times. */
struct unit {
        const char *suffix;
        uint64_t factor;
};

static int parse_with_units(const char *s, const struct unit *units, size_t n_units, uint64_t *ret) {
        unsigned long long v;
        char *end;

        while (isspace((unsigned char) *s))
                s++;
        if (!isdigit((unsigned char) *s))
                return -EINVAL; /* also rejects negative numbers */
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        while (isspace((unsigned char) *end))
                end++;
        for (size_t i = 0; i < n_units; i++) {
                if (strcmp(end, units[i].suffix) != 0)
                        continue;
                if (units[i].factor != 0 && v > UINT64_MAX / units[i].factor)
                        return -ERANGE;
                *ret = v * units[i].factor;
                return 0;
        }
        return -EINVAL;
}

int parse_size(const char *s, uint64_t *ret) {
        static const struct unit units[] = {
                { "", 1 }, { "B", 1 },
                { "K", UINT64_C(1) << 10 }, { "M", UINT64_C(1) << 20 }, { "G", UINT64_C(1) << 30 },
                { "T", UINT64_C(1) << 40 }, { "P", UINT64_C(1) << 50 }, { "E", UINT64_C(1) << 60 },
        };

        if (strcmp(s, "infinity") == 0) {
                *ret = UINT64_MAX;
                return 0;
        }
        return parse_with_units(s, units, ELEMENTSOF(units), ret);
}

int parse_sec(const char *s, uint64_t *ret_usec) {
        static const struct unit units[] = {
                { "", USEC_PER_SEC }, { "s", USEC_PER_SEC }, { "sec", USEC_PER_SEC },
                { "ms", USEC_PER_MSEC }, { "msec", USEC_PER_MSEC },
                { "m", 60 * USEC_PER_SEC }, { "min", 60 * USEC_PER_SEC },
                { "h", 3600 * USEC_PER_SEC }, { "hour", 3600 * USEC_PER_SEC }, { "hours", 3600 * USEC_PER_SEC },
                { "d", 86400 * USEC_PER_SEC }, { "day", 86400 * USEC_PER_SEC }, { "days", 86400 * USEC_PER_SEC },
                { "w", 604800 * USEC_PER_SEC }, { "week", 604800 * USEC_PER_SEC },
                { "weeks", 604800 * USEC_PER_SEC },
        };

        if (strcmp(s, "infinity") == 0) {
                *ret_usec = USEC_INFINITY;
                return 0;
        }
        return parse_with_units(s, units, ELEMENTSOF(units), ret_usec);
}

int parse_percent(const char *s, unsigned *ret) {
        size_t l = strlen(s);
        char num[16];
        int v, r;

        if (l < 2 || l >= sizeof num || s[l - 1] != '%')
                return -EINVAL;
        memcpy(num, s, l - 1);
        num[l - 1] = 0;
        r = parse_int_range(num, 0, 100, &v);
        if (r < 0)
                return r;
        *ret = (unsigned) v;
        return 0;
}
