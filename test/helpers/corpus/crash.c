/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Corpus: SIGSEGV two named calls below main; built static, PIE, non-PIE and (-rdynamic, then
 * stripped) with its names left only in .dynsym. */
#include <stddef.h>

#include "corpus-sync.h"

void corpus_crash_here(void);
void corpus_crash_caller(void);

/* The compiler cannot know it is NULL, so the store stays a store (no trap, no clone). */
int *volatile corpus_target = NULL;

__attribute__((noinline)) void corpus_crash_here(void) {
        *(volatile int *) corpus_target = 1;
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void corpus_crash_caller(void) {
        corpus_crash_here();
        __asm__ volatile("" ::: "memory"); /* no tail call: the caller stays on the stack */
}

int main(void) {
        corpus_sync();
        corpus_crash_caller();
        return 0;
}
