/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Journal export format reader: the next field of an entry, every length checked (the records'
 * bytes may be hostile). Shared (coredumpctl), pure: no I/O. */
#include <endian.h>
#include <string.h>

#include "export-format.h"

int export_next_field(const uint8_t *buf, size_t len, size_t *pos, RecordField *ret) {
        size_t p = *pos, avail, nl;
        const uint8_t *eol, *eq;
        uint64_t le, vlen;

        if (p >= len)
                return p == len ? 0 : -EBADMSG;
        if (buf[p] == '\n') { /* end of entry */
                *pos = p + 1;
                return 0;
        }
        avail = len - p;
        eol = memchr(buf + p, '\n', avail);
        if (!eol)
                return -EBADMSG;
        eq = memchr(buf + p, '=', (size_t) (eol - (buf + p)));
        if (eq) { /* text form: the value runs to the newline */
                nl = (size_t) (eq - (buf + p));
                if (!record_field_name_valid((const char *) buf + p, nl))
                        return -EBADMSG;
                *ret = (RecordField) { (const char *) buf + p, nl, eq + 1, (size_t) (eol - eq - 1) };
                *pos = (size_t) (eol - buf) + 1;
                return 1;
        }
        nl = (size_t) (eol - (buf + p));
        if (!record_field_name_valid((const char *) buf + p, nl) || avail - nl - 1 < 8)
                return -EBADMSG;
        memcpy(&le, eol + 1, 8);
        vlen = le64toh(le);
        if (vlen >= avail - nl - 9 || eol[9 + vlen] != '\n')
                return -EBADMSG;
        *ret = (RecordField) { (const char *) buf + p, nl, eol + 9, (size_t) vlen };
        *pos = p + nl + 9 + (size_t) vlen + 1;
        return 1;
}
