/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the timestamps --since and --until accept. No I/O beyond the clock and time zone. */
#pragma once

#include <stdint.h>

/* --since/--until: "now", "today", "yesterday", "tomorrow", "@<seconds since the epoch>",
 * "YYYY-MM-DD[ HH:MM[:SS]]", "HH:MM[:SS]" (today), "-<span>", "+<span>", "<span> ago" (spans
 * as in "5min", "2h", "3d", "1 week"), in local time. */
int parse_timestamp(const char *s, uint64_t *ret_usec);
/* Pure core of parse_timestamp, relative to now (for tests). */
int parse_timestamp_at(const char *s, uint64_t now_usec, uint64_t *ret_usec);
