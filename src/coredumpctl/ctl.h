/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl's shared interface: the parsed arguments, and the configuration and path helpers
 * every verb uses. The invoking user's privileges only (see below). */
#pragma once

/* coredumpctl: lists and retrieves the crashes coredump-socket recorded, from the journal and
 * from the records kept beside the cores, merged. Runs with the caller's privileges: what a user
 * cannot read (other users' journals, root-only records and cores) is simply not shown. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "macro.h"
#include "record.h"

#define SD_MESSAGE_COREDUMP_STR "fc2e22bc6ee647b6b90729ab34a250b1"
#define SD_MESSAGE_BACKTRACE_STR "1f4e0a44a88649939aaea34fc6da8c95"

/* Bounds: matches and debugger arguments on the command line, entries collected. */
#define MATCHES_MAX 64U
#define DEBUGGER_ARGS_MAX 64U
#define ENTRIES_MAX 1000000U

typedef enum JsonMode {
        JSON_OFF,
        JSON_SHORT,
        JSON_PRETTY,
} JsonMode;

typedef struct CtlArgs {
        const char *verb;
        char **matches; /* argv after the verb */
        size_t n_matches;

        bool pager, legend, quiet, reverse, all, group;
        JsonMode json;
        size_t rows_max; /* SIZE_MAX: all */
        uint64_t since, until; /* USEC_INFINITY: unset */
        const char *field, *output, *debugger;
        char *debugger_args[DEBUGGER_ARGS_MAX];
        size_t n_debugger_args;
        const char *files[MATCHES_MAX];
        size_t n_files;
        const char *directory, *root, *storage, *config, *control;

        /* vacuum */
        uint64_t max_use, keep_free, older_than_usec; /* UINT64_MAX: unset */
} CtlArgs;

/* 1 to go on, 0 to exit successfully (--help, --version), negative errno on bad arguments. */
int ctl_parse_args(CtlArgs *a, int argc, char **argv);
/* The storage directory: --storage=, else Directory= of the configuration (under --root). */
int ctl_storage_dir(const CtlArgs *a, char *buf, size_t size);
/* Loads the configuration under --root (or --config=). */
int ctl_load_config(const CtlArgs *a, Config *ret);
/* Joins --root and an absolute path ("/x" if no root). */
int ctl_root_path(const CtlArgs *a, const char *path, char *buf, size_t size);

/* A machine id: 128 bits in hex, as /etc/machine-id and _MACHINE_ID hold it. */
#define MACHINE_ID_HEX 32U
/* This machine's id (under --root, that tree's), or "" where it cannot be read. */
void ctl_local_machine_id(const CtlArgs *a, char buf[MACHINE_ID_HEX + 1]);
