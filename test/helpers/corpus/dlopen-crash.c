/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Corpus: SIGSEGV inside a library loaded with dlopen().
 *   dlopen-crash [MODULE]   (default: the corpus-dlopen-lib.so built beside it) */
#include <dlfcn.h>

#include "corpus-sync.h"

int main(int argc, char **argv) {
        const char *path = argc > 1 ? argv[1] : CORPUS_DLOPEN_LIB;
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        void (*crash)(void);

        if (!lib) {
                fprintf(stderr, "dlopen: %s\n", dlerror());
                return 1;
        }
        crash = (void (*)(void)) dlsym(lib, "corpus_lib_crash_outer");
        if (!crash) {
                fprintf(stderr, "dlsym: %s\n", dlerror());
                return 1;
        }
        corpus_sync();
        crash();
        return 0;
}
