/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The @@ coredump socket protocol: request size and checks, the ack, the kernel's mark. Manager,
 * pure: bytes in, bytes out (the caller reads and writes the connection). */
#include <assert.h>
#include <elf.h>
#include <string.h>

#include "handshake.h"
#include "macro.h"

#define COREDUMP_ACTIONS (COREDUMP_KERNEL | COREDUMP_USERSPACE | COREDUMP_REJECT)

bool handshake_is_elf_magic(const uint8_t b[4]) {
        return memcmp(b, ELFMAG, SELFMAG) == 0;
}

int handshake_req_size(const uint8_t b[4], uint32_t *ret) {
        uint32_t size;

        memcpy(&size, b, sizeof size);
        if (size < COREDUMP_REQ_SIZE_VER0 || size > COREDUMP_REQ_SIZE_MAX)
                return -EBADMSG;
        *ret = size;
        return 0;
}

int handshake_parse_req(const uint8_t *buf, size_t len, struct coredump_req *ret) {
        struct coredump_req req;

        if (len < COREDUMP_REQ_SIZE_VER0)
                return -EBADMSG;
        memcpy(&req, buf, sizeof req);
        if (req.size != len || req.size_ack < COREDUMP_ACK_SIZE_VER0)
                return -EBADMSG;
        if (!(req.mask & COREDUMP_KERNEL))
                return -EBADMSG; /* every kernel with the protocol offers to write the core */
        *ret = req;
        return 0;
}

int handshake_build_ack(const struct coredump_req *req, uint64_t decision, struct coredump_ack *ret) {
        uint64_t action = decision & COREDUMP_ACTIONS;

        /* exactly one action, nothing but WAIT besides, all of it offered */
        if (action == 0 || (action & (action - 1)) != 0 || (decision & ~(COREDUMP_ACTIONS | COREDUMP_WAIT)))
                return -EINVAL;
        if ((decision & req->mask) != decision)
                return -EOPNOTSUPP;
        *ret = (struct coredump_ack) { .size = COREDUMP_ACK_SIZE_VER0, .spare = 0, .mask = decision };
        return 0;
}

bool handshake_req_news(HandshakeNews *news, const struct coredump_req *req) {
        uint64_t unknown;
        bool news_size, news_mask;

        assert(news);
        assert(req);
        unknown = req->mask & ~COREDUMP_MASK_KNOWN;
        news_size = req->size > MAX(news->size_logged, COREDUMP_REQ_SIZE_VER0);
        news_mask = (unknown & ~news->mask_logged) != 0;
        news->size_logged = MAX(news->size_logged, req->size);
        news->mask_logged |= unknown;
        return news_size || news_mask;
}

const char *handshake_mark_to_string(uint32_t mark) {
        switch (mark) {
        case COREDUMP_MARK_REQACK:
                return "accepted";
        case COREDUMP_MARK_MINSIZE:
                return "ack too small for the kernel";
        case COREDUMP_MARK_MAXSIZE:
                return "ack larger than the kernel allows";
        case COREDUMP_MARK_UNSUPPORTED:
                return "ack asked for something the kernel does not support";
        case COREDUMP_MARK_CONFLICTING:
                return "ack had conflicting flags";
        default:
                return "unknown mark";
        }
}

int handshake_check_mark(const uint8_t buf[COREDUMP_MARK_SIZE], uint32_t *ret_mark) {
        uint32_t mark;

        memcpy(&mark, buf, sizeof mark);
        *ret_mark = mark;
        return mark == COREDUMP_MARK_REQACK ? 0 : -EPROTO;
}
