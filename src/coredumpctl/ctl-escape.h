/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: text from coredump entries (anyone who can log may have written it) made harmless for
 * a terminal before coredumpctl prints it. Pure: memory and the FILE given only. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

typedef enum EscapeFlags {
        ESCAPE_DEFAULT = 0,
        ESCAPE_KEEP_LINES = 1 << 0, /* newline and tab stay (stack traces, -F of multi-line fields) */
} EscapeFlags;

/* Whether byte sequence s (NUL-terminated) holds nothing that escape_text() would change. */
bool escape_needed(const char *s, EscapeFlags flags);
/* A new string where C0 controls (ESC among them), DEL, C1 controls (U+0080..U+009F, which
 * terminals take as CSI, OSC, ...), format characters (unichar_is_format(): bidirectional
 * overrides, zero-width characters) and bytes that are not valid UTF-8 are written as \xNN, one
 * per byte; everything else, backslashes included, as it was. NULL on ENOMEM. */
char *escape_text(const char *s, EscapeFlags flags);
/* Prints s escaped (as escape_text()) to f. */
void escape_fputs(FILE *f, const char *s, EscapeFlags flags);
