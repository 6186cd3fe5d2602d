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
        /* from the highest address down: /usr/lib/libx.so, then /lib/libx.so once; no FIFO */
        CHECK_EQ(modules_open(fd, maps, strlen(maps), set), 2);
        CHECK_STREQ(set->entries[0].path, "/usr/lib/libx.so");
        CHECK_STREQ(set->entries[1].path, "/lib/libx.so");
        CHECK_EQ(set->omitted, 0);
        CHECK(set->n == 2 && inode_of(set->fds[0], &got) == 0 && got == want);
        CHECK((fcntl(set->fds[0], F_GETFL) & O_ACCMODE) == O_RDONLY);
        modules_close(set);
        close(fd);
        close(root);
        free(set);
}

#define MANY_FILES 200 /* more than MODULES_MAX */
#define MANY_EXE 150    /* the executable is one of them, in the middle of maps */

/* Past MODULES_MAX: the executable first, then from the highest address down (the order mmap()
 * gave them out: libraries linked at start before dlopen()ed ones); the rest counted. */
static void test_bound(void) {
        char dir[BASE_MAX + 32], rel[64], line[128], target[64];
        size_t size = MANY_FILES * 2 * sizeof line, len = 0;
        _cleanup_free_ char *maps = malloc(size);
        ModuleSet *set = calloc(1, sizeof *set);
        int fd;

        snprintf(dir, sizeof dir, "%s/many", base);
        mkdir(dir, 0755);
        mkdir(strcat(dir, "/root"), 0755);
        /* a file mapped again apart from its other mappings is still one file left out */
        if (maps)
                len += (size_t) snprintf(maps, size, "%x000-%x000 r--p 00000000 fe:01 %u /lib%03u.so\n", 0x50, 0x51, 3, 3);
        for (unsigned i = 0; i < MANY_FILES && maps; i++) {
                snprintf(rel, sizeof rel, "many/root/lib%03u.so", i);
                mk(rel, "ELF");
                /* two mappings of each file, as ld.so makes them */
                for (unsigned j = 0; j < 2; j++)
                        len += (size_t) snprintf(maps + len, size - len, "%x000-%x000 r-xp 00000000 fe:01 %u /lib%03u.so\n",
                                                 0x100 + 2 * i + j, 0x101 + 2 * i + j, i, i);
        }
        snprintf(dir, sizeof dir, "%s/many/proc", base);
        mkdir(dir, 0755);
        ln("../root", "many/proc/root");
        snprintf(target, sizeof target, "/lib%03u.so", MANY_EXE);
        ln(target, "many/proc/exe");
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(maps && set && fd >= 0);
        if (!maps || !set || fd < 0)
                return;
        CHECK_EQ(modules_open(fd, maps, len, set), MODULES_MAX);
        CHECK_EQ(set->omitted, MANY_FILES - MODULES_MAX);
        CHECK_STREQ(set->entries[0].path, target);
        CHECK_STREQ(set->entries[1].path, "/lib199.so");
        CHECK_STREQ(set->entries[2].path, "/lib198.so");
        /* the lowest addresses are the ones left out; the executable is not among them */
        for (size_t i = 0; i < set->n; i++)
                CHECK(strcmp(set->entries[i].path, "/lib072.so") >= 0);
        modules_close(set);
        close(fd);
        free(set);
}

int main(void) {
        char cmd[BASE_MAX + 16];

        snprintf(base, sizeof base, "/tmp/test-modules.XXXXXX");
        if (!mkdtemp(base))
                return 1;
        test_maps_path();
        test_walk();
        test_bound();
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", base);
        TESTS_DONE();
}
