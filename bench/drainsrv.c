/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference for latency numbers: the least a collector can do. Binds PATH, does the @@
 * handshake (KERNEL|WAIT) if the kernel sends a request, reads the core into one buffer until
 * EOF and closes. One connection at a time. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void handle(int c, uint8_t *buf) {
        struct { uint32_t size, size_ack; uint64_t mask; } req, ack = { 16, 0, 1 | 8 };
        uint32_t mark;

        if (recv(c, buf, 4, MSG_PEEK | MSG_WAITALL) == 4 && memcmp(buf, "\177ELF", 4) != 0) {
                if (read_exact(c, &req, sizeof req) < 0 || req.size != sizeof req)
                        return;
                if (send(c, &ack, sizeof ack, MSG_NOSIGNAL) != sizeof ack || read_exact(c, &mark, 4) < 0 || mark)
                        return;
        }
        while (read(c, buf, BUF_SIZE) > 0)
                ;
}

int main(int argc, char **argv) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint8_t *buf = malloc(BUF_SIZE);
        int s;

        if (argc != 2 || strlen(argv[1]) >= sizeof sa.sun_path || !buf) {
                fprintf(stderr, "usage: drainsrv PATH\n");
                return 2;
        }
        strcpy(sa.sun_path, argv[1]);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unlink(argv[1]);
        if (s < 0 || bind(s, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(s, 128) < 0) {
                perror("drainsrv");
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0) {
                        if (errno == EINTR)
                                continue;
                        return 1;
                }
                handle(c, buf);
                close(c);
        }
}
