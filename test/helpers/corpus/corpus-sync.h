/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the C and C++ corpus programs: with CORPUS_SYNC=1 they print "ready" and crash only
 * when a byte arrives on stdin (end of file exits 1 instead), so a test can act on them first. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void corpus_sync(void) {
        const char *s = getenv("CORPUS_SYNC");
        char c;

        if (!s || strcmp(s, "1") != 0)
                return;
        fputs("ready\n", stdout);
        fflush(stdout);
        if (read(STDIN_FILENO, &c, 1) != 1)
                exit(1);
}
