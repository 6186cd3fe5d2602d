/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The crash storm driver: N tiny crashes, IN_FLIGHT at a time, as fast as the collector lets
 * them go. Each crash is a fork of this small process that faults at once; its latency runs
 * from before the fork until waitpid() returns (how long the collector held it). Written in C
 * so that the driver, not the collector, is never the bottleneck (Python's fork+exec per crash
 * capped the storm near a few hundred per second).
 *
 *     stormer N IN_FLIGHT
 *
 * IN_FLIGHT lanes are processes, not threads: a fork of a multi-threaded process would carry
 * the other threads' stacks into its core (as zeros: a socket cannot seek) and stop being tiny.
 * Results go through a small shared mapping.
 *
 * Prints one line "PID LATENCY_US" per crash, then "storm N crashes in S s". Exits non-zero
 * only if it could not run the storm (a child that did not die of SIGSEGV counts as an error). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define IN_FLIGHT_MAX 64
#define CRASHES_MAX 1000000

struct shared {
        atomic_uint next_crash;
        atomic_uint failures;
        unsigned total;
        struct { pid_t pid; uint32_t lat_us; } crash[];
};

static struct shared *sh;

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void crash_now(void) {
        *(volatile int *) 0 = 0;
        _exit(1);
}

static void lane(void) {
        for (;;) {
                unsigned i = atomic_fetch_add(&sh->next_crash, 1);
                uint64_t t0;
                int status;
                pid_t pid;

                if (i >= sh->total)
                        _exit(0);
                t0 = now_ns();
                pid = fork();
                if (pid < 0) {
                        atomic_fetch_add(&sh->failures, 1);
                        continue;
                }
                if (pid == 0)
                        crash_now();
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                sh->crash[i].pid = pid;
                sh->crash[i].lat_us = (uint32_t) ((now_ns() - t0) / 1000);
                if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
                        atomic_fetch_add(&sh->failures, 1);
        }
}

int main(int argc, char **argv) {
        pid_t lanes[IN_FLIGHT_MAX];
        unsigned total, in_flight;
        uint64_t t0, t1;
        size_t size;

        if (argc != 3 || (total = (unsigned) strtoul(argv[1], NULL, 10)) == 0 || total > CRASHES_MAX ||
            (in_flight = (unsigned) strtoul(argv[2], NULL, 10)) == 0 || in_flight > IN_FLIGHT_MAX) {
                fprintf(stderr, "usage: stormer N(1..%u) IN_FLIGHT(1..%u)\n", CRASHES_MAX, IN_FLIGHT_MAX);
                return 2;
        }
        size = sizeof *sh + (size_t) total * sizeof sh->crash[0];
        sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sh == MAP_FAILED)
                return 1;
        sh->total = total;
        fflush(stdout);
        t0 = now_ns();
        for (unsigned i = 0; i < in_flight; i++) {
                lanes[i] = fork();
                if (lanes[i] < 0)
                        return 1;
                if (lanes[i] == 0)
                        lane();
        }
        for (unsigned i = 0; i < in_flight; i++) {
                int status;

                while (waitpid(lanes[i], &status, 0) < 0 && errno == EINTR)
                        ;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        return 1;
        }
        t1 = now_ns();
        for (unsigned i = 0; i < total; i++)
                printf("%d %u\n", (int) sh->crash[i].pid, sh->crash[i].lat_us);
        printf("storm %u crashes in %.6f s\n", total, (double) (t1 - t0) / 1e9);
        if (sh->failures) {
                fprintf(stderr, "stormer: %u crashes did not end in SIGSEGV\n", (unsigned) sh->failures);
                return 1;
        }
        return 0;
}
