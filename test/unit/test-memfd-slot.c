/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memfd-slot.h against the real kernel: a slot sealed at its bound takes no byte past it, from
 * any descriptor of it; one filled and finished is as long as what was written and sealed whole.
 * Touches its own memfds only. */
#include <fcntl.h>
#include <sys/stat.h>

#include "memfd-slot.h"
#include "tests.h"

#define BOUND 8192U

static void test_bound(void) {
        _cleanup_close_ int fd = memfd_slot_new("test"), other = -EBADF;
        char path[64];
        struct stat st;

        CHECK(fd >= 0);
        CHECK_EQ(memfd_slot_limit(fd, BOUND), 0);
        CHECK(pwrite(fd, "x", 1, BOUND - 1) == 1);
        errno = 0;
        CHECK(pwrite(fd, "x", 1, BOUND) < 0 && errno == EPERM);
        CHECK(ftruncate(fd, 2 * BOUND) < 0 && errno == EPERM);
        /* the seal is the file's: another open of it cannot undo or pass it */
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        other = open(path, O_RDWR | O_CLOEXEC);
        CHECK(other >= 0);
        CHECK(pwrite(other, "x", 1, BOUND) < 0 && errno == EPERM);
        CHECK(fcntl(other, F_GET_SEALS) == F_SEAL_GROW);
        CHECK_EQ(memfd_slot_fill(fd, "hello", 5), 0);
        CHECK_EQ(memfd_slot_finish(fd, 5), 0);
        CHECK(fstat(fd, &st) == 0 && st.st_size == 5);
        CHECK(fcntl(fd, F_GET_SEALS) == (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL));
        CHECK(pwrite(fd, "y", 1, 0) < 0);
}

int main(void) {
        test_bound();
        TESTS_DONE();
}
