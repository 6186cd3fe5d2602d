/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one parser of a stack trace's frame lines (trace-frame.h), for the signature (worker and
 * coredumpctl), coredumpctl's grouping and its re-symbolization alike. Shared, pure: no I/O. */
#include "trace-frame.h"

#define FRAME_HEX_MAX 16U         /* digits of a 64-bit address or offset */
#define FRAME_INDEX_DIGITS_MAX 9U /* of a frame's number */
#define OFFSET_SEP " + 0x"
#define OFFSET_SEP_LEN (sizeof OFFSET_SEP - 1)

bool trace_is_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool trace_parse_hex(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0 || len > FRAME_HEX_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (!trace_is_hex(s[i]))
                        return false;
                v = v << 4 | (uint64_t) (s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
        }
        *ret = v;
        return true;
}

/* Where the last OFFSET_SEP of line[from, len) starts, or SIZE_MAX. */
static size_t rfind_offset_sep(const char *line, size_t from, size_t len) {
        for (size_t i = len; i >= from + OFFSET_SEP_LEN; i--) {
                size_t at = i - OFFSET_SEP_LEN, k = 0;

                while (k < OFFSET_SEP_LEN && line[at + k] == OFFSET_SEP[k])
                        k++;
                if (k == OFFSET_SEP_LEN)
                        return at;
        }
        return SIZE_MAX;
}

/* From the "#" at p: the number, spaces, "0x" and the address, one space. Sets the index, the
 * address and where the name starts. */
static bool parse_head(const char *line, size_t len, size_t p, TraceFrame *f) {
        size_t digits = ++p, hex;

        while (p < len && p - digits < FRAME_INDEX_DIGITS_MAX && line[p] >= '0' && line[p] <= '9')
                p++;
        if (p == digits || p >= len || line[p] != ' ')
                return false;
        f->index = 0;
        for (size_t i = digits; i < p; i++)
                f->index = f->index * 10 + (unsigned) (line[i] - '0');
        while (p < len && line[p] == ' ')
                p++;
        if (len - p < 3 || line[p] != '0' || line[p + 1] != 'x')
                return false;
        hex = p += 2;
        while (p < len && trace_is_hex(line[p]))
                p++;
        if (!trace_parse_hex(line + hex, p - hex, &f->pc) || p >= len || line[p] != ' ')
                return false;
        f->name_off = p + 1;
        return true;
}

bool trace_frame_parse(const char *line, size_t len, TraceFrame *ret) {
        TraceFrame f = {};
        size_t p = 0, space, plus, hex;

        while (p < len && (line[p] == ' ' || line[p] == '\t'))
                p++;
        if (p >= len || line[p] != '#' || !parse_head(line, len, p, &f) || line[len - 1] != ')')
                return false;
        space = f.name_off;
        while (space < len && line[space] != ' ')
                space++;
        /* "NAME (" then at least one byte of module before the separator */
        if (space == f.name_off || len - space < 2 || line[space + 1] != '(')
                return false;
        plus = rfind_offset_sep(line, space + 2, len - 1);
        if (plus == SIZE_MAX || plus == space + 2)
                return false;
        hex = plus + OFFSET_SEP_LEN;
        if (!trace_parse_hex(line + hex, len - 1 - hex, &f.offset))
                return false;
        f.name_len = space - f.name_off;
        f.module_off = space + 2;
        f.module_len = plus - f.module_off;
        *ret = f;
        return true;
}
