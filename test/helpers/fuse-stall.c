/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A FUSE server for the tests that stalls: one file, "f". Mode "open" (the default): its first
 * open is answered (the hostile user's own program maps it), every later open, every read and
 * every statfs (what a reader asks of the file system before it opens a file there) is never
 * answered. Mode "flush": every open and read is answered (the file is zeros), the first
 * FLUSH (the user's own program closing it) too, every later FLUSH never: the kernel waits for
 * that answer uninterruptibly in whoever closes a descriptor of the file; every open after the
 * first is reported on stderr.
 * `fuse-stall MOUNTPOINT [allow_other [open|flush]]`. Test helper: serves only its mount. */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <stdbool.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define FILE_INO 2
#define FILE_SIZE (64 * 1024)
#define CACHE_SECONDS 3600.0

static void fill_attr(fuse_ino_t ino, struct stat *st) {
        memset(st, 0, sizeof *st);
        st->st_ino = ino;
        st->st_uid = getuid();
        st->st_gid = getgid();
        if (ino == FUSE_ROOT_ID) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
        } else {
                st->st_mode = S_IFREG | 0644;
                st->st_nlink = 1;
                st->st_size = FILE_SIZE;
        }
}

static void on_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
        struct fuse_entry_param e = { .ino = FILE_INO, .attr_timeout = CACHE_SECONDS, .entry_timeout = CACHE_SECONDS };

        if (parent != FUSE_ROOT_ID || strcmp(name, "f") != 0) {
                fuse_reply_err(req, ENOENT);
                return;
        }
        fill_attr(FILE_INO, &e.attr);
        fuse_reply_entry(req, &e);
}

static void on_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        struct stat st;

        if (ino != FUSE_ROOT_ID && ino != FILE_INO) {
                fuse_reply_err(req, ENOENT);
                return;
        }
        fill_attr(ino, &st);
        fuse_reply_attr(req, &st, CACHE_SECONDS);
}

static bool stall_flush; /* mode "flush" */
static unsigned opens, flushes;

/* The point of it all: a request read and never answered. */
static void on_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        if (ino != FILE_INO)
                fuse_reply_err(req, EISDIR);
        else if (opens++ == 0)
                fuse_reply_open(req, fi);
        else if (stall_flush) {
                fprintf(stderr, "fuse-stall: open from pid %d: answered\n", (int) fuse_req_ctx(req)->pid);
                fuse_reply_open(req, fi);
        }
        else
                fprintf(stderr, "fuse-stall: open from pid %d: not answering\n", (int) fuse_req_ctx(req)->pid);
}

static void on_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
        static const char zeros[FILE_SIZE];

        if (stall_flush) {
                size_t left = off < 0 || off >= FILE_SIZE ? 0 : (size_t) (FILE_SIZE - off);

                fuse_reply_buf(req, left > 0 ? zeros + off : zeros, size < left ? size : left);
                return;
        }
        fprintf(stderr, "fuse-stall: read of %zu bytes at %lld from pid %d: not answering\n", size, (long long) off,
                (int) fuse_req_ctx(req)->pid);
}

static void on_statfs(fuse_req_t req, fuse_ino_t ino) {
        struct statvfs st = { .f_bsize = 4096, .f_namemax = 255 };

        if (stall_flush)
                fuse_reply_statfs(req, &st);
        else
                fprintf(stderr, "fuse-stall: statfs from pid %d: not answering\n", (int) fuse_req_ctx(req)->pid);
}

static void on_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        if (flushes++ == 0 || !stall_flush)
                fuse_reply_err(req, 0);
        else
                fprintf(stderr, "fuse-stall: flush from pid %d: not answering\n", (int) fuse_req_ctx(req)->pid);
}

static const struct fuse_lowlevel_ops ops = {
        .lookup = on_lookup,
        .getattr = on_getattr,
        .open = on_open,
        .read = on_read,
        .flush = on_flush,
        .statfs = on_statfs,
};

int main(int argc, char **argv) {
        char *args_v[] = { argv[0], (char *) "-o", (char *) "allow_other", NULL };
        struct fuse_args args = FUSE_ARGS_INIT(argc > 2 ? 3 : 1, args_v);
        struct fuse_session *se;
        int r = 1;

        if (argc < 2 || argc > 4 || (argc > 2 && strcmp(argv[2], "allow_other") != 0) ||
            (argc > 3 && strcmp(argv[3], "open") != 0 && strcmp(argv[3], "flush") != 0)) {
                fprintf(stderr, "usage: %s MOUNTPOINT [allow_other [open|flush]]\n", argv[0]);
                return 2;
        }
        stall_flush = argc > 3 && strcmp(argv[3], "flush") == 0;
        se = fuse_session_new(&args, &ops, sizeof ops, NULL);
        if (!se)
                return 1;
        if (fuse_set_signal_handlers(se) == 0) {
                if (fuse_session_mount(se, argv[1]) == 0) {
                        printf("ready\n");
                        fflush(stdout);
                        r = fuse_session_loop(se) == 0 ? 0 : 1;
                        fuse_session_unmount(se);
                }
                fuse_remove_signal_handlers(se);
        }
        fuse_session_destroy(se);
        return r;
}
