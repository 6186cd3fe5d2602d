/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the kernel's @@ request, ack and mark. Manager, pure functions over bytes: no
 * I/O. */
#pragma once

/* The @@ request protocol, as pure functions over bytes (kernel-abi.md §2). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel-abi.h"

/* First 4 bytes of the stream: "\177ELF" means the plain @ protocol (the core itself). */
bool handshake_is_elf_magic(const uint8_t b[4]);
/* Size the request announces, checked: -EBADMSG unless 16..COREDUMP_REQ_SIZE_MAX. */
int handshake_req_size(const uint8_t b[4], uint32_t *ret);
/* Validates a complete request of `len` bytes (unknown tail ignored). */
int handshake_parse_req(const uint8_t *buf, size_t len, struct coredump_req *ret);
/* The ack for `decision` (one of KERNEL, USERSPACE, REJECT, optionally with WAIT), limited to
 * what the request offered; -EOPNOTSUPP if the kernel did not offer it. */
int handshake_build_ack(const struct coredump_req *req, uint64_t decision, struct coredump_ack *ret);
/* What this daemon has said about requests newer than it knows: the largest request size and
 * the unknown flags already logged. */
typedef struct HandshakeNews {
        uint32_t size_logged;
        uint64_t mask_logged;
} HandshakeNews;
/* Whether req shows something newer than this daemon knows and not logged yet (a request larger
 * than 16 bytes, or flags past COREDUMP_MASK_KNOWN): true once for each such novelty, which it
 * then counts as logged. */
bool handshake_req_news(HandshakeNews *news, const struct coredump_req *req);
const char *handshake_mark_to_string(uint32_t mark);
/* The kernel's 4-byte answer to our ack: 0 if it will proceed, -EPROTO (with the mark) if not. */
int handshake_check_mark(const uint8_t buf[COREDUMP_MARK_SIZE], uint32_t *ret_mark);
