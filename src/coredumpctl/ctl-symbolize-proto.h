/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface between coredumpctl info's symbolizer (ctl-symbolize.c, with the invoking user's
 * privileges, often root) and the confined child that parses ELF and DWARF for it
 * (ctl-symbolize-child.c): the modules to look up, the child's requests for files (only ever by
 * module or build-id, answered with a descriptor the parent opened), its result. No I/O here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build-config.h"
#include "ctl-symbolize.h"
#include "proto.h"

#if HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

/* A module of the trace: its path (under --root) and build-id, from the message's module lines
 * and COREDUMP_PACKAGE_JSON; the rest is the child's. */
typedef struct SymModule {
        char *path;
        const char *base; /* the file name, within path */
        uint8_t build_id[SYMBOLIZE_BUILD_ID_MAX];
        size_t build_id_len;
#if HAVE_LIBDW
        Dwfl_Module *mod;
#endif
        uint64_t start;   /* where it is placed in the Dwfl */
        bool tried, skipped, has_debug, used, debug_refused;
        int error; /* the lookups' failure other than "none": the server could not be reached */
} SymModule;

typedef struct SymModules {
        SymModule items[SYMBOLIZE_MODULES_MAX];
        size_t n;
} SymModules;

/* The module lines of message, then the modules of the package JSON (or NULL), into l. */
void sym_modules_collect(SymModules *l, const char *message, const char *json);
void sym_modules_free(SymModules *l);

/* The messages, over a SOCK_SEQPACKET pair with proto.h's framing (its header, exact sizes, an
 * exact count of descriptors). */
enum {
        MSG_SYM_REQUEST = 0x5301, /* child to parent: SymRequest */
        MSG_SYM_FILE = 0x5302,    /* parent to child: SymReply with error 0, and the file */
        MSG_SYM_NONE = 0x5303,    /* parent to child: SymReply, no file */
};

typedef enum SymWant {
        SYM_WANT_ELF = 1,   /* the module's own file: its path, else by its build-id */
        SYM_WANT_DEBUG = 2, /* debug info by the build-id given */
        SYM_WANT_ALT = 3,   /* a dwz file by the build-id given */
} SymWant;

typedef struct SymRequest {
        MsgHeader hdr;
        uint32_t want;   /* SymWant */
        uint32_t module; /* SYM_WANT_ELF: its index */
        uint32_t build_id_len;
        uint8_t build_id[SYMBOLIZE_BUILD_ID_MAX];
} SymRequest;

/* -ENOENT: there is none; any other negative errno: the lookup failed (a server that cannot be
 * reached). 0 with MSG_SYM_FILE. */
typedef struct SymReply {
        MsgHeader hdr;
        int32_t error;
        uint32_t spare;
} SymReply;

#define SYM_RESULT_MAGIC 0x53594d52U /* "SYMR" */

/* Child to parent, on its output pipe, once: this, then text_len bytes of the new message. */
typedef struct SymResult {
        uint32_t magic;
        int32_t unreachable; /* the failure that made the lookups stop, or 0 */
        uint32_t has_text;   /* 0: the message as stored stands */
        uint32_t spare;
        uint64_t text_len;
        char note[SYMBOLIZE_NOTE_MAX];
} SymResult;

/* The child's whole work (after it was confined): the message's traces named again, each file
 * asked of the parent over sock, the result written to out. deadline: CLOCK_MONOTONIC µs after
 * which no further module is looked up. Returns the exit status. */
int symbolize_child(const char *message, SymModules *mods, uint64_t deadline, int sock, int out);

/* The parent's answer to one request: the descriptor of a regular file to give the child, or a
 * negative errno as SymReply says. Opens only: the module's own file under root if root or the
 * caller owns it, no one else can write it and it is on no FUSE or kernel file system; files
 * below /usr/lib/debug/.build-id named by build-id; what the debuginfod client fetched. */
int symbolize_provide(const SymRequest *req, const SymModules *mods, const char *root);
