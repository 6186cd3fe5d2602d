/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl info: a stored stack trace named again with libdwfl, from debug info found by the
 * modules' build-ids (debuginfod, /usr/lib/debug). Invoking user only, often root, over entries a
 * user wrote: opens a module's own file (under --root) only if root or the caller owns it and no
 * one else can write it, debug info only by build-id, and what the debuginfod client fetches into
 * its cache; never the core. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "ctl-symbolize.h"
#include "fd-util.h"
#include "json.h"
#include "time-util.h"

#if HAVE_LIBDW
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "dwfl-name.h"
#endif

#define FRAME_HEX_MAX 16U         /* digits of a 64-bit address or offset */
#define FRAME_INDEX_DIGITS_MAX 9U /* of a frame's number */
#define WITH_BUILD_ID " with build-id "

static bool is_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* len hex digits (1..FRAME_HEX_MAX) as a number. */
static bool parse_hex(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0 || len > FRAME_HEX_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (!is_hex(s[i]))
                        return false;
                v = v << 4 | (uint64_t) (s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
        }
        *ret = v;
        return true;
}

/* The last occurrence of needle in line[from, len), or SIZE_MAX. */
static size_t rfind(const char *line, size_t from, size_t len, const char *needle) {
        size_t nl = strlen(needle);

        for (size_t i = len; i >= from + nl && i > 0; i--)
                if (memcmp(line + i - nl, needle, nl) == 0)
                        return i - nl;
        return SIZE_MAX;
}

/* "#N" then spaces, "0x" and the address, one space: the index and where the name starts. */
static bool parse_frame_head(const char *line, size_t len, unsigned *ret_index, size_t *ret_name_off) {
        size_t p = 1, hex_start;
        uint64_t v;

        if (len == 0 || line[0] != '#')
                return false;
        while (p < len && p <= FRAME_INDEX_DIGITS_MAX && line[p] >= '0' && line[p] <= '9')
                p++;
        if (p == 1 || p >= len || line[p] != ' ')
                return false;
        *ret_index = (unsigned) strtoul(line + 1, NULL, 10);
        while (p < len && line[p] == ' ')
                p++;
        if (len - p < 3 || line[p] != '0' || line[p + 1] != 'x')
                return false;
        hex_start = p += 2;
        while (p < len && is_hex(line[p]))
                p++;
        if (!parse_hex(line + hex_start, p - hex_start, &v) || p >= len || line[p] != ' ')
                return false;
        *ret_name_off = p + 1;
        return true;
}

bool symbolize_parse_frame(const char *line, size_t len, SymFrame *ret) {
        SymFrame f = {};
        size_t open, plus;

        if (!parse_frame_head(line, len, &f.index, &f.name_off) || len < f.name_off + 1 || line[len - 1] != ')')
                return false;
        /* names have no spaces (the worker does not demangle), file names may: the name ends at
         * the first " (", the module at the last " + 0x" */
        open = f.name_off;
        while (open < len && line[open] != ' ')
                open++;
        if (open == f.name_off || len - open < 2 || line[open + 1] != '(')
                return false;
        plus = rfind(line, open + 2, len - 1, " + 0x");
        if (plus == SIZE_MAX || plus == open + 2 || !parse_hex(line + plus + 5, len - 1 - (plus + 5), &f.offset))
                return false;
        f.name_len = open - f.name_off;
        f.module_off = open + 2;
        f.module_len = plus - f.module_off;
        *ret = f;
        return true;
}

bool symbolize_parse_module(const char *line, size_t len, SymModuleLine *ret) {
        static const char prefix[] = "Module /";
        size_t w;

        if (len < sizeof prefix || memcmp(line, prefix, sizeof prefix - 1) != 0)
                return false;
        w = rfind(line, sizeof prefix - 2, len, WITH_BUILD_ID);
        if (w == SIZE_MAX)
                return false;
        *ret = (SymModuleLine) {
                .path_off = sizeof prefix - 2,
                .path_len = w - (sizeof prefix - 2),
                .id_off = w + strlen(WITH_BUILD_ID),
                .id_len = len - w - strlen(WITH_BUILD_ID),
        };
        for (size_t i = ret->id_off; i < len; i++)
                if (!is_hex(line[i]))
                        return false;
        return ret->id_len > 0 && ret->id_len % 2 == 0 && ret->id_len <= 2 * SYMBOLIZE_BUILD_ID_MAX;
}

bool symbolize_enabled(void) {
        const char *urls = getenv("DEBUGINFOD_URLS");

        return urls && urls[strspn(urls, " \t")];
}

