// SPDX-License-Identifier: LGPL-2.1-or-later
// Corpus: an uncaught C++ exception thrown three named calls deep; no handler, so the stack is
// not unwound: std::terminate() aborts (SIGABRT) with __cxa_throw and our frames below it.
#include <stdexcept>

#include "corpus-sync.h"

int corpus_throw_here(int depth);
int corpus_throw_middle(int depth);
int corpus_throw_outer(int depth);

// Throws only below a depth the program never reaches, so the compiler cannot turn the calls
// into noreturn ones (their return addresses would point into the next function).
__attribute__((noinline)) int corpus_throw_here(int depth) {
        if (depth < 100)
                throw std::runtime_error("corpus: uncaught at depth " + std::to_string(depth));
        return depth;
}

__attribute__((noinline)) int corpus_throw_middle(int depth) {
        return corpus_throw_here(depth + 1) + 1;
}

__attribute__((noinline)) int corpus_throw_outer(int depth) {
        return corpus_throw_middle(depth + 1) + 1;
}

int main() {
        int r;

        corpus_sync();
        r = corpus_throw_outer(0);
        __asm__ volatile("" ::: "memory"); // no tail call: main stays on the stack
        return r;
}
