/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The module opener: maps lines, mount devices, refused file systems, paths resolved beneath a
 * process's root without symlinks (openat2 and the fallback walk agree), and only the very file
 * a maps line names (device and inode) is opened. Works in a scratch directory under /tmp. */
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fd-util.h"
#include "fs-kind.h"
#include "modules.h"
#include "tests.h"

#define BASE_MAX 64
static char base[BASE_MAX];

static void mk(const char *rel, const char *content) {
        char p[BASE_MAX + 64];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", base, rel);
        f = fopen(p, "w");
        if (f) {
                fputs(content, f);
                fclose(f);
        }
}

static void ln(const char *target, const char *rel) {
        char p[BASE_MAX + 64];

        snprintf(p, sizeof p, "%s/%s", base, rel);
        CHECK_EQ(symlink(target, p), 0);
}

static void test_maps_line(void) {
        char long_line[MODULE_PATH_MAX + 128];
        MapsFile mf;
        const char *l1 = "55d1c0a00000-55d1c0a01000 r--p 00000000 fe:01 1234   /usr/bin/crasher";
        const char *l2 = "7f0e8d400000-7f0e8d428000 r--p 00000000 fe:01 99 /usr/lib/libc.so.6 (deleted)";
        const char *l3 = "7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0                          [stack]";
        const char *l4 = "7f0e8d400000-7f0e8d428000 rw-p 00000000 00:00 0 ";
        const char *l5 = "7f0e8d400000-7f0e8d428000 rw-p 00000000 00:2a 0 /dev/zero";
        const char *l6 = "7f0e8d400000-7f0e8d428000 r--p 00000000 103:1f 77 /tmp/x/lib\\012.so";

        CHECK_EQ(modules_maps_line(l1, strlen(l1), &mf), 0);
        CHECK_STREQ(mf.path, "/usr/bin/crasher");
        CHECK(mf.dev == makedev(0xfe, 1) && mf.ino == 1234);
        CHECK_EQ(modules_maps_line(l2, strlen(l2), &mf), -ENOENT);
        CHECK_EQ(modules_maps_line(l3, strlen(l3), &mf), -ENOENT);
        CHECK_EQ(modules_maps_line(l4, strlen(l4), &mf), -ENOENT);
        CHECK_EQ(modules_maps_line(l5, strlen(l5), &mf), -ENOENT); /* no inode: not a file */
        CHECK_EQ(modules_maps_line(l1, 10, &mf), -ENOENT);
        /* the kernel's escape stays as it is: no file of that name is the mapped one */
        CHECK_EQ(modules_maps_line(l6, strlen(l6), &mf), 0);
        CHECK_STREQ(mf.path, "/tmp/x/lib\\012.so");
        CHECK(mf.dev == makedev(0x103, 0x1f) && mf.ino == 77);
        snprintf(long_line, sizeof long_line, "1000-2000 r--p 00000000 fe:01 5 /%0*d", MODULE_PATH_MAX, 0);
        CHECK_EQ(modules_maps_line(long_line, strlen(long_line), &mf), -ENAMETOOLONG);
}

static void test_mount_dev(void) {
        const char *mi = "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
                         "35 22 0:31 /@home /home rw,relatime shared:20 - btrfs /dev/sda1 rw\n"
                         "40 22 0:5 / /dev rw,nosuid - devtmpfs udev rw";
        dev_t d;

        CHECK_EQ(modules_mount_dev(mi, strlen(mi), 35, &d), 0);
        CHECK(d == makedev(0, 31));
        CHECK_EQ(modules_mount_dev(mi, strlen(mi), 40, &d), 0);
        CHECK(d == makedev(0, 5));
        CHECK_EQ(modules_mount_dev(mi, strlen(mi), 3, &d), -ENOENT);
        CHECK_EQ(modules_mount_dev(mi, strlen(mi), 2, &d), -ENOENT); /* a parent ID is not a mount ID */
}

