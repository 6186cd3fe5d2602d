/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping of entry text for terminals: no control sequence a user logged (ESC [ 2J, OSC 52, ...)
 * reaches the terminal of whoever reads the crash. Pure: memory and the FILE given only. */
#include <stdlib.h>
#include <string.h>

#include "ctl-escape.h"
#include "utf8-util.h"

#define ESCAPED_BYTE_LEN 4U /* \xNN */

/* How many bytes at p are kept as they are (0: escape the byte at p). */
static size_t kept_len(const unsigned char *p, EscapeFlags flags) {
        size_t n;

        if ((*p == '\n' || *p == '\t') && (flags & ESCAPE_KEEP_LINES))
                return 1;
        if (*p < 0x20 || *p == 0x7f)
                return 0;
        n = utf8_seq_len(p);
        /* U+0080..U+009F: the C1 controls, encoded as 0xc2 0x80..0x9f */
        if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)
                return 0;
        /* format characters (a right-to-left override reorders root's list columns; zero-width
         * ones hide text): escaped like controls, byte by byte */
        if (n >= 2 && unichar_is_format(utf8_decode(p, n)))
                return 0;
        return n;
}

bool escape_needed(const char *s, EscapeFlags flags) {
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = kept_len(p, flags);
                if (n == 0)
                        return true;
                p += n;
        }
        return false;
}

/* Writes the escaped text to out (which has room for it), or only counts it if out is NULL. */
static size_t escape_into(const char *s, EscapeFlags flags, char *out) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = kept_len(p, flags);

                if (n > 0) {
                        if (out)
                                memcpy(out + o, p, n);
                        o += n;
                        p += n;
                        continue;
                }
                if (out) {
                        out[o] = '\\';
                        out[o + 1] = 'x';
                        out[o + 2] = hex[*p >> 4];
                        out[o + 3] = hex[*p & 15];
                }
                o += ESCAPED_BYTE_LEN;
                p++;
        }
        return o;
}

char *escape_text(const char *s, EscapeFlags flags) {
        size_t len = escape_into(s, flags, NULL);
        char *out = malloc(len + 1);

        if (!out)
                return NULL;
        escape_into(s, flags, out);
        out[len] = 0;
        return out;
}

void escape_fputs(FILE *f, const char *s, EscapeFlags flags) {
        char *e;

        if (!escape_needed(s, flags)) {
                fputs(s, f);
                return;
        }
        e = escape_text(s, flags);
        if (!e) { /* out of memory: drop the text rather than print it raw */
                fputs("[unprintable]", f);
                return;
        }
        fputs(e, f);
        free(e);
}
