/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* FNV-1a, 64 bits, over a NUL-terminated string: table keys in the manager's memory (rate-limit
 * buckets, mapped files). Pure; not for anything an attacker may aim collisions at. */
#pragma once

#include <stdint.h>

#define FNV1A_64_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV1A_64_PRIME UINT64_C(0x100000001b3)

/* h: FNV1A_64_OFFSET, or a value derived from it (a kind mixed in) */
static inline uint64_t fnv1a_64(uint64_t h, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                h = (h ^ *p) * FNV1A_64_PRIME;
        return h;
}
