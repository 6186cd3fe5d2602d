/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping of entry text for terminals: no control sequence a user logged (ESC [ 2J, OSC 52, ...)
 * reaches the terminal of whoever reads the crash. Pure: memory and the FILE given only. */
#include <stdlib.h>
#include <string.h>

#include "ctl-escape.h"

#define ESCAPED_BYTE_LEN 4U /* \xNN */

/* The length of the valid UTF-8 sequence at p (1..4), or 0 if p does not start one. Rejects
 * overlong forms, surrogates and code points past U+10FFFF. */
static size_t utf8_seq_len(const unsigned char *p) {
        size_t n;
        unsigned char lo = 0x80, hi = 0xbf;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                n = 3;
                lo = p[0] == 0xe0 ? 0xa0 : 0x80;
                hi = p[0] == 0xed ? 0x9f : 0xbf;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                n = 4;
                lo = p[0] == 0xf0 ? 0x90 : 0x80;
                hi = p[0] == 0xf4 ? 0x8f : 0xbf;
        } else
                return 0;
        if (p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (p[i] < 0x80 || p[i] > 0xbf)
                        return 0;
        return n;
}

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
