/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: a stack trace's frame line as the worker and systemd-coredump write it,
 * "#N  0xPC NAME (MODULE + 0xOFFSET)". Shared, pure: parses what it is given, touches nothing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct TraceFrame {
        unsigned index;
        uint64_t pc;
        size_t name_off, name_len;     /* the function name ("n/a" if none) within the line */
        size_t module_off, module_len; /* the module's file name ("n/a" if none) within the line */
        uint64_t offset;               /* the frame's address minus the module's start */
} TraceFrame;

/* Pure: line[0, len) (no newline) as a frame, blanks before its "#" allowed. Neither writer
 * demangles, so a name has no space: it ends at the first one, and " (" follows; a file name may
 * hold anything, " (" included: the module ends at the last " + 0x". */
bool trace_frame_parse(const char *line, size_t len, TraceFrame *ret);
/* Pure: a lower-case hex digit. */
bool trace_is_hex(char c);
/* Pure: len lower-case hex digits (1 to 16) as a number. */
bool trace_parse_hex(const char *s, size_t len, uint64_t *ret);
