/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* COREDUMP_SIGNATURE from a trace's text (worker: its own trace; coredumpctl: entries written
 * without the field). Pure: reads only the strings given. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash-signature.h"
#include "json.h"
#include "sha256.h"

#define MODULE_PREFIX "Module "
#define WITH_BUILD_ID " with build-id "
#define THREAD_PREFIX "Stack trace of thread "
/* "file:" + a module's file name, when it has no build-id */
#define MODULE_ID_MAX (CRASH_SIGNATURE_BUILD_ID_MAX + 256U)

typedef struct Line {
        const char *p;
        size_t len;
} Line;

static bool line_next(const char **cursor, Line *ret) {
        const char *p = *cursor, *eol;

        if (!p || !*p)
                return false;
        eol = strchrnul(p, '\n');
        *ret = (Line) { p, (size_t) (eol - p) };
        *cursor = *eol ? eol + 1 : eol;
        return true;
}

static bool starts_with(Line l, const char *prefix) {
        size_t n = strlen(prefix);
        return l.len >= n && memcmp(l.p, prefix, n) == 0;
}

/* The last occurrence of needle in l, or NULL. */
static const char *line_rfind(Line l, const char *needle) {
        size_t n = strlen(needle);

        if (n > l.len)
                return NULL;
        for (size_t i = l.len - n + 1; i-- > 0;)
                if (memcmp(l.p + i, needle, n) == 0)
                        return l.p + i;
        return NULL;
}

static bool is_hex_id(const char *p, size_t n) {
        if (n == 0 || n > CRASH_SIGNATURE_BUILD_ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("0123456789abcdef", p[i]))
                        return false;
        return true;
}

static const char *base_name(const char *p, size_t len, size_t *ret_len) {
        const char *s = p;

        for (size_t i = 0; i < len; i++)
                if (p[i] == '/')
                        s = p + i + 1;
        *ret_len = len - (size_t) (s - p);
        return s;
}

/* A "Module" line's path (up to " with build-id ", " from ", " without build-id."). */
static bool module_path(Line l, Line *ret_path, Line *ret_id) {
        const char *start = l.p + strlen(MODULE_PREFIX), *end, *with;

        *ret_id = (Line) {};
        with = line_rfind(l, WITH_BUILD_ID);
        if (with && with >= start) {
                const char *id = with + strlen(WITH_BUILD_ID);
                *ret_id = (Line) { id, (size_t) (l.p + l.len - id) };
                end = with;
        } else if ((end = line_rfind(l, " without build-id.")) && end >= start)
                ;
        else if (!(end = line_rfind(l, " from ")) || end < start)
                return false;
        *ret_path = (Line) { start, (size_t) (end - start) };
        return ret_path->len > 0;
}

typedef struct JsonLookup {
        Line path;
        char id[CRASH_SIGNATURE_BUILD_ID_MAX + 1];
} JsonLookup;

static void json_member(const char *key, const char *value, void *userdata) {
        JsonLookup *l = userdata;

        if (!l->id[0] && value && strlen(key) == l->path.len && memcmp(key, l->path.p, l->path.len) == 0 &&
            strlen(value) <= CRASH_SIGNATURE_BUILD_ID_MAX)
                snprintf(l->id, sizeof l->id, "%s", value);
}

/* The build-id package_json gives the module at path ("buildId" of its member, wherever it is
 * among the member's fields, the key unescaped): one linear scan. */
static void json_build_id(const char *json, Line path, char id[CRASH_SIGNATURE_BUILD_ID_MAX + 1]) {
        JsonLookup l = { .path = path };

        if (json)
                (void) json_object_scan(json, strlen(json), "buildId", json_member, &l);
        memcpy(id, l.id, sizeof l.id);
}

/* "file:" and a file name, its control characters as '?': a name cannot add lines to the text
 * hashed. */
static void file_id(const char *name, size_t len, char *buf, size_t size) {
        size_t o = (size_t) snprintf(buf, size, "file:");

        for (size_t i = 0; i < len && o + 1 < size; i++)
                buf[o++] = (unsigned char) name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
        buf[o < size ? o : size - 1] = 0;
}

/* A module's identity: its build-id, else "file:" and its file name. match: the module's path
 * (exact) or, by_base, its file name as frames give it. */
