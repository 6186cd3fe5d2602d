/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Maps one page of a file and crashes (SIGSEGV): `map-crash FILE [PAGE]` maps page PAGE (0 if
 * not given: a page past the first keeps the kernel's own dump from reading the file, which it
 * does for the first page of a mapping to look for an ELF header) and closes the file (the
 * mapping keeps it). Prints "mapped"; with
 * MAP_CRASH_WAIT set, then waits for a byte on stdin before crashing. Test helper: touches only
 * FILE and its own memory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
        long page = sysconf(_SC_PAGESIZE);
        off_t index = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
        int fd;

        if (argc < 2)
                return 2;
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[1]);
                return 1;
        }
        if (mmap(NULL, (size_t) page, PROT_READ, MAP_PRIVATE, fd, index * page) == MAP_FAILED) {
                perror("mmap");
                return 1;
        }
        close(fd);
        printf("mapped\n");
        fflush(stdout);
        if (getenv("MAP_CRASH_WAIT")) {
                char c;
                (void) read(STDIN_FILENO, &c, 1);
        }
        *(volatile int *) 0 = 0;
        return 0;
}
