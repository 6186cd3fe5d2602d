/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test builds only (meson -Dworker-test-faults=true): whether COREDUMPD_TEST_FAULT, a list of
 * fault names separated by commas, names this one. Reads the environment, nothing else. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool test_fault_is(const char *name) {
        const char *f = getenv("COREDUMPD_TEST_FAULT");
        size_t n = strlen(name);

        for (; f && *f; f += strcspn(f, ","), f += *f == ',')
                if (strncmp(f, name, n) == 0 && (f[n] == ',' || f[n] == 0))
                        return true;
        return false;
}
