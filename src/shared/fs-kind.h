/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: what kind of file system a statfs() f_type is, for the code that opens files named
 * by someone else (the collector's module files, coredumpctl's symbolizer). Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546 /* fuse, fuseblk and virtiofs alike */
#endif

/* Whether it is a kernel interface dressed as files (procfs, sysfs, debugfs, ...): nothing on it
 * is a program's file, and some of it (procfs's mem, sysfs's resources) is dangerous to open. */
bool fs_is_kernel_interface(uint64_t f_type);
/* Whether it is FUSE's: a user's server answers every open, read and close there, or never. */
bool fs_is_fuse(uint64_t f_type);
