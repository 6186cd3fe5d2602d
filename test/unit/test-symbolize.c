/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl's re-symbolization: the parsers of the worker's frame and module lines (pure), that
 * a message without modules to look up stays as stored, and which module files it reads: this
 * test program's own file (it has DWARF: no server is needed to name a frame in it), copied into a
 * temporary directory, is read only when root or the caller owns it and no one else can write it,
 * and under a root only inside it. Each lookup runs in a child: the closed port of DEBUGINFOD_URLS
 * stops all later lookups of a run. */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-symbolize.h"
#include "tests.h"

static bool frame(const char *line, SymFrame *f) {
        return symbolize_parse_frame(line, strlen(line), f);
}

static void check_span(const char *line, size_t off, size_t len, const char *want) {
        CHECK(len == strlen(want) && memcmp(line + off, want, len) == 0);
}

static void test_frames(void) {
        const char *l0 = "#0  0x000055d87eff6155 n/a (dbgi-crash + 0x1155)";
        const char *l12 = "#12 0x00007f748b211305 __libc_start_main (libc.so.6 + 0x27305)";
        const char *odd = "#3  0x0000000000001000 f (my (odd) + 0x mod + 0xff)";
        SymFrame f;

        CHECK(frame(l0, &f));
        CHECK_EQ(f.index, 0);
        check_span(l0, f.name_off, f.name_len, "n/a");
        check_span(l0, f.module_off, f.module_len, "dbgi-crash");
        CHECK_EQ(f.offset, 0x1155);
        CHECK(frame(l12, &f));
        CHECK_EQ(f.index, 12);
        check_span(l12, f.name_off, f.name_len, "__libc_start_main");
        check_span(l12, f.module_off, f.module_len, "libc.so.6");
        CHECK_EQ(f.offset, 0x27305);
        /* the name ends at the first space, the module at the last " + 0x" */
        CHECK(frame(odd, &f));
        check_span(odd, f.name_off, f.name_len, "f");
        check_span(odd, f.module_off, f.module_len, "my (odd) + 0x mod");
        CHECK_EQ(f.offset, 0xff);
        CHECK(frame("#0  0xffffffffffffffff x (m + 0xffffffffffffffff)", &f) && f.offset == UINT64_MAX);

        CHECK(!frame("", &f));
        CHECK(!frame("#", &f));
        CHECK(!frame("Stack trace of thread 1:", &f));
        CHECK(!frame("#0  0x000055d87eff6155 n/a (dbgi-crash + 0x1155", &f));     /* no ")" */
        CHECK(!frame("#0  0x000055d87eff6155 (dbgi-crash + 0x1155)", &f));        /* no name */
        CHECK(!frame("#0  0x000055d87eff6155 n/a ( + 0x1155)", &f));              /* no module */
        CHECK(!frame("#0  0x000055d87eff6155 n/a (m + 0x)", &f));                 /* no offset */
        CHECK(!frame("#0  0x000055d87eff6155 n/a (m + 0x11g5)", &f));             /* not hex */
        CHECK(!frame("#0  0x000055d87eff6155 n/a (m + 0x10000000000000000)", &f)); /* > 64 bits */
        CHECK(!frame("#0  0x00000000000000000 n/a (m + 0x1)", &f));               /* address > 64 bits */
        CHECK(!frame("#x  0x0000000000000000 n/a (m + 0x1)", &f));
        CHECK(!frame("#1234567890 0x0000000000000000 n/a (m + 0x1)", &f)); /* too many digits */
        CHECK(!frame("#0 0000000000000000 n/a (m + 0x1)", &f));
        CHECK(!frame("#0  0x0000000000000000n/a (m + 0x1)", &f));
        CHECK(!frame(" #0  0x0000000000000000 n/a (m + 0x1)", &f));
        CHECK(!frame("#0  0x0000000000000000 a b (m + 0x1)", &f));
}

static bool module(const char *line, SymModuleLine *m) {
        return symbolize_parse_module(line, strlen(line), m);
}

