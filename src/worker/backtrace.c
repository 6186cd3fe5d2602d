/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stack traces, module list and package notes of the rebuilt core with libdwfl, systemd's text.
 * Worker (sandboxed): module files only as the manager's descriptors; no debuginfo lookups. */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backtrace.h"
#include "dwfl-name.h"
#include "json.h"
#include "macro.h"

#define PACKAGE_NOTE_OWNER "FDO"
#define PACKAGE_NOTE_TYPE 0xcafe1a7eU
#define BUILD_ID_MAX 64U

typedef struct BtContext {
        Dwfl *dwfl;
        const BtModule *mods;
        size_t n_mods;
        FILE *text;
        FILE *json;
        bool json_any;
        unsigned n_frames;
        const char *exe;
        BtResult *result;
} BtContext;

static const char *base_name(const char *p) {
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

/* libdwfl's callbacks carry no context of ours; the worker handles one core, once. */
static const BtContext *current;

/* libdwfl asks for a module's file: hand it a copy of the manager's descriptor. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
                    Elf **elfp) {
        const BtContext *c = current;

        for (size_t i = 0; modname && i < c->n_mods; i++)
                if (strcmp(c->mods[i].path, modname) == 0) {
                        int fd = fcntl(c->mods[i].fd, F_DUPFD_CLOEXEC, 3);
                        if (fd >= 0)
                                *file_name = strdup(modname);
                        return fd;
                }
        return -1;
}

/* No separate debug info (debuginfod, /usr/lib/debug) is looked for: that would mean opening
 * paths. What the module file itself carries (DWARF, .symtab, .dynsym) is used. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name) {
        return -1;
}

static const Dwfl_Callbacks callbacks = {
        .find_elf = find_elf,
        .find_debuginfo = find_debuginfo,
};

static int frame_cb(Dwfl_Frame *frame, void *arg) {
        BtContext *c = arg;
        Dwarf_Addr pc, adjusted, start = 0;
        bool activation = false;
        const char *fname = NULL, *module = NULL;
        Dwfl_Module *mod;

        if (!dwfl_frame_pc(frame, &pc, &activation))
                return DWARF_CB_ABORT;
        /* a return address points past the call: look up the call itself */
        adjusted = pc - (activation ? 0 : 1);
        mod = dwfl_addrmodule(c->dwfl, adjusted);
        if (mod) {
                module = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
                fname = module_function_name(mod, adjusted);
        }
        fprintf(c->text, "#%-2u 0x%016" PRIx64 " %s (%s + 0x%" PRIx64 ")\n", c->n_frames, (uint64_t) pc, fname ?: "n/a",
                module ? base_name(module) : "n/a", (uint64_t) (pc - start));
        return ++c->n_frames < BT_FRAMES_MAX && ftell(c->text) < (long) BT_TEXT_MAX ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int thread_cb(Dwfl_Thread *thread, void *arg) {
        BtContext *c = arg;

        if (c->result->n_threads >= BT_THREADS_MAX || ftell(c->text) >= (long) BT_TEXT_MAX)
                return DWARF_CB_ABORT;
        c->n_frames = 0;
        fprintf(c->text, "%sStack trace of thread %d:\n", c->result->n_threads > 0 ? "\n" : "",
                (int) dwfl_thread_tid(thread));
        (void) dwfl_thread_getframes(thread, frame_cb, c); /* an error ends this thread's trace */
        c->result->n_threads++;
        return DWARF_CB_OK;
}

/* The .note.package JSON of a module's file (owner "FDO", type 0xcafe1a7e), if well-formed. */
static bool package_note(Dwfl_Module *mod, char *buf, size_t size) {
        GElf_Addr bias;
        Elf *elf = dwfl_module_getelf(mod, &bias);
        size_t n_ph;

        if (!elf || elf_getphdrnum(elf, &n_ph) < 0)
                return false;
        for (size_t i = 0; i < n_ph; i++) {
                GElf_Phdr mem, *ph = gelf_getphdr(elf, (int) i, &mem);
                Elf_Data *d;
                GElf_Nhdr nh;
                size_t off = 0, name_off, desc_off;

                if (!ph || ph->p_type != PT_NOTE ||
                    !(d = elf_getdata_rawchunk(elf, (int64_t) ph->p_offset, ph->p_filesz, ELF_T_NHDR)))
                        continue;
                while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                        const char *desc = (const char *) d->d_buf + desc_off;
                        size_t l;
                        if (nh.n_type != PACKAGE_NOTE_TYPE || nh.n_namesz != sizeof PACKAGE_NOTE_OWNER ||
                            memcmp((const char *) d->d_buf + name_off, PACKAGE_NOTE_OWNER, sizeof PACKAGE_NOTE_OWNER) != 0)
                                continue;
                        l = strnlen(desc, nh.n_descsz);
                        if (l == 0 || l >= size || !json_object_valid(desc, l))
                                return false;
                        memcpy(buf, desc, l);
                        buf[l] = 0;
                        return true;
                }
        }
        return false;
}

