/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl info's symbolizer child: a stored stack trace named again with libdwfl, every file
 * it reads asked of its parent by module or build-id and received as a descriptor. Runs confined
 * (confine.h: no file it can open, nobody's ids when coredumpctl is root's), because what it
 * parses was chosen by whoever wrote the entry or built the module. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl-symbolize-proto.h"
#include "fd-util.h"
#include "time-util.h"

#if HAVE_LIBDW
#include <elfutils/libdwelf.h>

#include "dwfl-name.h"

/* How long the child waits for the parent's answer to one request: a download's own bounds
 * (DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME) come first. */
#define SYM_ANSWER_TIMEOUT_MSEC (15 * 60 * 1000)

typedef struct Symbolizer {
        SymModules *mods;
        Dwfl *dwfl;
        int sock;
        uint64_t deadline;
        int unreachable;
        bool timed_out;
        unsigned n_renamed;
} Symbolizer;

static Symbolizer *the; /* libdwfl's callbacks reach it through their module's userdata only */

static int wait_readable(int fd, int timeout_msec) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_msec);
        while (r < 0 && errno == EINTR);
        return r < 0 ? negative_errno() : r == 0 ? -ETIMEDOUT : 0;
}

/* One file from the parent: its descriptor, -ENOENT if there is none, or the lookup's error. */
static int ask(Symbolizer *s, SymWant want, uint32_t module, const uint8_t *id, size_t id_len) {
        SymRequest req = { .hdr = { PROTO_MAGIC, MSG_SYM_REQUEST }, .want = want, .module = module };
        SymReply reply;
        uint32_t type;
        int fd = -EBADF, r;

        if (id_len == 0 || id_len > sizeof req.build_id)
                return -ENOENT;
        req.build_id_len = (uint32_t) id_len;
        memcpy(req.build_id, id, id_len);
        r = proto_send(s->sock, &req, sizeof req, NULL, 0);
        r = r ?: wait_readable(s->sock, SYM_ANSWER_TIMEOUT_MSEC);
        r = r ?: proto_peek_type(s->sock, &type);
        if (r < 0)
                return r;
        if (type == MSG_SYM_FILE) {
                r = proto_recv(s->sock, MSG_SYM_FILE, &reply, sizeof reply, &fd, 1);
                return r < 0 ? r : reply.error == 0 ? fd : (safe_close(fd), -EPROTO);
        }
        r = proto_recv(s->sock, MSG_SYM_NONE, &reply, sizeof reply, NULL, 0);
        return r < 0 ? r : reply.error < 0 ? reply.error : -EPROTO;
}

/* Whether elf carries the build-id id. */
static bool elf_has_build_id(Elf *elf, const uint8_t *id, size_t len) {
        const void *got = NULL;
        ssize_t n = dwelf_elf_gnu_build_id(elf, &got);

        return n > 0 && (size_t) n == len && memcmp(got, id, len) == 0;
}

/* A descriptor's ELF file, if it has the build-id asked for (what the parent opened was chosen by
 * whoever wrote the entry or the module's directory). */
static bool fd_has_build_id(int fd, const uint8_t *id, size_t len) {
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        bool ok = elf && elf_has_build_id(elf, id, len);

        if (elf)
                elf_end(elf);
        return ok;
}

static void note_error(SymModule *m, int r) {
        /* -ENOENT: nothing found; anything else: the lookup failed (no server reached) */
        if (r < 0 && r != -ENOENT && m->error == 0)
                m->error = r;
}

/* libdwfl asks for a module's file: from the parent (its own, else by build-id), read with
 * ELF_C_READ (what libelf reads it copies) and used only with the crashed module's build-id. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                    Elf **elfp) {
        SymModule *m = *userdata;
        _cleanup_close_ int fd = ask(the, SYM_WANT_ELF, (uint32_t) (m - the->mods->items), m->build_id, m->build_id_len);
        Elf *elf;

        *file_name = NULL; /* never a name libdwfl would open by itself */
        *elfp = NULL;
        note_error(m, fd);
        if (fd < 0)
                return -1;
        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf || !elf_has_build_id(elf, m->build_id, m->build_id_len) || !(*file_name = strdup(m->path))) {
                if (elf)
                        elf_end(elf);
                return -1;
        }
        *elfp = elf;
        return TAKE_FD(fd);
}

