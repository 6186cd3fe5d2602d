/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "@@" handshake from the manager's side: the request (its size word first), the ack built
 * for it, and the kernel's mark. A fake client on the socket controls all of these bytes. */
#include <string.h>

#include "fuzz.h"
#include "handshake.h"
#include "kernel-abi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct coredump_req req;
        struct coredump_ack ack;
        uint8_t mark[COREDUMP_MARK_SIZE] = {};
        uint32_t req_size, m;

        if (size < 4)
                return 0;
        (void) handshake_is_elf_magic(data);
        if (handshake_req_size(data, &req_size) < 0 || req_size > size)
                return 0;
        if (handshake_parse_req(data, req_size, &req) >= 0) {
                if (handshake_build_ack(&req, COREDUMP_KERNEL | COREDUMP_WAIT, &ack) >= 0 &&
                    (ack.size != COREDUMP_ACK_SIZE_VER0 || (ack.mask & ~req.mask)))
                        __builtin_trap(); /* never asks for what the kernel did not offer */
                (void) handshake_build_ack(&req, COREDUMP_REJECT, &ack);
        }
        memcpy(mark, data + req_size, size - req_size < sizeof mark ? size - req_size : sizeof mark);
        (void) handshake_check_mark(mark, &m);
        (void) handshake_mark_to_string(m);
        return 0;
}
