/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper: a committed zstd core fixture from test/data/, decompressed into memory. Reads that
 * file only. */
#pragma once

/* The committed real cores (zstd files in test/data/), decompressed for a test. */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <zstd.h>

#define FIXTURE_MAX (8U << 20)

/* Returns the decompressed size, 0 if the file is missing or not a zstd frame that fits. */
static inline size_t load_fixture(const char *path, uint8_t *out, size_t size) {
        static uint8_t comp[FIXTURE_MAX];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;
        size_t d;

        if (fd < 0) {
                fprintf(stderr, "cannot open %s\n", path);
                return 0;
        }
        n = read(fd, comp, sizeof comp);
        close(fd);
        if (n <= 0)
                return 0;
        d = ZSTD_decompress(out, size, comp, (size_t) n);
        return ZSTD_isError(d) ? 0 : d;
}
