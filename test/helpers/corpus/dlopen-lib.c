/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library dlopen-crash loads: corpus_lib_crash_outer() ends in a SIGSEGV in
 * corpus_lib_crash_here(), both frames inside this module. */
#include <stddef.h>

void corpus_lib_crash_here(void);
void corpus_lib_crash_outer(void);

int *volatile corpus_lib_target = NULL;

__attribute__((noinline)) void corpus_lib_crash_here(void) {
        *(volatile int *) corpus_lib_target = 1;
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void corpus_lib_crash_outer(void) {
        corpus_lib_crash_here();
        __asm__ volatile("" ::: "memory");
}