#if HAVE_LIBDW

typedef struct SymModule {
        char *path;
        const char *base; /* the file name, within path */
        uint8_t build_id[SYMBOLIZE_BUILD_ID_MAX];
        size_t build_id_len;
        const char *root;
        Dwfl_Module *mod;
        uint64_t start; /* where it is placed in the Dwfl */
        bool tried, skipped, has_debug, used;
        int error; /* the lookups' failure other than "none": the server could not be reached */
} SymModule;

/* Over all the entries of one run: when lookups stop, and a server that could not be reached
 * (not asked again). */
static uint64_t run_deadline;
static int run_unreachable;

typedef struct Symbolizer {
        SymModule mods[SYMBOLIZE_MODULES_MAX];
        size_t n_mods;
        Dwfl *dwfl;
        uint64_t deadline;
        int unreachable;
        bool timed_out;
        unsigned n_renamed;
} Symbolizer;

static void symbolizer_free(Symbolizer **p) {
        Symbolizer *s = *p;

        if (!s)
                return;
        if (s->dwfl)
                dwfl_end(s->dwfl);
        for (size_t i = 0; i < s->n_mods; i++)
                free(s->mods[i].path);
        free(s);
}

static void add_module(Symbolizer *s, const char *path, size_t path_len, const char *hex, size_t hex_len) {
        SymModule *m = &s->mods[s->n_mods];

        if (s->n_mods >= SYMBOLIZE_MODULES_MAX || path_len == 0 || path[0] != '/' || hex_len == 0 || hex_len % 2 != 0 ||
            hex_len > 2 * SYMBOLIZE_BUILD_ID_MAX || memchr(path, 0, path_len))
                return;
        for (size_t i = 0; i < s->n_mods; i++)
                if (strlen(s->mods[i].path) == path_len && memcmp(s->mods[i].path, path, path_len) == 0)
                        return;
        for (size_t i = 0; i < hex_len / 2; i++) {
                uint64_t b;
                if (!parse_hex(hex + 2 * i, 2, &b))
                        return;
                m->build_id[i] = (uint8_t) b;
        }
        m->path = strndup(path, path_len);
        if (!m->path)
                return;
        m->base = strrchr(m->path, '/') + 1;
        m->build_id_len = hex_len / 2;
        s->n_mods++;
}

static void add_json_module(const char *key, const char *build_id, void *userdata) {
        if (key && build_id)
                add_module(userdata, key, strlen(key), build_id, strlen(build_id));
}

/* The modules with a build-id: the message's module lines, then COREDUMP_PACKAGE_JSON's (which
 * has those of modules with a package note, whose lines name the package instead). */
static void collect_modules(Symbolizer *s, const char *message, const char *json) {
        for (const char *p = message; *p;) {
                const char *eol = strchrnul(p, '\n');
                SymModuleLine ml;

                if (symbolize_parse_module(p, (size_t) (eol - p), &ml))
                        add_module(s, p + ml.path_off, ml.path_len, p + ml.id_off, ml.id_len);
                p = *eol ? eol + 1 : eol;
        }
        if (json)
                (void) json_object_scan(json, strlen(json), "buildId", add_json_module, s);
}

static void note_error(SymModule *m, int fd) {
        /* -1: nothing found or no debuginfod client; -ENOENT: the server has none */
        if (fd < -1 && fd != -ENOENT && m->error == 0)
                m->error = fd;
}

/* Whether root may parse the file: a regular file of root's or the caller's that no one else can
 * write (a user's entry names any file: one the user can write has whatever build-id and DWARF
 * the user chose, and can be truncated under libelf), and not larger than we read. The directories
 * do not matter: what is read is the descriptor checked, whatever is renamed over its name. */
static bool trusted_file(const struct stat *st) {
        return S_ISREG(st->st_mode) && (st->st_uid == 0 || st->st_uid == geteuid()) &&
               (st->st_mode & (S_IWGRP | S_IWOTH)) == 0 && (uint64_t) st->st_size <= SYMBOLIZE_FILE_MAX;
}

/* The module's own file, if it is there under root, trusted, and has the build-id of the crashed
 * one. Read with ELF_C_READ, not mapped: what libelf reads, it copies. */