static void test_mount_fstype(void) {
        const char *mi = "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
                         "35 22 0:31 /@home /home rw,relatime shared:20 master:3 - btrfs /dev/sda1 rw\n"
                         "36 22 0:60 / /tmp/a\\040-\\040b rw,nosuid - fuse.sshfs u@h: rw,user_id=1000\n"
                         "37 22 0:61 / /mnt/virt rw - virtiofs share rw\n"
                         "38 22 0:62 / /mnt/no-sep rw fuse x rw\n"
                         "39 22 0:63 / /mnt/long rw - fuse.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa x rw\n"
                         "40 22 0:64 / /mnt/last rw - fuse";
        char t[32];

        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 22, t, sizeof t), 0);
        CHECK(strcmp(t, "ext4") == 0);
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 35, t, sizeof t), 0);
        CHECK(strcmp(t, "btrfs") == 0);
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 36, t, sizeof t), 0);
        CHECK(strcmp(t, "fuse.sshfs") == 0);
        CHECK(!modules_mount_trusted_fuse(mi, strlen(mi), 36, makedev(0, 60)));
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 37, t, sizeof t), 0);
        CHECK(strcmp(t, "virtiofs") == 0);
        CHECK(modules_mount_trusted_fuse(mi, strlen(mi), 37, makedev(0, 61)));
        /* the ID of a virtiofs mount, the device of another: the ID was freed and taken since */
        CHECK(!modules_mount_trusted_fuse(mi, strlen(mi), 37, makedev(0, 60)));
        CHECK(!modules_mount_trusted_fuse(mi, strlen(mi), 99, makedev(0, 61)));
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 38, t, sizeof t), -ENOENT); /* no separator */
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 39, t, sizeof t), -ENOENT); /* too long for t */
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 40, t, sizeof t), 0);      /* the last line, unterminated */
        CHECK(strcmp(t, "fuse") == 0 && !modules_mount_trusted_fuse(mi, strlen(mi), 40, makedev(0, 64)));
        /* a length that ends inside the type: nothing past it is read */
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi) - 2, 40, t, sizeof t), 0);
        CHECK(strcmp(t, "fu") == 0);
        CHECK_EQ(modules_mount_fstype(mi, strlen(mi), 2, t, sizeof t), -ENOENT);
        /* a FUSE file system's type is "fuse" or "fuse.SUBTYPE", whatever its server names it */
        mi = "41 22 0:65 / /m rw - fuse.virtiofs x rw\n42 22 0:66 / /m rw - fuseblk x rw\n";
        CHECK(!modules_mount_trusted_fuse(mi, strlen(mi), 41, makedev(0, 65)));
        CHECK(!modules_mount_trusted_fuse(mi, strlen(mi), 42, makedev(0, 66)));
}

static void test_fs_refused(void) {
        CHECK(fs_is_kernel_interface(PROC_SUPER_MAGIC));
        CHECK(fs_is_kernel_interface(SYSFS_MAGIC));
        CHECK(fs_is_kernel_interface(DEBUGFS_MAGIC));
        CHECK(!fs_is_kernel_interface(EXT4_SUPER_MAGIC));
        CHECK(!fs_is_kernel_interface(TMPFS_MAGIC));
        CHECK(!fs_is_kernel_interface(BTRFS_SUPER_MAGIC));
}

static int stat_of(int dir, const char *path, struct stat *ret) {
        return fstatat(dir, path, ret, AT_SYMLINK_NOFOLLOW);
}

/* A maps line for path as the tree has it (its real device and inode), or for the file at
 * inode_of (a planted name). */
static size_t maps_line(char *buf, size_t size, unsigned addr, int root, const char *path, const char *inode_of) {
        struct stat st = {};

        (void) stat_of(root, inode_of ? inode_of : path + 1, &st);
        return (size_t) snprintf(buf, size, "%x000-%x000 r-xp 00000000 %x:%x %llu %s\n", addr, addr + 1,
                                 major(st.st_dev), minor(st.st_dev), (unsigned long long) st.st_ino, path);
}

