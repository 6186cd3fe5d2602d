/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: value parsers for configuration and command lines. Shared, pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* "yes"/"no"/"true"/"false"/"on"/"off"/"1"/"0" */
int parse_boolean(const char *s);
/* A decimal size with optional K, M, G, T, P, E (powers of 1024) suffix; "infinity" is
 * UINT64_MAX. Overflow and negative numbers are -ERANGE. */
int parse_size(const char *s, uint64_t *ret);
int parse_uint64(const char *s, uint64_t *ret);
int parse_int_range(const char *s, int min, int max, int *ret);
/* Seconds with optional unit: "30", "30s", "5min", "2h", "500ms", "3d", "2 weeks"; "infinity". */
int parse_sec(const char *s, uint64_t *ret_usec);
/* Percentage "15%" → 15 */
int parse_percent(const char *s, unsigned *ret);
