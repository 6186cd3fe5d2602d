/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Memfds made ahead and bounded by seals (memfd-slot.h). Acts on the memfds given only. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "memfd-slot.h"

int memfd_slot_new(const char *name) {
        int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

        return fd < 0 ? negative_errno() : fd;
}

int memfd_slot_limit(int fd, uint64_t max) {
        if (max > (uint64_t) INT64_MAX)
                return -EFBIG;
        if (ftruncate(fd, (off_t) max) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_GROW) < 0)
                return negative_errno();
        return 0;
}

int memfd_slot_fill(int fd, const void *buf, size_t len) {
        return len > 0 ? loop_pwrite(fd, buf, len, 0) : 0;
}

int memfd_slot_finish(int fd, uint64_t len) {
        if (len > (uint64_t) INT64_MAX)
                return -EFBIG;
        if (ftruncate(fd, (off_t) len) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return negative_errno();
        return 0;
}