static void test_walk(void) {
        char root_path[BASE_MAX + 16], p[BASE_MAX + 64];
        static const char *const symlinked[] = { "/lib/libx.so", "/abs", "/chain", "/usr/lib/rel", "/escape", "/loop" };
        struct stat want, got;
        int root, fd;

        snprintf(root_path, sizeof root_path, "%s/root", base);
        mkdir(root_path, 0755);
        mk("root/../outside", "secret");
        mkdir(strcat(strcpy(p, root_path), "/usr"), 0755);
        mkdir(strcat(strcpy(p, root_path), "/usr/lib"), 0755);
        mk("root/usr/lib/libx.so", "ELF");
        mk("root/other.so", "ELF");
        ln("usr/lib", "root/lib");
        ln("/usr/lib/libx.so", "root/abs");
        ln("abs", "root/chain");
        ln("../lib/libx.so", "root/usr/lib/rel");
        ln("../../../../../outside", "root/escape");
        ln("loop", "root/loop");
        CHECK_EQ(mkfifo(strcat(strcpy(p, root_path), "/fifo"), 0644), 0);

        root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(root >= 0 && stat_of(root, "usr/lib/libx.so", &want) == 0);
        fd = fd_walk_beneath(root, "/usr/lib/libx.so");
        CHECK(fd >= 0 && fstat(fd, &got) == 0 && got.st_ino == want.st_ino);
        if (fd >= 0)
                close(fd);
        fd = fd_walk_beneath(root, "//usr/./lib/libx.so");
        CHECK(fd >= 0);
        if (fd >= 0)
                close(fd);
        /* maps never names a file through a symlink or ".." */
        for (size_t i = 0; i < ELEMENTSOF(symlinked); i++)
                CHECK_EQ(fd_walk_beneath(root, symlinked[i]), -ELOOP);
        CHECK_EQ(fd_walk_beneath(root, "/usr/../usr/lib/libx.so"), -EXDEV);
        CHECK_EQ(fd_walk_beneath(root, "/../outside"), -EXDEV);
        CHECK_EQ(fd_walk_beneath(root, "/nothing"), -ENOENT);
        close(root);
}

/* The whole opener on the tree test_walk made: only lines whose file is the very one named. */
static void test_open(void) {
        char root_path[BASE_MAX + 16], maps[4096];
        ModuleSet *set = calloc(1, sizeof *set);
        struct stat want, got;
        size_t len = 0;
        int root;

        snprintf(root_path, sizeof root_path, "%s/root", base);
        root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(root >= 0 && set);
        if (root < 0 || !set)
                return;
        len += maps_line(maps + len, sizeof maps - len, 0x1, root, "/lib/libx.so", "usr/lib/libx.so");
        len += maps_line(maps + len, sizeof maps - len, 0x2, root, "/abs", "usr/lib/libx.so");
        len += maps_line(maps + len, sizeof maps - len, 0x3, root, "/other.so", "usr/lib/libx.so");
        len += maps_line(maps + len, sizeof maps - len, 0x4, root, "/fifo", NULL);
        len += maps_line(maps + len, sizeof maps - len, 0x5, root, "/usr/lib/libx.so", NULL);
        len += maps_line(maps + len, sizeof maps - len, 0x6, root, "/other.so", NULL);
        /* the set need not be zeroed (the collector's is not): the counts start afresh */
        memset(set, 0xff, sizeof *set);
        CHECK_EQ(modules_open(&(ModulesSource) { .root = root, .maps = maps, .maps_len = len }, set), 2);
        /* from the highest address down */
        CHECK_STREQ(set->entries[0].path, "/other.so");
        CHECK_STREQ(set->entries[1].path, "/usr/lib/libx.so");
        /* a symlink to the file, a name of another file and a FIFO: refused, counted */
        CHECK_EQ(set->refused, 3);
        CHECK_EQ(set->omitted, 0);
        CHECK(set->first_refusal < 0 && set->first_refused[0] == '/');
        CHECK(stat_of(root, "usr/lib/libx.so", &want) == 0 && set->n == 2 && fstat(set->fds[1], &got) == 0 &&
              got.st_ino == want.st_ino);
        CHECK((fcntl(set->fds[1], F_GETFL) & O_ACCMODE) == O_RDONLY);
        modules_close(set);
        close(root);
        free(set);
}

