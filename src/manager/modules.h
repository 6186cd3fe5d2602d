/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the module opener: the crashed process's mapped files, opened read-only beneath
 * its root. Manager (root): never reads the files, only hands the descriptors on. */
#pragma once

/* The crashed process's mapped files, opened for the worker's stack traces in the process's
 * own root and mount namespace (through /proc/PID/root, resolved beneath it), while the task
 * is pinned. Only regular files are opened for reading (via O_PATH first: no device or FIFO is
 * ever opened). Whether a file really is what was mapped, the worker checks against the
 * build-id in the core; the manager never reads the files. */

#include <stddef.h>

#include "proto.h"

/* At most MODULES_MAX files (proto.h) are handed to a worker: the executable, then the others
 * in the order they were mapped (ld.so and the libraries linked at start before dlopen()ed
 * ones). The rest are counted and left out of the stack traces (COREDUMP_MODULES_OMITTED=);
 * the core is stored all the same. */
typedef struct ModuleSet {
        size_t n;
        unsigned omitted; /* distinct mapped files past MODULES_MAX, not opened */
        int fds[MODULES_MAX];
        ModuleEntry entries[MODULES_MAX];
} ModuleSet;

/* Opens the files maps (the text of /proc/PID/maps) names, beneath the task's root, given the
 * task's verified /proc directory. Returns how many were opened; ret->omitted counts the files
 * left out past MODULES_MAX. */
int modules_open(int procdir, const char *maps, size_t len, ModuleSet *ret);
void modules_close(ModuleSet *s);
/* Pure: the path of a maps line's file, if it maps a file worth opening ("/..." not deleted). */
int modules_maps_path(const char *line, size_t len, char *buf, size_t size);
/* The fallback resolution (exported for tests): path beneath root as openat2(RESOLVE_IN_ROOT)
 * would resolve it, as an O_PATH descriptor. */
int modules_walk_beneath(int root, const char *path);
