/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: a stored or journal-held core written uncompressed to a descriptor (dump, debug).
 * Touches only the descriptors passed in, and stderr for progress. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Uncompressed cores stream through this much at a time. */
#define DECOMPRESS_CHUNK (256U << 10)
/* Below this compressed size no progress line is worth drawing. */
#define PROGRESS_MIN_BYTES (16U << 20)
#define PROGRESS_INTERVAL_USEC (200 * USEC_PER_MSEC)

/* Writes the core stored at in_fd (".zst", ".lz4" or plain, by path's suffix) uncompressed to
 * out_fd. Runs of zeros become holes when out_fd is a regular file. With progress, a line on
 * stderr (a terminal) shows how far it got. */
int decompress_core(const char *path, int in_fd, int out_fd, bool progress);
/* Whether this build can read the core stored at path: not ".lz4" in a build without lz4. */
bool decompress_supported(const char *path);
/* Writes a buffer (a core kept in the journal) the same way. */
int write_core_buffer(const void *buf, size_t len, int out_fd);
