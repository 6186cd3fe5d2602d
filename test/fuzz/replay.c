/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs every file of the given directories (or the given files) through the fuzz target once:
 * the committed corpus as a regression test, without libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define INPUT_MAX (16U << 20)

static int run_file(const char *path) {
        FILE *f = fopen(path, "rbe");
        uint8_t *buf;
        size_t n;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        buf = malloc(INPUT_MAX);
        if (!buf) {
                fclose(f);
                return -1;
        }
        n = fread(buf, 1, INPUT_MAX, f);
        fclose(f);
        /* a copy of exactly n bytes, so reads past the input are caught by ASan */
        uint8_t *exact = malloc(n ? n : 1);
        if (!exact) {
                free(buf);
                return -1;
        }
        memcpy(exact, buf, n);
        free(buf);
        (void) LLVMFuzzerTestOneInput(exact, n);
        free(exact);
        return 0;
}

static int run_dir(const char *dir, unsigned *count) {
        struct dirent **list;
        int n = scandir(dir, &list, NULL, alphasort), r = 0;

        if (n < 0) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        for (int i = 0; i < n; i++) {
                char path[4096];
                if (list[i]->d_name[0] != '.' && snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) < (int) sizeof path) {
                        if (run_file(path) < 0)
                                r = -1;
                        else
                                (*count)++;
                }
                free(list[i]);
        }
        free(list);
        return r;
}

int main(int argc, char **argv) {
        unsigned count = 0;
        int r = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) < 0 : run_file(argv[i]) < 0)
                        r = 1;
                else if (!S_ISDIR(st.st_mode))
                        count++;
        }
        printf("%u inputs replayed\n", count);
        if (count == 0) {
                fprintf(stderr, "no inputs: the corpus is missing\n");
                return 1;
        }
        return r;
}
