/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference for latency numbers: the least a collector can do. Binds PATH, does the @@
 * handshake (KERNEL|WAIT) if the kernel sends a request, reads the core into one buffer until
 * EOF and closes. One connection at a time. With --memfd it also writes what it reads, but pages
 * of zeros, into a fresh memfd, closed after the connection: the least a collector that holds the
 * core's data in memory until the task is released pays (the memory's first touch, dear on some
 * hypervisors). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BUF_SIZE (1U << 20)

static int read_exact(int fd, void *p, size_t n) {
        size_t got = 0;
        while (got < n) {
                ssize_t k = recv(fd, (char *) p + got, n - got, 0);
                if (k <= 0)
                        return -1;
                got += (size_t) k;
        }
        return 0;
}

#define PAGE 4096U

static bool zero_page(const uint8_t *p, size_t n) {
        static const uint8_t zeros[PAGE];
        return n == PAGE && memcmp(p, zeros, PAGE) == 0;
}

static void put(int *fd, const uint8_t *p, size_t n) {
        while (*fd >= 0 && n > 0) {
                ssize_t k = write(*fd, p, n);
                if (k <= 0) { /* the reference would be drain-only from here: say so */
                        perror("drainsrv: writing the memfd");
                        close(*fd);
                        *fd = -1;
                        return;
                }
                p += k;
                n -= (size_t) k;
        }
}

/* The n bytes at stream offset off, at p, into fd (the memfd), in runs between whole pages of
 * zeros of the stream (which a spool leaves out); nothing more once a write failed. */
static void keep(int *fd, const uint8_t *p, size_t n, uint64_t off) {
        size_t run = 0; /* bytes of data before p + done not written yet */

        for (size_t done = 0; done < n;) {
                size_t piece = PAGE - (size_t) ((off + done) % PAGE);
                if (piece > n - done)
                        piece = n - done;
                if (zero_page(p + done, piece)) {
                        put(fd, p + done - run, run);
                        run = 0;
                } else
                        run += piece;
                done += piece;
        }
        put(fd, p + n - run, run);
}

static void handle(int c, uint8_t *buf, int *spool) {
        struct { uint32_t size, size_ack; uint64_t mask; } req, ack = { 16, 0, 1 | 8 };
        uint32_t mark;

        if (recv(c, buf, 4, MSG_PEEK | MSG_WAITALL) == 4 && memcmp(buf, "\177ELF", 4) != 0) {
                if (read_exact(c, &req, sizeof req) < 0 || req.size != sizeof req)
                        return;
                if (send(c, &ack, sizeof ack, MSG_NOSIGNAL) != sizeof ack || read_exact(c, &mark, 4) < 0 || mark)
                        return;
        }
        for (uint64_t off = 0;;) {
                ssize_t n = read(c, buf, BUF_SIZE);
                if (n <= 0)
                        break;
                keep(spool, buf, (size_t) n, off);
                off += (uint64_t) n;
        }
}

int main(int argc, char **argv) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint8_t *buf = malloc(BUF_SIZE);
        bool memfd = argc == 3 && strcmp(argv[1], "--memfd") == 0;
        const char *path = argv[argc - 1];
        int s;

        if ((argc != 2 && !memfd) || strlen(path) >= sizeof sa.sun_path || !buf) {
                fprintf(stderr, "usage: drainsrv [--memfd] PATH\n");
                return 2;
        }
        strcpy(sa.sun_path, path);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unlink(path);
        if (s < 0 || bind(s, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(s, 128) < 0) {
                perror("drainsrv");
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                int c = accept4(s, NULL, NULL, SOCK_CLOEXEC), spool;
                if (c < 0) {
                        if (errno == EINTR)
                                continue;
                        return 1;
                }
                spool = memfd ? memfd_create("drainsrv-spool", MFD_CLOEXEC) : -1;
                if (memfd && spool < 0) {
                        perror("drainsrv: memfd_create");
                        return 1;
                }
                handle(c, buf, &spool);
                close(c);
                if (spool >= 0)
                        close(spool);
        }
}
