/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 (FIPS 180-4) over bytes in memory: crash signatures that must be the same on every
 * machine. Pure: no I/O, no allocation. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32U
#define SHA256_BLOCK_SIZE 64U

typedef struct Sha256 {
        uint32_t state[8];
        uint64_t length; /* bytes hashed so far */
        uint8_t block[SHA256_BLOCK_SIZE];
        size_t used; /* bytes of block filled */
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t len);
void sha256_final(Sha256 *s, uint8_t ret[SHA256_DIGEST_SIZE]);
