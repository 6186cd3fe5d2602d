/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* confine.h against the real kernel, as the forwarder's decompressor uses it: a confined child
 * decompresses a real zstd core into a pipe (the output equal to zstd's), cannot open a file
 * (EACCES), and dies of SIGSYS on a call outside its list; as root it is nobody with no
 * capability. Forks; touches nothing outside its children and a memfd. $1: a zstd core. */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "confine.h"
#include "ctl-decompress.h"
#include "fd-util.h"
#include "tests.h"

#define OUTPUT_MAX (64U << 20)

static const ConfineSpec spec = {
        .id = CONFINE_NOBODY,
        .nofile = 8,
        .as = RLIM_INFINITY, /* the sanitizers' shadow memory */
        .fsize = 0,
        .nproc = 0,
};

/* What the child does once confined, by name. */
static int confined_action(const char *action, int in_fd, int out_fd) {
        if (strcmp(action, "decompress") == 0)
                return decompress_core("core.zst", in_fd, out_fd, false) < 0 ? 1 : 0;
        if (strcmp(action, "open") == 0)
                return open("/etc/passwd", O_RDONLY) < 0 && errno == EACCES ? 0 : 1;
        if (strcmp(action, "socket") == 0)
                (void) socket(AF_UNIX, SOCK_STREAM, 0); /* not listed: SIGSYS */
        if (strcmp(action, "ids") == 0)
                return geteuid() != 0 && (geteuid() == CONFINE_NOBODY || getuid() != 0) ? 0 : 1;
        return 2;
}

/* Runs action in a confined child, its output read into buf; its wait status. */
static int run_confined(const char *action, int in_fd, char *buf, size_t size, size_t *ret_len) {
        int p[2], status;
        pid_t pid;

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                if (confine_drop(&spec) < 0 || confine_lock(&spec) < 0)
                        _exit(100);
                _exit(confined_action(action, in_fd, p[1]));
        }
        close(p[1]);
        *ret_len = 0;
        for (ssize_t n; (n = read(p[0], buf + *ret_len, size - *ret_len)) > 0;)
                *ret_len += (size_t) n;
        close(p[0]);
        CHECK(waitpid(pid, &status, 0) == pid);
        return status;
}

/* The core decompressed here, unconfined, into buf: its length. */
static size_t reference(int in, char *buf) {
        _cleanup_close_ int m = memfd_create("reference", MFD_CLOEXEC);
        struct stat st;

        CHECK(m >= 0 && decompress_core("core.zst", in, m, false) == 0 && fstat(m, &st) == 0);
        CHECK(st.st_size > 0 && (uint64_t) st.st_size <= OUTPUT_MAX);
        CHECK(pread(m, buf, (size_t) st.st_size, 0) == st.st_size);
        CHECK(lseek(in, 0, SEEK_SET) == 0);
        return (size_t) st.st_size;
}

static void test_confined(const char *zst) {
        _cleanup_free_ char *buf = malloc(OUTPUT_MAX), *want = malloc(OUTPUT_MAX);
        _cleanup_close_ int in = open(zst, O_RDONLY | O_CLOEXEC);
        size_t n, wn;
        int status;

        CHECK(buf && want && in >= 0);
        if (!buf || !want || in < 0)
                return;
        wn = reference(in, want);
        status = run_confined("decompress", in, buf, OUTPUT_MAX, &n);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(n == wn && memcmp(buf, want, n) == 0);
        status = run_confined("open", in, buf, OUTPUT_MAX, &n);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        status = run_confined("socket", in, buf, OUTPUT_MAX, &n);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
        status = run_confined("ids", in, buf, OUTPUT_MAX, &n);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
        CHECK(argc == 2);
        if (argc == 2)
                test_confined(argv[1]);
        TESTS_DONE();
}
