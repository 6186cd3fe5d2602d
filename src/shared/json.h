/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the little JSON coredump-socket reads and writes. Shared, pure: no I/O beyond the
 * FILE given for output. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Just enough JSON for COREDUMP_PACKAGE_JSON ({"<module path>": {"buildId": "...", ...}}) and the
 * .note.package JSON of binaries: a pure, bounded scanner over (buffer, length) for untrusted
 * text (the journal, a crashed program's files), and string output. */

#define JSON_DEPTH_MAX 16U
#define JSON_STRING_MAX 4096U

/* Calls fn for each member of the top-level object whose value is an object, with the member's
 * key and the string value of inner_key in it (NULL if absent or not a string). Returns 0, or
 * -EBADMSG if the text is not valid JSON of that shape. */
int json_object_scan(const char *text, size_t len, const char *inner_key,
                     void (*fn)(const char *key, const char *inner_value, void *userdata), void *userdata);
/* The string value of key in a top-level object: 0, -ENOENT, -EBADMSG or -ENOBUFS. */
int json_object_get_string(const char *text, size_t len, const char *key, char *buf, size_t size);
/* Whether the text is exactly one well-formed JSON object (within the depth bound). */
bool json_object_valid(const char *text, size_t len);
/* A JSON string with the escapes systemd uses; invalid UTF-8 bytes become U+FFFD. */
void json_print_string(FILE *f, const char *s);
