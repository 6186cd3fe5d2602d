/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Crash records: journal fields in memory, their serialised form, export output. Shared, pure
 * but for record_write_export(), which writes only to the fd it is given. */
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fd-util.h"
#include "record.h"

#define RECORD_GROW_MIN 4096U
/* Export writes are buffered this much. */
#define EXPORT_BUF 65536U

void record_free(Record *r) {
        free(r->buf);
        *r = (Record) {};
}

bool record_field_name_valid(const char *name, size_t len) {
        if (len == 0 || len > FIELD_NAME_MAX || (name[0] >= '0' && name[0] <= '9'))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
                        return false;
        return true;
}

static int reserve(Record *r, size_t more) {
        size_t need = r->len + more, cap;
        uint8_t *n;

        if (need <= r->cap)
                return 0;
        cap = MAX(need, MAX(r->cap * 2, (size_t) RECORD_GROW_MIN));
        n = realloc(r->buf, cap);
        if (!n)
                return -ENOMEM;
        r->buf = n;
        r->cap = cap;
        return 0;
}

int record_add(Record *r, const char *name, const void *value, size_t len, size_t max_len) {
        size_t nl = strlen(name), overhead = nl + 1 + 8 + 1;
        uint64_t le;
        int ret;

        if (!record_field_name_valid(name, nl))
                return -EINVAL;
        if (max_len > 0 && len > max_len) {
                len = max_len;
                r->overflow = true;
        }
        if (r->len + overhead + len > RECORD_MAX) {
                r->overflow = true;
                return -E2BIG;
        }
        ret = reserve(r, overhead + len);
        if (ret < 0)
                return ret;
        memcpy(r->buf + r->len, name, nl);
        r->buf[r->len + nl] = '\n';
        le = htole64((uint64_t) len);
        memcpy(r->buf + r->len + nl + 1, &le, 8);
        if (len > 0)
                memcpy(r->buf + r->len + nl + 9, value, len);
        r->buf[r->len + nl + 9 + len] = '\n';
        r->len += overhead + len;
        return 0;
}

int record_add_str(Record *r, const char *name, const char *value) {
        return record_add(r, name, value, strlen(value), 0);
}

int record_addf(Record *r, const char *name, const char *fmt, ...) {
        char buf[512];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        return record_add(r, name, buf, MIN((size_t) n, sizeof buf - 1), 0);
}

int record_next(const uint8_t *buf, size_t len, size_t *pos, RecordField *ret) {
        size_t p = *pos, nl;
        const uint8_t *eol;
        uint64_t le, vlen;

        if (p == len)
                return 0;
        if (p > len)
                return -EBADMSG;
        eol = memchr(buf + p, '\n', MIN(len - p, (size_t) FIELD_NAME_MAX + 1));
        if (!eol)
                return -EBADMSG;
        nl = (size_t) (eol - (buf + p));
        if (!record_field_name_valid((const char *) buf + p, nl) || len - p - nl - 1 < 8)
                return -EBADMSG;
        memcpy(&le, buf + p + nl + 1, 8);
        vlen = le64toh(le);
        /* the value and its closing newline must fit in what is left */
        if (vlen >= len - p - nl - 9 || buf[p + nl + 9 + vlen] != '\n')
                return -EBADMSG;
        *ret = (RecordField) {
                .name = (const char *) buf + p,
                .name_len = nl,
                .value = buf + p + nl + 9,
                .value_len = (size_t) vlen,
        };
        *pos = p + nl + 9 + (size_t) vlen + 1;
        return 1;
}

const RecordField *record_find(const uint8_t *buf, size_t len, const char *name, RecordField *ret) {
        size_t pos = 0, nl = strlen(name);

        while (record_next(buf, len, &pos, ret) > 0)
                if (ret->name_len == nl && memcmp(ret->name, name, nl) == 0)
                        return ret;
        return NULL;
}

typedef struct Out {
        int fd;
        uint8_t buf[EXPORT_BUF];
        size_t len;
        int error;
} Out;

static void out_put(Out *o, const void *p, size_t n) {
        while (n > 0 && o->error == 0) {
                size_t k = MIN(n, sizeof o->buf - o->len);
                memcpy(o->buf + o->len, p, k);
                o->len += k;
                p = (const uint8_t *) p + k;
                n -= k;
                if (o->len == sizeof o->buf) {
                        o->error = loop_write(o->fd, o->buf, o->len);
                        o->len = 0;
                }
        }
}

int record_write_export(const uint8_t *buf, size_t len, int fd) {
        static Out o; /* large; single-threaded callers only */
        RecordField f;
        size_t pos = 0;
        int r;

        o.fd = fd; /* not the buffer: clearing 64 KiB for each record costs a crash more than writing it */
        o.len = 0;
        o.error = 0;
        while ((r = record_next(buf, len, &pos, &f)) > 0) {
                if (f.name_len >= 5 && memcmp(f.name, "_CDS_", 5) == 0)
                        continue;
                out_put(&o, f.name, f.name_len);
                if (memchr(f.value, '\n', f.value_len)) {
                        uint64_t le = htole64((uint64_t) f.value_len);
                        out_put(&o, "\n", 1);
                        out_put(&o, &le, 8);
                } else
                        out_put(&o, "=", 1);
                out_put(&o, f.value, f.value_len);
                out_put(&o, "\n", 1);
        }
        out_put(&o, "\n", 1);
        if (o.error == 0 && o.len > 0)
                o.error = loop_write(fd, o.buf, o.len);
        return r < 0 ? r : o.error;
}
