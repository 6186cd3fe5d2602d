/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One journal entry over journald's native protocol, written here rather than with libsystemd:
 * the worker starts once per crash, and libsystemd (with libgcrypt behind it) was a third of its
 * dynamic linking. The protocol (systemd's "Native Journal Protocol" document): a datagram of
 * fields, "NAME=value\n" for a value without a newline, otherwise "NAME\n", the value's length
 * as 64-bit little endian, the value and "\n"; an entry too big for one datagram is written
 * into a sealed memfd whose descriptor is sent instead. */
#include <endian.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fd-util.h"
#include "journal-send.h"
#include "macro.h"
#include "memfd-slot.h"
#include "record.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define JOURNAL_SNDBUF (8U << 20) /* as libsystemd asks: most entries then fit one datagram */

/* Connects a datagram socket to journald; an error if there is none (so a missing entry is
 * reported, and the record beside the core says it all). */
static int journal_connect(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int sndbuf = JOURNAL_SNDBUF;

        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        return fd;
}

/* Appends one field to buf at *pos (buf has room: see field_size()). */
static void put_field(uint8_t *buf, size_t *pos, const void *name, size_t name_len, const void *value,
                      size_t value_len) {
        uint8_t *p = buf + *pos;

        memcpy(p, name, name_len);
        p += name_len;
        if (memchr(value, '\n', value_len)) {
                uint64_t le = htole64(value_len);
                *p++ = '\n';
                memcpy(p, &le, sizeof le);
                p += sizeof le;
        } else
                *p++ = '=';
        memcpy(p, value, value_len);
        p += value_len;
        *p++ = '\n';
        *pos = (size_t) (p - buf);
}

/* The most a field takes (the binary form). */
static size_t field_size(size_t name_len, size_t value_len) {
        return name_len + 1 + sizeof(uint64_t) + value_len + 1;
}

/* A memfd made ahead for the next large entry (the worker's, which may make none itself), or
 * -EBADF: one is made then. */
static int entry_slot = -EBADF;

void journal_send_use_memfd(int fd) {
        safe_close(entry_slot);
        entry_slot = fd;
}

static int send_memfd(int sock, const uint8_t *buf, size_t len, int flags) {
        _cleanup_close_ int fd = entry_slot >= 0 ? TAKE_FD(entry_slot) : memfd_slot_new("journal-entry");
        char control[CMSG_SPACE(sizeof(int))] = {};
        struct msghdr mh = { .msg_control = control, .msg_controllen = sizeof control };
        struct cmsghdr *cmsg;
        int r;

        if (fd < 0)
                return fd;
        r = memfd_slot_fill(fd, buf, len);
        r = r ?: memfd_slot_finish(fd, len);
        if (r < 0)
                return r;
        cmsg = CMSG_FIRSTHDR(&mh);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
        if (sendmsg(sock, &mh, MSG_NOSIGNAL | flags) < 0)
                return negative_errno();
        return 0;
}

static int send_entry(const uint8_t *buf, size_t len, int flags) {
        _cleanup_close_ int sock = journal_connect();

        if (sock < 0)
                return sock;
        if (send(sock, buf, len, MSG_NOSIGNAL | flags) >= 0)
                return 0;
        if (errno != EMSGSIZE && errno != ENOBUFS)
                return negative_errno();
        return send_memfd(sock, buf, len, flags);
}

int journal_send_record(const uint8_t *rec, size_t len, const void *core_field, size_t core_len, int flags) {
        const uint8_t *core_eq = core_field ? memchr(core_field, '=', core_len) : NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t pos = 0, o = 0, size = 0, n = 0;
        RecordField f;
        int r;

        if (core_field && !core_eq)
                return -EINVAL;
        /* sizes first: the serialised record's framing is larger than a field's (see record.h),
         * so len bounds the fields; the core comes on top */
        size = len + (core_field ? field_size(core_len, core_len) : 0) + 1;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        while ((r = record_next(rec, len, &pos, &f)) > 0) {
                if (f.name_len >= 5 && memcmp(f.name, "_CDS_", 5) == 0)
                        continue;
                if (++n > JOURNAL_FIELDS_MAX)
                        return -E2BIG;
                if (o + field_size(f.name_len, f.value_len) > size)
                        return -E2BIG;
                put_field(buf, &o, f.name, f.name_len, f.value, f.value_len);
        }
        if (r < 0)
                return r;
        if (core_field) {
                size_t name_len = (size_t) (core_eq - (const uint8_t *) core_field);
                put_field(buf, &o, core_field, name_len, core_eq + 1, core_len - name_len - 1);
        }
        return send_entry(buf, o, flags);
}