static int open_local(SymModule *m, char **file_name, Elf **elfp) {
        _cleanup_close_ int pfd = -EBADF, fd = -EBADF;
        char proc[64];
        const void *id = NULL;
        struct stat st;
        Elf *elf;
        int n;

        pfd = fd_open_beneath(m->root, m->path);
        if (pfd < 0 || fstat(pfd, &st) < 0 || !trusted_file(&st))
                return -1;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -1;
        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf)
                return -1;
        n = (int) dwelf_elf_gnu_build_id(elf, &id);
        if (n <= 0 || (size_t) n != m->build_id_len || memcmp(id, m->build_id, m->build_id_len) != 0 ||
            !(*file_name = strdup(m->path))) {
                elf_end(elf);
                return -1;
        }
        *elfp = elf;
        return TAKE_FD(fd);
}

/* libdwfl asks for a module's file: the local one, else by build-id (/usr/lib/debug/.build-id,
 * then debuginfod). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                    Elf **elfp) {
        SymModule *m = *userdata;
        int fd = open_local(m, file_name, elfp);

        if (fd >= 0)
                return fd;
        fd = dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elfp);
        note_error(m, fd);
        return fd < 0 ? -1 : fd;
}

/* ... and for its debug info (or a dwz file's): by build-id only, /usr/lib/debug/.build-id (root's
 * directory, names of hex digits) then debuginfod. Never by the file's .gnu_debuglink or the path
 * in its .gnu_debugaltlink: those name files beside the module, in directories that may be
 * anyone's, and libdwfl open()s them as they are (a FIFO blocks, any file is read). Without a file
 * name and a debuglink, libdwfl's standard lookup searches no path. (A dwz file not found so, libdw
 * itself still opens by the .gnu_debugaltlink path when a DIE refers to it: that path comes from a
 * file we trust, or from /usr/lib/debug or debuginfod.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                          const char *file_name _unused_, const char *debuglink _unused_, GElf_Word crc _unused_,
                          char **debuginfo_file_name) {
        SymModule *m = *userdata;
        int fd;

        errno = 0;
        fd = dwfl_standard_find_debuginfo(mod, userdata, name, base, NULL, NULL, 0, debuginfo_file_name);
        note_error(m, fd);
        return fd < 0 ? -1 : fd;
}

static const Dwfl_Callbacks callbacks = {
        .find_elf = find_elf,
        .find_debuginfo = find_debuginfo,
};

/* Each module at a base of its own: libdwfl biases its file by that base minus the file's first
 * PT_LOAD address (page-aligned), which makes base + offset the address the worker named. */
static int report_modules(Symbolizer *s, const char *root) {
        dwfl_report_begin(s->dwfl);
        for (size_t i = 0; i < s->n_mods; i++) {
                SymModule *m = &s->mods[i];
                void **userdata = NULL;

                m->root = root;
                m->start = (i + 1) * SYMBOLIZE_MODULE_SPAN;
                m->mod = dwfl_report_module(s->dwfl, m->path, m->start, m->start + SYMBOLIZE_MODULE_SPAN);
                if (!m->mod || dwfl_module_report_build_id(m->mod, m->build_id, m->build_id_len, 0) < 0)
                        return -ENOMEM;
                (void) dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
                *userdata = m;
        }
        return dwfl_report_end(s->dwfl, NULL, NULL) == 0 ? 0 : -ENOMEM;
}

/* Looks the module up once, unless the deadline passed or the server could not be reached. */
static void load_module(Symbolizer *s, SymModule *m) {
        Dwarf_Addr bias;

        if (m->tried)
                return;
        m->tried = true;
        if (s->unreachable < 0 || now_usec(CLOCK_MONOTONIC) > s->deadline) {
                s->timed_out = s->unreachable == 0;
                m->skipped = true;
                return;
        }
        m->has_debug = dwfl_module_getdwarf(m->mod, &bias) != NULL;
        if (m->error < 0 && s->unreachable == 0)
                s->unreachable = m->error;
}

static SymModule *module_named(Symbolizer *s, const char *base, size_t len) {
        for (size_t i = 0; i < s->n_mods; i++)
                if (strlen(s->mods[i].base) == len && memcmp(s->mods[i].base, base, len) == 0)
                        return &s->mods[i];
        return NULL;
}

/* The frame's new name, or NULL to keep the stored one. */
static const char *frame_name(Symbolizer *s, const char *line, const SymFrame *f) {
        SymModule *m = module_named(s, line + f->module_off, f->module_len);
        const char *name;

        if (!m || f->offset >= SYMBOLIZE_MODULE_SPAN)
                return NULL;
        m->used = true;
        load_module(s, m);
        if (m->skipped)
                return NULL;
        /* a caller's frame holds a return address: name the call before it, as the worker did */
        name = module_function_name(m->mod, m->start + f->offset - (f->index > 0 && f->offset > 0 ? 1 : 0));
        return name && name[0] && strlen(name) <= SYMBOLIZE_NAME_MAX ? name : NULL;
}

