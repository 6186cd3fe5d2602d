/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The entry point every fuzz target defines, for libFuzzer or replay.c. Test code: the targets
 * feed their input to pure parsers, no I/O. */
#pragma once

/* Each fuzz target defines LLVMFuzzerTestOneInput. Built with -Dfuzzers=true it links libFuzzer;
 * otherwise with replay.c, which runs the committed corpus (test/fuzz/<target>/) through it as a
 * normal test. */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
