/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of coredumpctl info's re-symbolization of stored stack traces with debug info found by
 * build-id (debuginfod when DEBUGINFOD_URLS is set): the pure line parsers and the lookup. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Bounds. Modules looked up per entry (the worker's MODULES_MAX); the address span each module is
 * placed in (a frame's offset beyond it is not looked up); frames renamed per entry (the worker's
 * 64 threads of 64 frames); the length of a new name (a longer one keeps the stored name); the
 * time after the first lookup of a run (all its entries) after which no further module is looked
 * up; the debuginfod client's timeouts (seconds) when the user set none: to start a download
 * (DEBUGINFOD_TIMEOUT, its own default is 90 s) and for a whole download (DEBUGINFOD_MAXTIME,
 * its own default is none). At worst a run takes the deadline plus two downloads (a module's
 * file and its debug info); a server that could not be reached is not asked again in the run.
 * A module's own file larger than SYMBOLIZE_FILE_MAX is not read (its build-id is looked up). */
#define SYMBOLIZE_MODULES_MAX 128U
#define SYMBOLIZE_MODULE_SPAN (UINT64_C(1) << 36)
#define SYMBOLIZE_FRAMES_MAX (64U * 64U)
#define SYMBOLIZE_NAME_MAX 1024U
#define SYMBOLIZE_DEADLINE_USEC (60 * USEC_PER_SEC)
#define SYMBOLIZE_TIMEOUT_DEFAULT "10"
#define SYMBOLIZE_MAXTIME_DEFAULT "60"
#define SYMBOLIZE_BUILD_ID_MAX 64U /* bytes */
#define SYMBOLIZE_NOTE_MAX 1024U
#define SYMBOLIZE_FILE_MAX (UINT64_C(1) << 30)

/* "#3  0x00007f0123456789 name (module + 0x1234)", as the worker prints a frame. */
typedef struct SymFrame {
        unsigned index;
        size_t name_off, name_len;     /* the function name ("n/a" if none) within the line */
        size_t module_off, module_len; /* the module's file name within the line */
        uint64_t offset;               /* the frame's address minus the module's start */
} SymFrame;

/* "Module /path with build-id 0123abcd" */
typedef struct SymModuleLine {
        size_t path_off, path_len;
        size_t id_off, id_len; /* hex digits */
} SymModuleLine;

/* Whether line (len bytes, no newline) is a frame / a module with its build-id (pure). */
bool symbolize_parse_frame(const char *line, size_t len, SymFrame *ret);
bool symbolize_parse_module(const char *line, size_t len, SymModuleLine *ret);

/* Whether DEBUGINFOD_URLS is set and not empty: only then are traces looked up again. */
bool symbolize_enabled(void);

/* The message's stack traces with each frame named from the debug info found for its module's
 * build-id (the module lines of the message and COREDUMP_PACKAGE_JSON, may be NULL, give them;
 * a module's own file is looked for under root, NULL for /, and used only if root or the caller
 * owns it and no one else can write it). *ret_text: the new message, or NULL
 * when the stored one stands (no module to look up, the server could not be reached); note: one
 * line saying what was found, or why not. 0, or -ENOMEM, -EOPNOTSUPP (built without libdw). */
int symbolize_message(const char *message, const char *package_json, const char *root, char **ret_text, char *note,
                      size_t note_size);
