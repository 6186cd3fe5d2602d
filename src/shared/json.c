/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bounded JSON scanner for untrusted package JSON, and systemd-style string output. Shared
 * (worker, coredumpctl), pure: prints only to the FILE given; static buffers, one thread. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "utf8-util.h"

typedef struct Scanner {
        const char *p, *end;
} Scanner;

static void skip_ws(Scanner *s) {
        while (s->p < s->end && strchr(" \t\r\n", *s->p) && *s->p)
                s->p++;
}

static bool eat(Scanner *s, char c) {
        skip_ws(s);
        if (s->p < s->end && *s->p == c) {
                s->p++;
                return true;
        }
        return false;
}

/* A string into buf (escapes other than \" \\ \/ \n \t kept verbatim: keys and build-ids are
 * plain ASCII); -EBADMSG if malformed or longer than JSON_STRING_MAX. */
static int parse_string(Scanner *s, char buf[JSON_STRING_MAX]) {
        size_t n = 0;

        if (!eat(s, '"'))
                return -EBADMSG;
        while (s->p < s->end && *s->p != '"') {
                char c = *s->p++;
                if (c == '\\') {
                        if (s->p >= s->end)
                                return -EBADMSG;
                        c = *s->p++;
                        c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
                }
                if (n + 1 >= JSON_STRING_MAX)
                        return -EBADMSG;
                buf[n++] = c;
        }
        if (s->p >= s->end)
                return -EBADMSG;
        s->p++;
        buf[n] = 0;
        return 0;
}

static int skip_value(Scanner *s, unsigned depth);

static int skip_container(Scanner *s, char close, bool keyed, unsigned depth) {
        char tmp[JSON_STRING_MAX];

        if (depth >= JSON_DEPTH_MAX)
                return -EBADMSG;
        if (eat(s, close))
                return 0;
        do {
                if (keyed && (parse_string(s, tmp) < 0 || !eat(s, ':')))
                        return -EBADMSG;
                if (skip_value(s, depth + 1) < 0)
                        return -EBADMSG;
        } while (eat(s, ','));
        return eat(s, close) ? 0 : -EBADMSG;
}

static int skip_value(Scanner *s, unsigned depth) {
        char tmp[JSON_STRING_MAX];

        skip_ws(s);
        if (s->p >= s->end)
                return -EBADMSG;
        if (*s->p == '"')
                return parse_string(s, tmp);
        if (eat(s, '{'))
                return skip_container(s, '}', true, depth);
        if (eat(s, '['))
                return skip_container(s, ']', false, depth);
        /* number, true, false, null */
        if (!strchr("-0123456789tfn", *s->p) || !*s->p)
                return -EBADMSG;
        while (s->p < s->end && *s->p && strchr("-+.0123456789eEtruefalsn", *s->p))
                s->p++;
        return 0;
}

/* The inner object of one member: finds inner_key's string value. */
static int scan_inner(Scanner *s, const char *inner_key, char value[JSON_STRING_MAX], bool *found) {
        char key[JSON_STRING_MAX];

        *found = false;
        if (!eat(s, '{'))
                return skip_value(s, 1);
        if (eat(s, '}'))
                return 0;
        do {
                if (parse_string(s, key) < 0 || !eat(s, ':'))
                        return -EBADMSG;
                skip_ws(s);
                if (!*found && strcmp(key, inner_key) == 0 && s->p < s->end && *s->p == '"') {
                        if (parse_string(s, value) < 0)
                                return -EBADMSG;
                        *found = true;
                } else if (skip_value(s, 2) < 0)
                        return -EBADMSG;
        } while (eat(s, ','));
        return eat(s, '}') ? 0 : -EBADMSG;
}

int json_object_scan(const char *text, size_t len, const char *inner_key,
                     void (*fn)(const char *key, const char *inner_value, void *userdata), void *userdata) {
        static char key[JSON_STRING_MAX], value[JSON_STRING_MAX];
        Scanner s = { text, text + len };
        bool found;

        if (!eat(&s, '{'))
                return -EBADMSG;
        if (!eat(&s, '}')) {
                do {
                        if (parse_string(&s, key) < 0 || !eat(&s, ':') || scan_inner(&s, inner_key, value, &found) < 0)
                                return -EBADMSG;
                        fn(key, found ? value : NULL, userdata);
                } while (eat(&s, ','));
                if (!eat(&s, '}'))
                        return -EBADMSG;
        }
        skip_ws(&s);
        return s.p == s.end ? 0 : -EBADMSG;
}

/* A code point as JSON's \u escape: a surrogate pair past the Basic Multilingual Plane. */
static void print_u_escape(FILE *f, uint32_t cp) {
        if (cp < 0x10000) {
                fprintf(f, "\\u%04x", (unsigned) cp);
                return;
        }
        cp -= 0x10000;
        fprintf(f, "\\u%04x\\u%04x", (unsigned) (0xd800 + (cp >> 10)), (unsigned) (0xdc00 + (cp & 0x3ff)));
}

void json_print_string(FILE *f, const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        fputc('"', f);
        while (*p) {
                size_t n;
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", *p);
                else if (*p < 0x80)
                        fputc(*p, f);
                else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
                        /* C1 controls (a terminal takes U+009B for CSI): escaped like C0 */
                        fprintf(f, "\\u%04x", p[1]);
                        p += 2;
                        continue;
                } else if ((n = utf8_seq_len(p)) > 1) {
                        /* format characters (a right-to-left override) escaped, as in text output */
                        if (unichar_is_format(utf8_decode(p, n)))
                                print_u_escape(f, utf8_decode(p, n));
                        else
                                fwrite(p, 1, n, f);
                        p += n;
                        continue;
                } else
                        fputs("\\ufffd", f);
                p++;
        }
        fputc('"', f);
}

int json_object_get_string(const char *text, size_t len, const char *key, char *buf, size_t size) {
        static char k[JSON_STRING_MAX], v[JSON_STRING_MAX];
        Scanner s = { text, text + len };

        if (!eat(&s, '{'))
                return -EBADMSG;
        if (eat(&s, '}'))
                return -ENOENT;
        do {
                if (parse_string(&s, k) < 0 || !eat(&s, ':'))
                        return -EBADMSG;
                skip_ws(&s);
                if (strcmp(k, key) == 0 && s.p < s.end && *s.p == '"') {
                        if (parse_string(&s, v) < 0)
                                return -EBADMSG;
                        if (strlen(v) >= size)
                                return -ENOBUFS;
                        strcpy(buf, v);
                        return 0;
                }
                if (skip_value(&s, 1) < 0)
                        return -EBADMSG;
        } while (eat(&s, ','));
        return eat(&s, '}') ? -ENOENT : -EBADMSG;
}

bool json_object_valid(const char *text, size_t len) {
        Scanner s = { text, text + len };

        skip_ws(&s);
        if (s.p >= s.end || *s.p != '{' || skip_value(&s, 0) < 0)
                return false;
        skip_ws(&s);
        return s.p == s.end;
}