static void test_modules(void) {
        const char *l = "Module /usr/lib/libc.so.6 with build-id 93ac61ec5a8eb1396f9fbd350e3169a558528a40";
        const char *spaced = "Module /opt/a with build-id b/x with build-id 00ff";
        char long_id[sizeof "Module /x with build-id " + 2 * SYMBOLIZE_BUILD_ID_MAX + 2];
        SymModuleLine m;

        CHECK(module(l, &m));
        check_span(l, m.path_off, m.path_len, "/usr/lib/libc.so.6");
        check_span(l, m.id_off, m.id_len, "93ac61ec5a8eb1396f9fbd350e3169a558528a40");
        CHECK(module(spaced, &m));
        check_span(spaced, m.path_off, m.path_len, "/opt/a with build-id b/x");
        check_span(spaced, m.id_off, m.id_len, "00ff");

        CHECK(!module("Module /usr/lib/x.so from deb x-1.0", &m));
        CHECK(!module("Module /usr/lib/x.so without build-id.", &m));
        CHECK(!module("Module x.so with build-id 00ff", &m)); /* not a path */
        CHECK(!module("Module /x with build-id 0ff", &m));    /* odd length */
        CHECK(!module("Module /x with build-id 00FF", &m));   /* the worker prints lower case */
        CHECK(!module("Module /x with build-id ", &m));
        CHECK(!module("Module /x with build-id 00ff ", &m));
        CHECK(!module("Process 1 (x) of user 0 dumped core.", &m));
        snprintf(long_id, sizeof long_id, "Module /x with build-id %0*d", (int) (2 * SYMBOLIZE_BUILD_ID_MAX), 0);
        CHECK(module(long_id, &m));
        snprintf(long_id, sizeof long_id, "Module /x with build-id %0*d", (int) (2 * SYMBOLIZE_BUILD_ID_MAX + 2), 0);
        CHECK(!module(long_id, &m));
}

/* Nothing to look up: the stored message stands, and the note says why (no server is asked). */
static void test_nothing_to_look_up(void) {
        static const char message[] = "Process 1 (x) of user 0 dumped core.\n\nModule /x without build-id.\n\n"
                                      "Stack trace of thread 1:\n#0  0x0000000000401000 n/a (x + 0x1000)\n";
        char note[SYMBOLIZE_NOTE_MAX] = "";
        char *text = (char *) "unset";
        int r;

        r = symbolize_message(message, NULL, NULL, &text, note, sizeof note);
        CHECK(r == 0 || r == -EOPNOTSUPP);
        CHECK(text == NULL);
        CHECK(note[0] != 0);
        /* a package JSON that is not valid adds no module */
        r = symbolize_message(message, "{\"/x\":", NULL, &text, note, sizeof note);
        CHECK((r == 0 || r == -EOPNOTSUPP) && text == NULL);
}

#define MARKER "symbolize_test_marker"
#define MOD "symtest-mod"
#define LOOKUP_TIMEOUT_SEC 30U

/* A function of this program that a renamed frame is named after. */
__attribute__((noinline)) void symbolize_test_marker(void);
__attribute__((noinline)) void symbolize_test_marker(void) {
        __asm__ volatile("");
}

typedef struct Self {
        char build_id[2 * 64 + 1];
        uint64_t offset; /* of the marker from the program's first mapping */
        bool found;
} Self;

static void note_build_id(Self *self, const char *p, size_t size) {
        while (size >= sizeof(ElfW(Nhdr))) {
                const ElfW(Nhdr) *n = (const void *) p;
                size_t name = (n->n_namesz + 3) & ~3U, desc = (n->n_descsz + 3) & ~3U;

                if (size < sizeof *n + name + desc)
                        return;
                if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(p + sizeof *n, "GNU", 4) == 0 &&
                    n->n_descsz > 0 && n->n_descsz <= 64) {
                        for (size_t i = 0; i < n->n_descsz; i++)
                                sprintf(self->build_id + 2 * i, "%02x", (unsigned char) p[sizeof *n + name + i]);
                        self->found = true;
                }
                p += sizeof *n + name + desc;
                size -= sizeof *n + name + desc;
        }
}

/* The first object is the program: its build-id and where the marker lies from its first page. */
static int self_object(struct dl_phdr_info *info, size_t size, void *userdata) {
        Self *self = userdata;
        uint64_t first = UINT64_MAX, page = (uint64_t) sysconf(_SC_PAGESIZE);

        (void) size;
        for (unsigned i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                if (ph->p_type == PT_LOAD && ph->p_vaddr < first)
                        first = ph->p_vaddr;
                if (ph->p_type == PT_NOTE)
                        note_build_id(self, (const char *) (info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
        }
        self->offset = (uint64_t) (uintptr_t) symbolize_test_marker - (info->dlpi_addr + (first & ~(page - 1)));
        return 1;
}

static int copy_self(const char *to) {
        char buf[65536];
        int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        ssize_t n;
        int r = 0;

        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t) n) != n)
                        r = -1;
        r = in < 0 || out < 0 || close(out) < 0 ? -1 : r;
        if (in >= 0)
                close(in);
        return r;
}

/* 1 if a frame in the module at path (under root) got the marker's name, 0 if not, -1 if the child
 * failed (a FIFO opened would block it until the alarm). */
