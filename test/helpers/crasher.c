/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper: crashes in the way asked for.
 *   crasher segv | abort | bus | deep | threads N | mem MIB [random] | sparse MIB | fds N
 * With CRASHER_SYNC=1 it prints "ready" once set up and crashes when a byte arrives on stdin,
 * so a harness can time the crash precisely. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))

static void *idle_thread(void *arg) {
        for (;;)
                pause();
        return arg;
}

static void start_threads(long n) {
        for (long i = 0; i < n; i++) {
                pthread_t t;
                if (pthread_create(&t, NULL, idle_thread, NULL) != 0) {
                        perror("pthread_create");
                        exit(1);
                }
        }
}

static void fill_memory(long mib, int random) {
        size_t size = (size_t) mib << 20;
        uint64_t x = 88172645463325252ULL;
        uint8_t *p = malloc(size);

        if (!p) {
                perror("malloc");
                exit(1);
        }
        for (size_t i = 0; i < size; i += 8) {
                uint64_t v;
                if (random) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        v = x;
                } else
                        v = i * 0x9e3779b97f4a7c15ULL >> 40; /* compressible but not constant */
                memcpy(p + i, &v, 8);
        }
        /* keep it alive */
        __asm__ volatile("" : : "r"(p) : "memory");
}

/* As many as asked, or as the hard limit allows where raising it is not permitted. */
static void open_fds(long n) {
        struct rlimit rl = { (rlim_t) n + 64, (rlim_t) n + 64 };

        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        exit(1);
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        exit(1);
                n = MIN(n, (long) rl.rlim_max - 64);
        }
        for (long i = 0; i < n; i++)
                if (dup(STDIN_FILENO) < 0) {
                        perror("dup");
                        exit(1);
                }
}

static void wait_for_go(void) {
        char c;

        if (!getenv("CRASHER_SYNC"))
                return;
        printf("ready\n");
        fflush(stdout);
        if (read(STDIN_FILENO, &c, 1) != 1)
                exit(1);
}

/* "deep": the crash happens three calls deep in one of four threads, in functions with
 * recognisable names (backtrace and debugger tests look for them, innermost first). */
__attribute__((noinline)) static void cds_crash_inner(volatile int *p) {
        *p = 1;
}

__attribute__((noinline)) static void cds_crash_middle(volatile int *p) {
        cds_crash_inner(p);
        __asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) static void cds_crash_outer(void) {
        cds_crash_middle((volatile int *) 0);
        __asm__ volatile("" ::: "memory");
}

static void *crashing_thread(void *arg) {
        (void) arg;
        cds_crash_outer();
        return NULL;
}

static void crash_deep(void) {
        pthread_t t;

        start_threads(2);
        if (pthread_create(&t, NULL, crashing_thread, NULL) != 0)
                abort();
        pthread_join(t, NULL);
}

int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "segv";
        long arg = argc > 2 ? atol(argv[2]) : 0;

        if (strcmp(mode, "threads") == 0)
                start_threads(arg > 0 ? arg : 64);
        else if (strcmp(mode, "fds") == 0)
                open_fds(arg);
        else if (strcmp(mode, "mem") == 0)
                fill_memory(arg > 0 ? arg : 200, argc > 3 && strcmp(argv[3], "random") == 0);
        else if (strcmp(mode, "sparse") == 0) {
                /* mapped, never touched: the kernel sends it as zeros */
                void *p = mmap(NULL, (size_t) (arg > 0 ? arg : 1024) << 20, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (p == MAP_FAILED)
                        exit(1);
                *(volatile char *) p = 1; /* one page written: the mapping is dumped, the rest as zeros */
        }

        wait_for_go();

        if (strcmp(mode, "abort") == 0)
                abort();
        if (strcmp(mode, "deep") == 0)
                crash_deep();
        if (strcmp(mode, "bus") == 0)
                raise(SIGBUS);
        *(volatile int *) 0 = 1; /* SIGSEGV */
        return 0;
}
