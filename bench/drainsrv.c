/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference for latency numbers: the least a collector can do. Binds PATH, does the @@
 * handshake (KERNEL|WAIT) if the kernel sends a request, reads the core into one buffer until
 * EOF and closes. One connection at a time. With --memfd it also writes what it reads, but pages
 * of zeros, into a fresh memfd, closed after the connection: the least a collector that holds the
 * core's data in memory until the task is released pays (the memory's first touch, dear on some
 * hypervisors). With --store DIR, the least CPU a collector with a process per crash that stores
 * the core as systemd-coredump does pays: each connection gets a forked child that compresses
 * what it reads (zstd level 3, checksum) into a new file in DIR, fsyncs it, names it core.*,
 * fsyncs DIR, then closes the connection and exits; no metadata, backtrace, sandbox or journal.
 * Children are reaped (their CPU is this process's children's); several run at once. A CPU floor,
 * not a latency one: the fork is on each crash's path (a daemon forks ahead). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#define BUF_SIZE (1U << 20)
#define STORE_LEVEL 3        /* systemd-coredump's */
#define REAP_INTERVAL_MS 5   /* how often finished children are reaped while no connection comes */
/* the child's tables, as coredumpd sizes them for a tiny core (its ELF headers say how small): a
 * floor should not pay for the 768 KiB of an unknown size's */
#define STORE_TABLE_LOG 14
#define STORE_BUF_SIZE (128U << 10)

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

/* The @@ handshake (KERNEL|WAIT) if the kernel sends a request: 0, or -1. */
static int handshake(int c, uint8_t *buf) {
        struct { uint32_t size, size_ack; uint64_t mask; } req, ack = { 16, 0, 1 | 8 };
        uint32_t mark;

        if (recv(c, buf, 4, MSG_PEEK | MSG_WAITALL) == 4 && memcmp(buf, "\177ELF", 4) != 0) {
                if (read_exact(c, &req, sizeof req) < 0 || req.size != sizeof req)
                        return -1;
                if (send(c, &ack, sizeof ack, MSG_NOSIGNAL) != sizeof ack || read_exact(c, &mark, 4) < 0 || mark)
                        return -1;
        }
        return 0;
}

static int write_all(int fd, const void *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k <= 0)
                        return -1;
                p = (const char *) p + k;
                n -= (size_t) k;
        }
        return 0;
}

/* In the child of --store: the core compressed into DIR/core.N.zst, file and directory synced. */
static int store(int c, int dir, unsigned n) {
        size_t out_size = ZSTD_CStreamOutSize();
        uint8_t *out = malloc(out_size), *buf = malloc(STORE_BUF_SIZE);
        ZSTD_CCtx *z = ZSTD_createCCtx();
        char tmp[64], name[64];
        int fd, r = 0;

        snprintf(tmp, sizeof tmp, ".tmp.%u.%d", n, (int) getpid());
        snprintf(name, sizeof name, "core.%u.%d.zst", n, (int) getpid());
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || !out || !buf || !z || handshake(c, buf) < 0 ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, STORE_LEVEL)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_hashLog, STORE_TABLE_LOG)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_chainLog, STORE_TABLE_LOG)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1)))
                return -1;
        for (bool end = false; !end && r == 0;) {
                ssize_t k = read(c, buf, STORE_BUF_SIZE);
                ZSTD_inBuffer in = { buf, k > 0 ? (size_t) k : 0, 0 };
                size_t left;

                end = k <= 0;
                do {
                        ZSTD_outBuffer o = { out, out_size, 0 };
                        left = ZSTD_compressStream2(z, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
                        if (ZSTD_isError(left) || write_all(fd, out, o.pos) < 0)
                                r = -1;
                } while (r == 0 && (end ? left > 0 : in.pos < in.size));
        }
        if (r < 0 || fsync(fd) < 0 || renameat(dir, tmp, dir, name) < 0 || fsync(dir) < 0) {
                perror("drainsrv: storing a core");
                return -1;
        }
        return 0;
}

static void reap(void) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
}

static void handle(int c, uint8_t *buf, int *spool) {
        if (handshake(c, buf) < 0)
                return;
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
        bool stores = argc == 4 && strcmp(argv[1], "--store") == 0;
        const char *path = argv[argc - 1];
        int s, dir = -1;
        unsigned n = 0;

        if ((argc != 2 && !memfd && !stores) || strlen(path) >= sizeof sa.sun_path || !buf) {
                fprintf(stderr, "usage: drainsrv [--memfd | --store DIR] PATH\n");
                return 2;
        }
        if (stores && (dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                perror("drainsrv: the store");
                return 1;
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
                int c, spool;

                if (stores) {
                        struct pollfd p = { s, POLLIN, 0 };
                        reap();
                        if (poll(&p, 1, REAP_INTERVAL_MS) <= 0)
                                continue;
                }
                c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0) {
                        if (errno == EINTR)
                                continue;
                        return 1;
                }
                if (stores) {
                        pid_t pid = fork();
                        if (pid == 0)
                                _exit(store(c, dir, n) < 0 ? 1 : 0);
                        if (pid < 0)
                                perror("drainsrv: fork");
                        close(c);
                        n++;
                        continue;
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
