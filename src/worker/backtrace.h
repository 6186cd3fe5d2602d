/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: libdwfl stack traces of a rebuilt core. Worker (sandboxed): opens no path, reads
 * module files only through the descriptors given. */
#pragma once

/* Stack traces and module list of a (small, rebuilt) core with libdwfl, in systemd-coredump's
 * format. Module files come as descriptors the manager opened in the crashed process's mount
 * namespace; nothing here opens a path. */

#include <stddef.h>
#include <stdint.h>

#define BT_THREADS_MAX 64U
#define BT_FRAMES_MAX 64U
#define BT_TEXT_MAX (1U << 20)
#define BT_JSON_MAX (256U << 10)
#define BT_PACKAGE_FIELD_MAX 128U
/* .note.package JSON larger than this is ignored */
#define BT_PACKAGE_NOTE_MAX 4096U

typedef struct BtModule {
        const char *path; /* as the crashed process saw it (NT_FILE, /proc/PID/maps) */
        int fd;
} BtModule;

typedef struct BtResult {
        char *text;         /* "Module ..." lines, then "Stack trace of thread N:" blocks */
        char *package_json; /* {"<path>":{"buildId":"..."[, .note.package fields]}, ...} or NULL */
        char package_name[BT_PACKAGE_FIELD_MAX], package_version[BT_PACKAGE_FIELD_MAX]; /* of the executable */
        unsigned n_threads, n_modules;
} BtResult;

/* exe: COREDUMP_EXE, to pick the executable's package. Returns 0 with what could be found, or a
 * negative errno if libdwfl could not read the core at all. */
int backtrace_core(uint8_t *core, size_t len, const BtModule *mods, size_t n_mods, const char *exe, BtResult *ret);
void bt_result_free(BtResult *r);