static void rewrite_line(Symbolizer *s, FILE *out, const char *line, size_t len) {
        const char *name = NULL;
        SymFrame f;

        if (s->n_renamed < SYMBOLIZE_FRAMES_MAX && symbolize_parse_frame(line, len, &f))
                name = frame_name(s, line, &f);
        if (!name) {
                fwrite(line, 1, len, out);
                return;
        }
        s->n_renamed++;
        fwrite(line, 1, f.name_off, out);
        fputs(name, out);
        fwrite(line + f.name_off + f.name_len, 1, len - f.name_off - f.name_len, out);
}

static int rewrite(Symbolizer *s, const char *message, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        if (!out)
                return -ENOMEM;
        for (const char *p = message; *p;) {
                const char *eol = strchrnul(p, '\n');

                rewrite_line(s, out, p, (size_t) (eol - p));
                if (*eol)
                        fputc('\n', out);
                p = *eol ? eol + 1 : eol;
        }
        if (fclose(out) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

/* "; none found for a.so, b.so" over the modules the frames use; cut short with "..." to fit. */
static void append_missing(const Symbolizer *s, char *note, size_t size) {
        static const char more[] = "...";
        size_t o = strlen(note);
        bool any = false;

        for (size_t i = 0; i < s->n_mods; i++) {
                const SymModule *m = &s->mods[i];
                int w;

                if (!m->used || m->has_debug)
                        continue;
                w = snprintf(note + o, size - o, "%s%s", any ? ", " : "; none found for ", m->base);
                if (w < 0 || (size_t) w >= size - o) {
                        if (size >= sizeof more)
                                memcpy(note + size - sizeof more, more, sizeof more);
                        return;
                }
                o += (size_t) w;
                any = true;
        }
}

static void make_note(const Symbolizer *s, char *note, size_t size) {
        if (s->unreachable < 0) {
                snprintf(note, size, "DEBUGINFOD_URLS could not be reached (%s): the trace as stored",
                         strerror(-s->unreachable));
                return;
        }
        if (s->timed_out)
                snprintf(note, size, "frames named again from debug info found by build-id (DEBUGINFOD_URLS), "
                         "modules after %" PRIu64 " s not looked up", SYMBOLIZE_DEADLINE_USEC / USEC_PER_SEC);
        else
                snprintf(note, size, "frames named again from debug info found by build-id (DEBUGINFOD_URLS)");
        append_missing(s, note, size);
}

int symbolize_message(const char *message, const char *package_json, const char *root, char **ret_text, char *note,
                      size_t note_size) {
        _cleanup_(symbolizer_free) Symbolizer *s = calloc(1, sizeof(Symbolizer));
        _cleanup_free_ char *text = NULL;
        int r;

        *ret_text = NULL;
        if (!s)
                return -ENOMEM;
        s->unreachable = run_unreachable;
        if (s->unreachable < 0) {
                make_note(s, note, note_size);
                return 0;
        }
        collect_modules(s, message, package_json);
        if (s->n_mods == 0) {
                snprintf(note, note_size, "no module with a build-id to look up (DEBUGINFOD_URLS)");
                return 0;
        }
        /* the client's own timeouts, where the user set none (read at each download) */
        if (setenv("DEBUGINFOD_TIMEOUT", SYMBOLIZE_TIMEOUT_DEFAULT, 0) < 0 ||
            setenv("DEBUGINFOD_MAXTIME", SYMBOLIZE_MAXTIME_DEFAULT, 0) < 0)
                return -ENOMEM;
        elf_version(EV_CURRENT);
        s->dwfl = dwfl_begin(&callbacks);
        if (!s->dwfl)
                return -ENOMEM;
        r = report_modules(s, root);
        if (r < 0)
                return r;
        if (run_deadline == 0)
                run_deadline = now_usec(CLOCK_MONOTONIC) + SYMBOLIZE_DEADLINE_USEC;
        s->deadline = run_deadline;
        r = rewrite(s, message, &text);
        if (r < 0)
                return r;
        run_unreachable = s->unreachable;
        make_note(s, note, note_size);
        if (s->unreachable == 0)
                *ret_text = TAKE_PTR(text);
        return 0;
}

#else

int symbolize_message(const char *message, const char *package_json, const char *root, char **ret_text, char *note,
                      size_t note_size) {
        *ret_text = NULL;
        snprintf(note, note_size, "this coredumpctl was built without libdw: the trace as stored");
        return -EOPNOTSUPP;
}

#endif