static void module_id(const char *trace, const char *json, const char *match, size_t match_len, bool by_base,
                      char *buf, size_t size) {
        const char *cursor = trace;
        Line l, path, id;

        if (by_base)
                match = base_name(match, match_len, &match_len);
        while (line_next(&cursor, &l)) {
                size_t bl;
                const char *b;

                if (starts_with(l, THREAD_PREFIX))
                        break;
                if (!starts_with(l, MODULE_PREFIX) || !module_path(l, &path, &id))
                        continue;
                b = by_base ? base_name(path.p, path.len, &bl) : (bl = path.len, path.p);
                if (bl != match_len || memcmp(b, match, bl) != 0)
                        continue;
                if (!id.p) {
                        char from_json[CRASH_SIGNATURE_BUILD_ID_MAX + 1];

                        json_build_id(json, path, from_json);
                        if (is_hex_id(from_json, strlen(from_json))) {
                                snprintf(buf, size, "%s", from_json);
                                return;
                        }
                } else if (is_hex_id(id.p, id.len)) {
                        snprintf(buf, size, "%.*s", (int) id.len, id.p);
                        return;
                }
                break;
        }
        match = base_name(match, match_len, &match_len);
        file_id(match, match_len, buf, size);
}

/* "#N  0x... NAME (MODULE + 0xOFFSET)": the module's file name and the offset. */
static bool frame_parse(Line l, Line *ret_module, uint64_t *ret_offset, uint64_t *ret_pc) {
        const char *plus = line_rfind(l, " + 0x"), *open, *end = l.p + l.len;
        char *num_end;
        Line head;

        if (!starts_with(l, "#") || !plus || end[-1] != ')')
                return false;
        head = (Line) { l.p, (size_t) (plus - l.p) };
        open = line_rfind(head, " (");
        if (!open)
                return false;
        *ret_module = (Line) { open + 2, (size_t) (plus - open - 2) };
        errno = 0;
        *ret_offset = strtoull(plus + 3, &num_end, 16);
        if (errno != 0 || num_end != end - 1)
                return false;
        *ret_pc = 0;
        for (const char *p = l.p; p < open; p++)
                if (p[0] == ' ' && p[1] == '0' && p[2] == 'x') {
                        *ret_pc = strtoull(p + 3, NULL, 16);
                        break;
                }
        return true;
}

static void hash_line(Sha256 *s, const char *fmt_key, const char *value) {
        sha256_update(s, fmt_key, strlen(fmt_key));
        sha256_update(s, " ", 1);
        sha256_update(s, value, strlen(value));
        sha256_update(s, "\n", 1);
}

static unsigned hash_frames(Sha256 *s, const char *trace, const char *json) {
        const char *cursor = trace;
        unsigned n = 0;
        Line l = {};

        /* the first "Stack trace of thread" line (at a line's start: a module's path may hold
         * those words) */
        while (line_next(&cursor, &l) && !starts_with(l, THREAD_PREFIX))
                ;
        if (!starts_with(l, THREAD_PREFIX))
                return 0;
        while (n < CRASH_SIGNATURE_FRAMES && line_next(&cursor, &l) && l.len > 0) {
                char id[MODULE_ID_MAX], frame[MODULE_ID_MAX + 32];
                uint64_t offset, pc;
                Line mod;

                if (!frame_parse(l, &mod, &offset, &pc))
                        continue;
                if (mod.len == 3 && memcmp(mod.p, "n/a", 3) == 0) {
                        if (pc < CRASH_SIGNATURE_LOW_PC)
                                snprintf(frame, sizeof frame, "none+0x%" PRIx64, pc);
                        else
                                snprintf(frame, sizeof frame, "none");
                } else {
                        module_id(trace, json, mod.p, mod.len, true, id, sizeof id);
                        snprintf(frame, sizeof frame, "%s+0x%" PRIx64, id, offset);
                }
                hash_line(s, "frame", frame);
                n++;
        }
        return n;
}

int crash_signature(const char *trace, const char *package_json, const char *exe, int signo,
                    char ret[CRASH_SIGNATURE_SIZE]) {
        static const char hexdigits[] = "0123456789abcdef";
        char id[MODULE_ID_MAX], num[16];
        uint8_t digest[SHA256_DIGEST_SIZE];
        Sha256 s;

        assert(ret);
        if (!trace)
                return -ENODATA;
        sha256_init(&s);
        sha256_update(&s, "coredump-signature v1\n", strlen("coredump-signature v1\n"));
        if (exe && exe[0]) {
                /* the path as the process saw it (a container's differs from the host's): else
                 * its file name */
                module_id(trace, package_json, exe, strlen(exe), false, id, sizeof id);
                if (strncmp(id, "file:", strlen("file:")) == 0)
                        module_id(trace, package_json, exe, strlen(exe), true, id, sizeof id);
        } else
                snprintf(id, sizeof id, "file:");
        hash_line(&s, "exe", id);
        snprintf(num, sizeof num, "%d", signo);
        hash_line(&s, "signal", num);
        if (hash_frames(&s, trace, package_json) == 0)
                return -ENODATA;
        sha256_final(&s, digest);
        for (unsigned i = 0; i < CRASH_SIGNATURE_HEX / 2; i++) {
                ret[2 * i] = hexdigits[digest[i] >> 4];
                ret[2 * i + 1] = hexdigits[digest[i] & 0xf];
        }
        ret[CRASH_SIGNATURE_HEX] = 0;
        return 0;
}
