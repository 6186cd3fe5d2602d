/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A FUSE server for the tests that stalls: one file, "f"; its first open is answered (the
 * hostile user's own program maps it), every later open and every read is never answered.
 * `fuse-stall MOUNTPOINT [allow_other]`. Test helper: serves only its mount. */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

static unsigned opens;

/* The point of it all: a request read and never answered. */
static void on_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        if (ino != FILE_INO)
                fuse_reply_err(req, EISDIR);
        else if (opens++ == 0)
                fuse_reply_open(req, fi);
        else
                fprintf(stderr, "fuse-stall: open from pid %d: not answering\n", (int) fuse_req_ctx(req)->pid);
}

static void on_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
        fprintf(stderr, "fuse-stall: read of %zu bytes at %lld from pid %d: not answering\n", size, (long long) off,
                (int) fuse_req_ctx(req)->pid);
}

static const struct fuse_lowlevel_ops ops = {
        .lookup = on_lookup,
        .getattr = on_getattr,
        .open = on_open,
        .read = on_read,
};

int main(int argc, char **argv) {
        char *args_v[] = { argv[0], (char *) "-o", (char *) "allow_other", NULL };
        struct fuse_args args = FUSE_ARGS_INIT(argc > 2 ? 3 : 1, args_v);
        struct fuse_session *se;
        int r = 1;

        if (argc < 2 || (argc > 2 && strcmp(argv[2], "allow_other") != 0)) {
                fprintf(stderr, "usage: %s MOUNTPOINT [allow_other]\n", argv[0]);
                return 2;
        }
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
