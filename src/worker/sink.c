/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Dispatch to the plain, zstd or lz4 sink, and byte accounting. Worker (sandboxed): writes only
 * the output fd it is given. */
#include "build-config.h"
#include "fd-util.h"
#include "macro.h"
#include "sink.h"

int sink_new(Compression c, int level, int fd, Sink **ret) {
        switch (c) {
        case COMPRESSION_NONE:
                return sink_new_plain(fd, ret);
        case COMPRESSION_ZSTD:
                return sink_new_zstd(fd, level, ret);
        case COMPRESSION_LZ4:
#if HAVE_LZ4
                return sink_new_lz4(fd, level, ret);
#else
                return -EOPNOTSUPP; /* the configuration refuses Compress=lz4 in such a build */
#endif
        }
        return -EINVAL;
}

int sink_write(Sink *s, const uint8_t *p, size_t n) {
        int r = s->ops->write(s, p, n);
        if (r >= 0)
                s->bytes_in += n;
        return r;
}

uint64_t sink_bound(const Sink *s, uint64_t n) {
        uint64_t add = s->ops->bound(s, n);

        return add > UINT64_MAX - s->end ? UINT64_MAX : s->end + add;
}

void sink_size_hint(Sink *s, uint64_t size) {
        if (s->ops->size_hint && s->bytes_in == 0)
                s->ops->size_hint(s, size);
}

int sink_flush(Sink *s) {
        return s->ops->flush ? s->ops->flush(s) : 0;
}

int sink_finish(Sink *s) {
        return s->ops->finish(s);
}

void sink_free(Sink *s) {
        s->ops->free(s);
}

int sink_emit(Sink *s, const void *p, size_t n) {
        int r = loop_write(s->fd, p, n);
        if (r >= 0) {
                s->bytes_out += n;
                s->end += n;
        }
        return r;
}
