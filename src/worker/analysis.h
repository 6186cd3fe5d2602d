/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker's analysis (module files in, an analysis record out). Worker: opens no
 * path; only the manager's descriptors and a memfd. */
#pragma once

/* The worker's analysis of a crash: the stack traces and packages, as the record fields the
 * manager accepts (record_merge_analysis), written to a sealed memfd for the RESULT message. */

#include "backtrace.h"
#include "proto.h"
#include "receive.h"
#include "record.h"

typedef struct ModuleFiles {
        BtModule items[MODULES_MAX];
        char paths[MODULES_MAX][MODULE_PATH_MAX];
        size_t n;
        int queue; /* the queue they are taken from, until taken (-EBADF: none) */
} ModuleFiles;

#define MODULE_FILES_INIT { .queue = -EBADF }

void module_files_close(ModuleFiles *m);
/* Reads the module table and the MODULES message that follows it (the queue the collector puts
 * the files on: proto.h), leaving the files in the queue: a job given back has them still for
 * the next worker. */
int module_files_receive(uint32_t n_modules, int table_fd, ModuleFiles *ret,
                         int (*wait_msg)(uint32_t type, void *msg, size_t size, int *fds, size_t n_fds));
/* Once the job can no longer be given back: the files taken out of the queue, waiting for the
 * collector to put them there if it has not yet; a queue that does not hold what the table lists
 * leaves the crash without module files (its traces from the core alone; the error returned is
 * the caller's to log), not the job failed.
 * They are in flight until then (the kernel counts descriptors in flight per sending user, here
 * root, the collector's, and refuses that user's processes without CAP_SYS_RESOURCE or
 * CAP_SYS_ADMIN to send more while the count is above their RLIMIT_NOFILE). */
int module_files_take(ModuleFiles *m);
/* Builds the analysis record from what the stream captured. Never fails for a bad core: the
 * stack trace text then says why there is none. */
int analysis_build(CoreCapture *cap, const ModuleFiles *mods, const char *exe, int signo, Record *ret);
/* The record written into slot, a memfd made ahead (memfd-slot.h; taken), cut to it and sealed
 * whole; the memfd, or an error (slot closed). */
int analysis_memfd(int slot, const Record *r);
