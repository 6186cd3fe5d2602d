/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* UTF-8 sequences checked and decoded, and the table of Unicode format characters (category Cf of
 * Unicode 15.1, plus Zl and Zp) that text a user wrote may not show as it is. Pure: no I/O. */
#include <assert.h>

#include "macro.h"
#include "utf8-util.h"

typedef struct Range {
        uint32_t first, last;
} Range;

/* In order; python3's unicodedata lists the same with category(c) in ("Cf", "Zl", "Zp"). */
static const Range format_ranges[] = {
        { 0x00ad, 0x00ad },   /* soft hyphen */
        { 0x0600, 0x0605 },   /* Arabic number signs */
        { 0x061c, 0x061c },   /* Arabic letter mark */
        { 0x06dd, 0x06dd },
        { 0x070f, 0x070f },
        { 0x0890, 0x0891 },
        { 0x08e2, 0x08e2 },
        { 0x180e, 0x180e },   /* Mongolian vowel separator */
        { 0x200b, 0x200f },   /* zero width space, joiners, left-to-right and right-to-left marks */
        { 0x2028, 0x202e },   /* line and paragraph separators, bidirectional embeddings and overrides */
        { 0x2060, 0x2064 },   /* word joiner, invisible operators */
        { 0x2066, 0x206f },   /* bidirectional isolates, deprecated format characters */
        { 0xfeff, 0xfeff },   /* zero width no-break space (byte order mark) */
        { 0xfff9, 0xfffb },   /* interlinear annotation */
        { 0x110bd, 0x110bd },
        { 0x110cd, 0x110cd },
        { 0x13430, 0x1343f }, /* Egyptian hieroglyph format controls */
        { 0x1bca0, 0x1bca3 }, /* shorthand format controls */
        { 0x1d173, 0x1d17a }, /* musical symbol beams and ties */
        { 0xe0001, 0xe0001 }, /* language tag */
        { 0xe0020, 0xe007f }, /* tag characters */
};

bool unichar_is_format(uint32_t cp) {
        size_t lo = 0, hi = ELEMENTSOF(format_ranges);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (cp < format_ranges[mid].first)
                        hi = mid;
                else if (cp > format_ranges[mid].last)
                        lo = mid + 1;
                else
                        return true;
        }
        return false;
}

size_t utf8_seq_len(const unsigned char *p) {
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;

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

uint32_t utf8_decode(const unsigned char *p, size_t n) {
        uint32_t cp;

        assert(n >= 2 && n <= 4);
        cp = p[0] & (0xffU >> (n + 1));
        for (size_t i = 1; i < n; i++)
                cp = cp << 6 | (p[i] & 0x3fU);
        return cp;
}