static int renamed(const Self *self, const char *path, const char *root) {
        pid_t pid = fork();
        int status;

        if (pid == 0) {
                char message[PATH_MAX + 512], note[SYMBOLIZE_NOTE_MAX] = "";
                char *text = NULL;

                alarm(LOOKUP_TIMEOUT_SEC);
                snprintf(message, sizeof message,
                         "Process 1 (x) of user 0 dumped core.\n\nModule %s with build-id %s\n\n"
                         "Stack trace of thread 1:\n#0  0x%016llx n/a (" MOD " + 0x%llx)\n",
                         path, self->build_id, (unsigned long long) self->offset, (unsigned long long) self->offset);
                if (symbolize_message(message, NULL, root, &text, note, sizeof note) < 0)
                        _exit(2);
                _exit(text && strstr(text, "(" MOD " +") && strstr(text, " " MARKER " (") ? 0 : 1);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
                return -1;
        return WEXITSTATUS(status) == 0;
}

static char base[] = "/tmp/test-symbolize-XXXXXX";

static void test_own_file(void) {
        char out_dir[128], out[128], root[128], in_root[128], escape[256], link[128], fifo[128];
        Self self = {};

        symbolize_test_marker();
        dl_iterate_phdr(self_object, &self);
        if (!self.found) {
                fprintf(stderr, "this test program has no build-id: own-file cases skipped\n");
                return;
        }
        snprintf(out_dir, sizeof out_dir, "%s/outside", base);
        snprintf(out, sizeof out, "%s/outside/" MOD, base);
        snprintf(root, sizeof root, "%s/root", base);
        snprintf(in_root, sizeof in_root, "%s/root/usr", base);
        CHECK(mkdir(out_dir, 0755) == 0 && mkdir(root, 0755) == 0 && mkdir(in_root, 0755) == 0);
        snprintf(in_root, sizeof in_root, "%s/root/usr/" MOD, base);
        CHECK(copy_self(out) == 0 && copy_self(in_root) == 0);
        setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1); /* a closed port: only the own file names */
        snprintf(link, sizeof link, "%s/cache", base);
        setenv("DEBUGINFOD_CACHE_PATH", link, 1);

        /* the caller's file, 0755: read, the frame named (so that the refusals below can fail) */
        CHECK_EQ(renamed(&self, out, NULL), 1);
        /* writable by the group or by others: not read, looked up by build-id only (the closed port) */
        CHECK(chmod(out, 0775) == 0);
        CHECK_EQ(renamed(&self, out, NULL), 0);
        CHECK(chmod(out, 0757) == 0);
        CHECK_EQ(renamed(&self, out, NULL), 0);
        CHECK(chmod(out, 0755) == 0);
        CHECK_EQ(renamed(&self, out, NULL), 1);
        /* another user's (nobody's) file, not writable by anyone else: not read either */
        if (geteuid() == 0) {
                CHECK(chown(out, 65534, 65534) == 0);
                CHECK_EQ(renamed(&self, out, NULL), 0);
                CHECK(chown(out, 0, 0) == 0);
        }
        /* a FIFO where the module was: not opened (the child would block) */
        snprintf(fifo, sizeof fifo, "%s/fifo", base);
        CHECK(mkdir(fifo, 0755) == 0);
        snprintf(fifo, sizeof fifo, "%s/fifo/" MOD, base);
        CHECK(mkfifo(fifo, 0644) == 0);
        CHECK_EQ(renamed(&self, fifo, NULL), 0);

        /* under --root: the module's path inside the root is read */
        CHECK_EQ(renamed(&self, "/usr/" MOD, root), 1);
        /* "/.." does not leave the root (root/../outside/... is the readable copy) */
        snprintf(escape, sizeof escape, "/../outside/" MOD);
        CHECK_EQ(renamed(&self, escape, root), 0);
        snprintf(escape, sizeof escape, "/usr/../../outside/" MOD);
        CHECK_EQ(renamed(&self, escape, root), 0);
        snprintf(escape, sizeof escape, "/..%s", out);
        CHECK_EQ(renamed(&self, escape, root), 0);
        /* nor does an absolute symlink in it: it is resolved inside the root */
        snprintf(link, sizeof link, "%s/root/lib", base);
        CHECK(mkdir(link, 0755) == 0);
        snprintf(link, sizeof link, "%s/root/lib/" MOD, base);
        CHECK(symlink(out, link) == 0);
        CHECK_EQ(renamed(&self, "/lib/" MOD, root), 0);
}

int main(void) {
        char cmd[sizeof base + 16];

        test_frames();
        test_modules();
        test_nothing_to_look_up();
        if (!mkdtemp(base))
                return 1;
        test_own_file();
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", base);
        TESTS_DONE();
}
