/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Just enough JSON reading for COREDUMP_PACKAGE_JSON ({"<module path>": {"buildId": "...", ...}}):
 * a pure, bounded scanner over (buffer, length); the text comes from the journal. */

#define JSON_DEPTH_MAX 16U
#define JSON_STRING_MAX 4096U

/* Calls fn for each member of the top-level object whose value is an object, with the member's
 * key and the string value of inner_key in it (NULL if absent or not a string). Returns 0, or
 * -EBADMSG if the text is not valid JSON of that shape. */
int json_object_scan(const char *text, size_t len, const char *inner_key,
                     void (*fn)(const char *key, const char *inner_value, void *userdata), void *userdata);