/* ... and for its debug info, or the dwz file its debug info refers to: by build-id only. libdwfl
 * asks for the dwz file once the module's Dwarf is loaded (find_debug_altlink()), for the debug
 * info while it is not (its debug bias unknown, -1). A module whose debug info was not found is
 * not asked for again (libdwfl asks twice: for the Dwarf, for the symbol table). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                          const char *file_name _unused_, const char *debuglink _unused_, GElf_Word crc _unused_,
                          char **debuginfo_file_name) {
        SymModule *m = *userdata;
        const void *id = m->build_id;
        size_t len = m->build_id_len;
        SymWant want = SYM_WANT_DEBUG;
        Dwarf_Addr dwbias = (Dwarf_Addr) -1, b;
        int fd;

        *debuginfo_file_name = NULL;
        (void) dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL);
        if (dwbias != (Dwarf_Addr) -1) {
                Dwarf *dw = dwfl_module_getdwarf(mod, &b); /* loaded already: only returned */
                const char *altname;
                ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &altname, &id) : -1;

                if (n <= 0)
                        return -1;
                len = (size_t) n;
                want = SYM_WANT_ALT;
        } else if (m->debug_refused)
                return -1;
        fd = ask(the, want, (uint32_t) (m - the->mods->items), id, len);
        note_error(m, fd);
        if (fd >= 0 && !fd_has_build_id(fd, id, len))
                fd = safe_close(fd);
        if (fd < 0 && want == SYM_WANT_DEBUG)
                m->debug_refused = true;
        return fd < 0 ? -1 : fd;
}

static const Dwfl_Callbacks callbacks = {
        .find_elf = find_elf,
        .find_debuginfo = find_debuginfo,
};

/* Each module at a base of its own: libdwfl biases its file by that base minus the file's first
 * PT_LOAD address (page-aligned), which makes base + offset the address the worker named. */
static int report_modules(Symbolizer *s) {
        dwfl_report_begin(s->dwfl);
        for (size_t i = 0; i < s->mods->n; i++) {
                SymModule *m = &s->mods->items[i];
                void **userdata = NULL;

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
        for (size_t i = 0; i < s->mods->n; i++)
                if (strlen(s->mods->items[i].base) == len && memcmp(s->mods->items[i].base, base, len) == 0)
                        return &s->mods->items[i];
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

static int rewrite(Symbolizer *s, const char *message, char **ret, size_t *ret_len) {
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
        *ret_len = size;
        return 0;
}

/* "; none found for a.so, b.so" over the modules the frames use; cut short with "..." to fit. */
static void append_missing(const Symbolizer *s, char *note, size_t size) {
        static const char more[] = "...";
        size_t o = strlen(note);
        bool any = false;

        for (size_t i = 0; i < s->mods->n; i++) {
                const SymModule *m = &s->mods->items[i];
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

int symbolize_child(const char *message, SymModules *mods, uint64_t deadline, int sock, int out) {
        Symbolizer s = { .mods = mods, .sock = sock, .deadline = deadline };
        SymResult res = { .magic = SYM_RESULT_MAGIC };
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        the = &s;
        elf_version(EV_CURRENT);
        s.dwfl = dwfl_begin(&callbacks);
        if (!s.dwfl)
                return EXIT_FAILURE;
        r = report_modules(&s);
        r = r ?: rewrite(&s, message, &text, &len);
        dwfl_end(s.dwfl);
        if (r < 0)
                return EXIT_FAILURE;
        make_note(&s, res.note, sizeof res.note);
        res.unreachable = s.unreachable;
        res.has_text = s.unreachable == 0;
        res.text_len = res.has_text ? len : 0;
        r = loop_write(out, &res, sizeof res);
        r = r ?: loop_write(out, text, res.text_len);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

#else

int symbolize_child(const char *message, SymModules *mods, uint64_t deadline, int sock, int out) {
        return EXIT_FAILURE;
}

#endif
