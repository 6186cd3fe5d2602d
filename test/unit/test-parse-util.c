/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes, times, booleans, ranged integers and percentages as the configuration writes them.
 * Pure: no I/O. */
#include "macro.h"
#include "parse-util.h"
#include "tests.h"

int main(void) {
        uint64_t u;
        unsigned p;
        int i;

        CHECK_EQ(parse_size("0", &u), 0);
        CHECK_EQ(u, 0);
        CHECK_EQ(parse_size("767M", &u), 0);
        CHECK_EQ(u, UINT64_C(767) << 20);
        CHECK_EQ(parse_size("32G", &u), 0);
        CHECK_EQ(u, UINT64_C(32) << 30);
        CHECK_EQ(parse_size("4 K", &u), 0);
        CHECK_EQ(u, 4096);
        CHECK(parse_size("infinity", &u) == 0 && u == UINT64_MAX);
        CHECK_EQ(parse_size("16E", &u), -ERANGE);
        CHECK_EQ(parse_size("99999999999999999999", &u), -ERANGE);
        CHECK_EQ(parse_size("-1", &u), -EINVAL);
        CHECK_EQ(parse_size("1X", &u), -EINVAL);
        CHECK_EQ(parse_size("", &u), -EINVAL);
        CHECK_EQ(parse_size("M", &u), -EINVAL);

        CHECK(parse_sec("30", &u) == 0 && u == 30 * USEC_PER_SEC);
        CHECK(parse_sec("5min", &u) == 0 && u == 300 * USEC_PER_SEC);
        CHECK(parse_sec("500ms", &u) == 0 && u == 500 * USEC_PER_MSEC);
        CHECK_EQ(parse_sec("1year", &u), -EINVAL);
        CHECK_EQ(parse_sec("99999999999999999h", &u), -ERANGE);

        CHECK_EQ(parse_boolean("yes"), 1);
        CHECK_EQ(parse_boolean("Off"), 0);
        CHECK_EQ(parse_boolean("maybe"), -EINVAL);

        CHECK(parse_int_range("-3", -5, 5, &i) == 0 && i == -3);
        CHECK_EQ(parse_int_range("6", -5, 5, &i), -ERANGE);
        CHECK_EQ(parse_int_range("99999999999999999999", 0, 5, &i), -ERANGE);
        CHECK_EQ(parse_int_range("3x", 0, 5, &i), -EINVAL);

        CHECK(parse_percent("15%", &p) == 0 && p == 15);
        CHECK_EQ(parse_percent("101%", &p), -ERANGE);
        CHECK_EQ(parse_percent("15", &p), -EINVAL);
        TESTS_DONE();
}
