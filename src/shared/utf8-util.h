/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: UTF-8 sequences checked and decoded, and which code points are invisible format
 * characters (Unicode category Cf, the line and paragraph separators) that reorder or hide text on
 * a terminal. Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether cp is a format character: the bidirectional embeddings, overrides and isolates
 * (U+202A..U+202E, U+2066..U+2069) that make a terminal show text in another order than it has,
 * the zero-width characters, the soft hyphen, the tags, and the rest of category Cf, plus
 * U+2028/U+2029 (categories Zl, Zp), which some terminals take as a line break. */
bool unichar_is_format(uint32_t cp);

/* The length of the valid UTF-8 sequence at p (1..4), or 0 if p does not start one: overlong
 * forms, surrogates and code points past U+10FFFF are not valid. p is NUL-terminated (a NUL ends
 * a sequence early: not valid). */
size_t utf8_seq_len(const unsigned char *p);
/* The code point of the valid UTF-8 sequence of n bytes (2..4) at p (utf8_seq_len() said n). */
uint32_t utf8_decode(const unsigned char *p, size_t n);
