/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 as FIPS 180-4 defines it, written for crash signatures (pure: touches only the
 * caller's memory). */
#include <assert.h>
#include <string.h>

#include "sha256.h"

static const uint32_t round_constants[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t initial_state[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static uint32_t rotr(uint32_t x, unsigned n) {
        return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static void store_be32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24);
        p[1] = (uint8_t) (v >> 16);
        p[2] = (uint8_t) (v >> 8);
        p[3] = (uint8_t) v;
}

static void compress_block(uint32_t state[8], const uint8_t block[SHA256_BLOCK_SIZE]) {
        uint32_t w[64], v[8];

        for (unsigned i = 0; i < 16; i++)
                w[i] = load_be32(block + 4 * i);
        for (unsigned i = 16; i < 64; i++) {
                uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
                uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        memcpy(v, state, sizeof v);
        for (unsigned i = 0; i < 64; i++) {
                uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
                uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
                uint32_t t1 = v[7] + s1 + ch + round_constants[i] + w[i];
                uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
                uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
                memmove(v + 1, v, 7 * sizeof v[0]);
                v[4] += t1;
                v[0] = t1 + s0 + maj;
        }
        for (unsigned i = 0; i < 8; i++)
                state[i] += v[i];
}

void sha256_init(Sha256 *s) {
        assert(s);
        *s = (Sha256) {};
        memcpy(s->state, initial_state, sizeof s->state);
}

void sha256_update(Sha256 *s, const void *data, size_t len) {
        const uint8_t *p = data;

        assert(s && (data || len == 0));
        s->length += len;
        while (len > 0) {
                size_t n = SHA256_BLOCK_SIZE - s->used < len ? SHA256_BLOCK_SIZE - s->used : len;
                memcpy(s->block + s->used, p, n);
                s->used += n;
                p += n;
                len -= n;
                if (s->used == SHA256_BLOCK_SIZE) {
                        compress_block(s->state, s->block);
                        s->used = 0;
                }
        }
}

void sha256_final(Sha256 *s, uint8_t ret[SHA256_DIGEST_SIZE]) {
        uint64_t bits = s->length * 8;
        uint8_t pad = 0x80, zero = 0, len_be[8];

        assert(s && ret);
        sha256_update(s, &pad, 1);
        while (s->used != SHA256_BLOCK_SIZE - sizeof len_be)
                sha256_update(s, &zero, 1);
        for (unsigned i = 0; i < 8; i++)
                len_be[i] = (uint8_t) (bits >> (56 - 8 * i));
        sha256_update(s, len_be, sizeof len_be);
        for (unsigned i = 0; i < 8; i++)
                store_be32(ret + 4 * i, s->state[i]);
}