static void hex(char *out, const unsigned char *p, int n) {
        for (int i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
}

static int module_cb(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg) {
        static char note[BT_PACKAGE_NOTE_MAX];
        BtContext *c = arg;
        const unsigned char *id = NULL;
        GElf_Addr id_vaddr;
        char build_id[2 * BUILD_ID_MAX + 1] = "", pkg_name[BT_PACKAGE_FIELD_MAX] = "", pkg_ver[BT_PACKAGE_FIELD_MAX] = "";
        int id_len;
        bool has_note;

        if (!name || name[0] != '/' || ftell(c->json) >= (long) BT_JSON_MAX)
                return DWARF_CB_OK;
        id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
        if (id_len > 0 && id_len <= (int) BUILD_ID_MAX)
                hex(build_id, id, id_len);
        has_note = package_note(mod, note, sizeof note);
        if (has_note) {
                (void) json_object_get_string(note, strlen(note), "name", pkg_name, sizeof pkg_name);
                (void) json_object_get_string(note, strlen(note), "version", pkg_ver, sizeof pkg_ver);
        }
        if (has_note && pkg_name[0] && pkg_ver[0]) {
                char type[BT_PACKAGE_FIELD_MAX] = "package";
                (void) json_object_get_string(note, strlen(note), "type", type, sizeof type);
                fprintf(c->text, "Module %s from %s %s-%s\n", name, type, pkg_name, pkg_ver);
        } else if (build_id[0])
                fprintf(c->text, "Module %s with build-id %s\n", name, build_id);
        else
                fprintf(c->text, "Module %s without build-id.\n", name);
        if (c->exe && strcmp(name, c->exe) == 0 && pkg_name[0] && pkg_ver[0]) {
                snprintf(c->result->package_name, sizeof c->result->package_name, "%s", pkg_name);
                snprintf(c->result->package_version, sizeof c->result->package_version, "%s", pkg_ver);
        }
        if (!build_id[0] && !has_note)
                return DWARF_CB_OK;
        fputs(c->json_any ? "," : "{", c->json);
        json_print_string(c->json, name);
        fputs(":{", c->json);
        if (build_id[0])
                fprintf(c->json, "\"buildId\":\"%s\"", build_id);
        if (has_note) { /* the note's own fields, after the build-id */
                const char *inner = strchr(note, '{') + 1;
                size_t l = strlen(inner);
                while (l > 0 && strchr(" \t\r\n}", inner[l - 1]))
                        l--;
                if (l > 0)
                        fprintf(c->json, "%s%.*s", build_id[0] ? "," : "", (int) l, inner);
        }
        fputs("}", c->json);
        c->json_any = true;
        c->result->n_modules++;
        return DWARF_CB_OK;
}

static char *close_stream(FILE *f, char **buf) {
        if (fclose(f) != 0) {
                free(*buf);
                *buf = NULL;
        }
        return *buf;
}

int backtrace_core(uint8_t *core, size_t len, const BtModule *mods, size_t n_mods, const char *exe, BtResult *ret) {
        char *text = NULL, *json = NULL;
        size_t text_len = 0, json_len = 0;
        BtContext c = { .mods = mods, .n_mods = n_mods, .exe = exe, .result = ret };
        Elf *elf = NULL;
        int r = 0;

        *ret = (BtResult) {};
        elf_version(EV_CURRENT);
        elf = elf_memory((char *) core, len);
        c.dwfl = elf ? dwfl_begin(&callbacks) : NULL;
        c.text = open_memstream(&text, &text_len);
        c.json = open_memstream(&json, &json_len);
        if (!elf || !c.dwfl || !c.text || !c.json) {
                r = -ENOMEM;
                goto finish;
        }
        current = &c;
        dwfl_report_begin(c.dwfl);
        if (dwfl_core_file_report(c.dwfl, elf, NULL) < 0 || dwfl_report_end(c.dwfl, NULL, NULL) != 0) {
                r = -EBADMSG;
                goto finish;
        }
        (void) dwfl_getmodules(c.dwfl, module_cb, &c, 0);
        if (dwfl_core_file_attach(c.dwfl, elf) < 0) {
                r = -EBADMSG;
                goto finish;
        }
        if (ftell(c.text) > 0)
                fputc('\n', c.text);
        (void) dwfl_getthreads(c.dwfl, thread_cb, &c);
finish:
        current = NULL;
        if (c.json && c.json_any)
                fputc('}', c.json);
        if (c.text)
                ret->text = close_stream(c.text, &text);
        if (c.json) {
                ret->package_json = close_stream(c.json, &json);
                if (!c.json_any) {
                        free(ret->package_json);
                        ret->package_json = NULL;
                }
        }
        if (c.dwfl)
                dwfl_end(c.dwfl);
        if (elf)
                elf_end(elf);
        if (r < 0)
                bt_result_free(ret);
        return r;
}

void bt_result_free(BtResult *r) {
        free(r->text);
        free(r->package_json);
        r->text = r->package_json = NULL;
}