#define MANY_FILES 200 /* more than MODULES_MAX */
#define MANY_EXE 150    /* the executable is one of them, in the middle of maps */

/* Past MODULES_MAX: the executable first, then from the highest address down (the order mmap()
 * gave them out: libraries linked at start before dlopen()ed ones); the rest counted. */
static void test_bound(void) {
        char dir[BASE_MAX + 32], rel[64], path[32], target[64];
        size_t size = MANY_FILES * 3 * 128, len = 0;
        _cleanup_free_ char *maps = malloc(size);
        ModuleSet *set = calloc(1, sizeof *set);
        int root;

        snprintf(dir, sizeof dir, "%s/many", base);
        mkdir(dir, 0755);
        mkdir(strcat(dir, "/root"), 0755);
        root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(maps && set && root >= 0);
        if (!maps || !set || root < 0)
                return;
        for (unsigned i = 0; i < MANY_FILES; i++) {
                snprintf(rel, sizeof rel, "many/root/lib%03u.so", i);
                mk(rel, "ELF");
        }
        /* a file mapped again apart from its other mappings is still one file left out */
        len += maps_line(maps + len, size - len, 0x50, root, "/lib003.so", NULL);
        for (unsigned i = 0; i < MANY_FILES; i++) {
                snprintf(path, sizeof path, "/lib%03u.so", i);
                /* two mappings of each file, as ld.so makes them */
                for (unsigned j = 0; j < 2; j++)
                        len += maps_line(maps + len, size - len, 0x100 + 2 * i + j, root, path, NULL);
        }
        snprintf(target, sizeof target, "/lib%03u.so", MANY_EXE);
        CHECK_EQ(modules_open(&(ModulesSource) { .root = root, .exe = target, .maps = maps, .maps_len = len }, set),
                 MODULES_MAX);
        CHECK_EQ(set->omitted, MANY_FILES - MODULES_MAX);
        CHECK_EQ(set->refused, 0);
        CHECK_STREQ(set->entries[0].path, target);
        CHECK_STREQ(set->entries[1].path, "/lib199.so");
        CHECK_STREQ(set->entries[2].path, "/lib198.so");
        /* the lowest addresses are the ones left out; the executable is not among them */
        for (size_t i = 0; i < set->n; i++)
                CHECK(strcmp(set->entries[i].path, "/lib072.so") >= 0);
        modules_close(set);
        close(root);
        free(set);
}

static void test_path_in_root(void) {
        CHECK_STREQ(modules_path_in_root("/srv/root", "/srv/root/usr/bin/x"), "/usr/bin/x");
        CHECK_STREQ(modules_path_in_root("/srv/root/", "/srv/root/usr/bin/x"), "/usr/bin/x");
        CHECK_STREQ(modules_path_in_root("/srv/root", "/srv/rootfs/usr/bin/x"), "/srv/rootfs/usr/bin/x");
        CHECK_STREQ(modules_path_in_root("/srv/root", "/srv/root"), "/srv/root");
        CHECK_STREQ(modules_path_in_root("/", "/usr/bin/x"), "/usr/bin/x");
        CHECK_STREQ(modules_path_in_root(NULL, "/usr/bin/x"), "/usr/bin/x");
}

int main(void) {
        char cmd[BASE_MAX + 16];

        snprintf(base, sizeof base, "/tmp/test-modules.XXXXXX");
        if (!mkdtemp(base))
                return 1;
        test_maps_line();
        test_path_in_root();
        test_mount_dev();
        test_mount_fstype();
        test_fs_refused();
        test_walk();
        test_open();
        test_bound();
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", base);
        TESTS_DONE();
}
