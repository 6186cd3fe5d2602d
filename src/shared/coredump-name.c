/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stored core names, systemd's way (comm escaped) and parsed back, and the boot and machine ids. Shared
 * (manager, coredumpctl): reads /proc/sys/kernel/random/boot_id and /etc/machine-id, nothing else. */
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "coredump-name.h"
#include "fd-util.h"
#include "macro.h"
#include "parse-util.h"

int coredump_escape_comm(const char *comm, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        for (const unsigned char *p = (const unsigned char *) comm; *p; p++) {
                bool esc = *p < ' ' || *p >= 127 || strchr("/. \\", *p);
                size_t need = esc ? 4 : 1;

                if (o + need + 1 > size)
                        return -ENOBUFS;
                if (esc) {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[*p >> 4];
                        buf[o++] = hex[*p & 15];
                } else
                        buf[o++] = (char) *p;
        }
        if (o + 1 > size)
                return -ENOBUFS;
        buf[o] = 0;
        return (int) o;
}

int coredump_filename(char *buf, size_t size, const char *comm, uid_t uid, const char *boot_id, pid_t pid,
                      uint64_t timestamp_usec, const char *suffix) {
        char esc[COREDUMP_NAME_MAX];
        int r, n;

        r = coredump_escape_comm(comm && comm[0] ? comm : "unknown", esc, sizeof esc);
        if (r < 0)
                return r;
        n = snprintf(buf, size, "core.%s.%u.%s.%d.%llu%s", esc, (unsigned) uid, boot_id, (int) pid,
                     (unsigned long long) timestamp_usec, suffix);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

/* core COMM UID BOOTID PID USEC [EXT] */
#define NAME_FIELDS_MIN 6U
#define NAME_FIELDS_MAX 7U

static bool is_boot_id(const char *s) {
        size_t n = strspn(s, "0123456789abcdef");
        return n == BOOT_ID_STRING_MAX - 1 && s[n] == 0;
}

static bool is_known_suffix(const char *s) {
        return strcmp(s, "zst") == 0 || strcmp(s, "lz4") == 0 || strcmp(s, "xz") == 0;
}

/* Splits copy (modified) at every dot; empty fields count. Returns how many, or 0 if too many. */
static size_t split_dots(char *copy, char *field[NAME_FIELDS_MAX]) {
        size_t n = 0;

        for (char *p = copy;; p++) {
                char *dot = strchr(p, '.');
                if (n == NAME_FIELDS_MAX)
                        return 0;
                field[n++] = p;
                if (!dot)
                        return n;
                *dot = 0;
                p = dot;
        }
}

int coredump_name_parse(const char *name, CoredumpName *ret) {
        char copy[COREDUMP_NAME_MAX], *field[NAME_FIELDS_MAX];
        uint64_t uid, pid, usec;
        size_t n;

        if (strlen(name) >= sizeof copy)
                return -EINVAL;
        memcpy(copy, name, strlen(name) + 1);
        n = split_dots(copy, field);
        if (n < NAME_FIELDS_MIN || strcmp(field[0], "core") != 0 || field[1][0] == 0 ||
            parse_uint64(field[2], &uid) < 0 || uid >= UINT32_MAX || !is_boot_id(field[3]) ||
            parse_uint64(field[4], &pid) < 0 || parse_uint64(field[5], &usec) < 0 ||
            (n == NAME_FIELDS_MAX && !is_known_suffix(field[6])))
                return -EINVAL;
        *ret = (CoredumpName) { .uid = (uid_t) uid, .pid = pid, .usec = usec };
        memcpy(ret->boot_id, field[3], BOOT_ID_STRING_MAX);
        return 0;
}

/* 128 bits as 32 lowercase hex digits, dashes and whitespace dropped (boot id, machine id). */
static int read_id128(const char *path, char ret[BOOT_ID_STRING_MAX]) {
        char raw[64];
        size_t o = 0;
        ssize_t n;

        n = read_small_file_at(AT_FDCWD, path, raw, sizeof raw);
        if (n < 0)
                return (int) n;
        for (ssize_t i = 0; i < n && o < BOOT_ID_STRING_MAX - 1; i++)
                if ((raw[i] >= '0' && raw[i] <= '9') || (raw[i] >= 'a' && raw[i] <= 'f'))
                        ret[o++] = raw[i];
                else if (raw[i] != '-' && raw[i] != '\n')
                        return -EBADMSG;
        if (o != BOOT_ID_STRING_MAX - 1)
                return -EBADMSG;
        ret[o] = 0;
        return 0;
}

int read_boot_id(char ret[BOOT_ID_STRING_MAX]) {
        return read_id128("/proc/sys/kernel/random/boot_id", ret);
}

int read_machine_id(char ret[BOOT_ID_STRING_MAX]) {
        return read_id128("/etc/machine-id", ret);
}
