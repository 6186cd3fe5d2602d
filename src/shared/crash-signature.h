/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* COREDUMP_SIGNATURE: a crash's stable identity (executable's build-id, signal, the crashing
 * thread's top frames as module build-id + offset), from systemd-format trace text. Pure. */
#pragma once

#include <stddef.h>

/* Frames of the crashing thread (the trace's first) that make the signature. */
#define CRASH_SIGNATURE_FRAMES 5U
/* Hex digits kept of the SHA-256: 128 bits. */
#define CRASH_SIGNATURE_HEX 32U
#define CRASH_SIGNATURE_SIZE (CRASH_SIGNATURE_HEX + 1U)
/* A frame outside every module keeps its address only below this (a call through a NULL-ish
 * pointer): any other such address moves with ASLR. */
#define CRASH_SIGNATURE_LOW_PC 0x10000U
/* Longest build-id taken, in hex digits (64 bytes, as libdwfl's limit here). */
#define CRASH_SIGNATURE_BUILD_ID_MAX 128U

/* trace: "Module ..." lines and "Stack trace of thread N:" blocks as backtrace.c (and systemd)
 * write them, possibly after other text; package_json: COREDUMP_PACKAGE_JSON or NULL (build-ids
 * of modules whose line names a package instead); exe: COREDUMP_EXE or NULL; signo: the signal.
 * Writes CRASH_SIGNATURE_HEX lowercase hex digits and returns 0, or -ENODATA without a frame. */
int crash_signature(const char *trace, const char *package_json, const char *exe, int signo,
                    char ret[CRASH_SIGNATURE_SIZE]);
