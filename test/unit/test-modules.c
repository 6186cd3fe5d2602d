/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's module opener: maps lines, and paths resolved beneath a process's root (the
 * kernel's openat2 and our fallback walk agree; nothing resolves out of the root; only regular
 * files are opened). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

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

static void test_maps_path(void) {
        char b[MODULE_PATH_MAX];
        const char *l1 = "55d1c0a00000-55d1c0a01000 r--p 00000000 fe:01 1234   /usr/bin/crasher";
        const char *l2 = "7f0e8d400000-7f0e8d428000 r--p 00000000 fe:01 99 /usr/lib/libc.so.6 (deleted)";
        const char *l3 = "7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0                          [stack]";
        const char *l4 = "7f0e8d400000-7f0e8d428000 rw-p 00000000 00:00 0 ";

        CHECK_EQ(modules_maps_path(l1, strlen(l1), b, sizeof b), 0);
        CHECK_STREQ(b, "/usr/bin/crasher");
        CHECK_EQ(modules_maps_path(l2, strlen(l2), b, sizeof b), -ENOENT);
        CHECK_EQ(modules_maps_path(l3, strlen(l3), b, sizeof b), -ENOENT);
        CHECK_EQ(modules_maps_path(l4, strlen(l4), b, sizeof b), -ENOENT);
        CHECK_EQ(modules_maps_path(l1, 10, b, sizeof b), -ENOENT);
        CHECK_EQ(modules_maps_path(l1, strlen(l1), b, 8), -ENAMETOOLONG);
}

static int inode_of(int fd, ino_t *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -1;
        *ret = st.st_ino;
        return 0;
}

static void test_walk(void) {
        char root_path[BASE_MAX + 16], proc[BASE_MAX + 64];
        static const char *const same[] = {
                "/usr/lib/libx.so", "/lib/libx.so", "/abs", "/usr/../usr/lib/./libx.so", "/../../usr/lib/libx.so",
                "/chain", "/usr/lib/rel",
        };
        int root, fd;
        ino_t want = 0, got = 0;
        ModuleSet *set = calloc(1, sizeof *set);
        char maps[1024];

        snprintf(root_path, sizeof root_path, "%s/root", base);
        mkdir(root_path, 0755);
        mk("root/../outside", "secret");
        mkdir(strcat(strcpy(proc, root_path), "/usr"), 0755);
        mkdir(strcat(strcpy(proc, root_path), "/usr/lib"), 0755);
        mkdir(strcat(strcpy(proc, root_path), "/etc"), 0755);
        mk("root/usr/lib/libx.so", "ELF");
        ln("usr/lib", "root/lib");
        ln("/usr/lib/libx.so", "root/abs");
        ln("abs", "root/chain");
        ln("../lib/libx.so", "root/usr/lib/rel");
        ln("../../../../../outside", "root/escape");
        ln("/etc/../../outside", "root/escape2");
        ln("loop", "root/loop");
        CHECK_EQ(mkfifo(strcat(strcpy(proc, root_path), "/fifo"), 0644), 0);

        root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        fd = openat(root, "usr/lib/libx.so", O_PATH | O_CLOEXEC);
        CHECK(fd >= 0 && inode_of(fd, &want) == 0);
        close(fd);
        for (size_t i = 0; i < ELEMENTSOF(same); i++) {
                fd = modules_walk_beneath(root, same[i]);
                CHECK(fd >= 0 && inode_of(fd, &got) == 0 && got == want);
                if (fd < 0)
                        fprintf(stderr, "walk %s: %d\n", same[i], fd);
                if (fd >= 0)
                        close(fd);
        }
        /* escapes resolve inside the root, where there is no such file */
        CHECK_EQ(modules_walk_beneath(root, "/escape"), -ENOENT);
        CHECK_EQ(modules_walk_beneath(root, "/escape2"), -ENOENT);
        CHECK_EQ(modules_walk_beneath(root, "/loop"), -ELOOP);

        /* the whole opener, through a fake /proc/PID whose "root" points at the tree */
        snprintf(proc, sizeof proc, "%s/proc", base);
        mkdir(proc, 0755);
        ln(root_path, "proc/root");
        snprintf(maps, sizeof maps,
                 "1000-2000 r-xp 00000000 fe:01 1 /lib/libx.so\n"
                 "2000-3000 r--p 00001000 fe:01 1 /lib/libx.so\n"
                 "3000-4000 r--p 00000000 fe:01 2 /escape\n"
                 "4000-5000 r--p 00000000 fe:01 3 /fifo\n"
                 "5000-6000 r--p 00000000 fe:01 4 /usr/lib/libx.so\n");
        fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK_EQ(modules_open(fd, maps, strlen(maps), set), 2); /* /lib/libx.so once, /usr/lib/libx.so; no FIFO */
        CHECK_STREQ(set->entries[0].path, "/lib/libx.so");
        CHECK(set->n == 2 && inode_of(set->fds[1], &got) == 0 && got == want);
        CHECK((fcntl(set->fds[0], F_GETFL) & O_ACCMODE) == O_RDONLY);
        modules_close(set);
        close(fd);
        close(root);
        free(set);
}

int main(void) {
        char cmd[BASE_MAX + 16];

        snprintf(base, sizeof base, "/tmp/test-modules.XXXXXX");
        if (!mkdtemp(base))
                return 1;
        test_maps_path();
        test_walk();
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", base);
        TESTS_DONE();
}
