/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Corpus: a process with many distinct mapped files, as large programs have: it dlopen()s N tiny
 * libraries, prints "maps M" (distinct files in /proc/self/maps) to stderr and dies of SIGSEGV.
 *   many-maps [N [DIR]]   (default: 120 of the CORPUS_MAPS_BUILT libraries built beside it) */
#include <dlfcn.h>
#include <limits.h>

#include "corpus-sync.h"

#define MAPS_PATHS_MAX 4096

int *volatile corpus_target = NULL;

__attribute__((noinline)) static void corpus_crash_here(void) {
        *(volatile int *) corpus_target = 1;
        __asm__ volatile("" ::: "memory");
}

static int load(long n, const char *dir) {
        for (long i = 0; i < n; i++) {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/corpus-map-%03ld.so", dir, i);
                if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
                        fprintf(stderr, "dlopen: %s\n", dlerror());
                        return -1;
                }
        }
        return 0;
}

/* The number of distinct files (absolute paths) in /proc/self/maps. */
static long count_mapped_files(void) {
        static char *seen[MAPS_PATHS_MAX];
        FILE *f = fopen("/proc/self/maps", "re");
        char *line = NULL;
        size_t size = 0;
        long n = 0;

        if (!f)
                return -1;
        while (getline(&line, &size, f) > 0) {
                char *path = strchr(line, '/');
                long i;

                if (!path)
                        continue;
                path[strcspn(path, "\n")] = 0;
                for (i = 0; i < n && strcmp(seen[i], path) != 0; i++)
                        ;
                if (i == n && n < MAPS_PATHS_MAX)
                        seen[n++] = strdup(path);
        }
        free(line);
        fclose(f);
        return n;
}

int main(int argc, char **argv) {
        long n = argc > 1 ? atol(argv[1]) : CORPUS_MAPS_DEFAULT;
        const char *dir = argc > 2 ? argv[2] : CORPUS_MAPS_DIR;

        if (n < 0 || (argc <= 2 && n > CORPUS_MAPS_BUILT)) {
                fprintf(stderr, "many-maps: at most %d libraries are built\n", CORPUS_MAPS_BUILT);
                return 1;
        }
        if (load(n, dir) < 0)
                return 1;
        fprintf(stderr, "maps %ld\n", count_mapped_files());
        corpus_sync();
        corpus_crash_here();
        return 0;
}
