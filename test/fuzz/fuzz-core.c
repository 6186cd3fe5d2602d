/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The core as the worker receives it: untrusted bytes from the crashed process's memory and
 * the kernel's headers. The first byte picks the chunk size the stream is fed in (the socket
 * delivers any split); the ELF headers, the notes and the PT_LOAD table are parsed from it. */
#include "core-notes.h"
#include "elf-stream.h"
#include "fuzz.h"
#include "log.h"

static bool on_thread(const CoreThreadRegs *t, void *userdata) {
        (*(unsigned *) userdata)++;
        return true;
}

static bool on_file(const CoreFileMapping *m, void *userdata) {
        /* the path must be a string inside the notes */
        *(size_t *) userdata += m->path[0] ? 1 : 0;
        return true;
}

static void parse_notes(const uint8_t *notes, size_t len, bool is64, uint16_t machine) {
        CoreNotes cn;
        unsigned threads = 0;
        size_t files = 0;

        (void) core_notes_parse(notes, len, is64, machine, &cn);
        (void) core_notes_threads(notes, len, machine, on_thread, &threads);
        (void) core_notes_files(notes, len, on_file, &files);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ElfStream s;
        size_t chunk;

        log_set_max_level(LOG_CRIT);
        if (size < 1)
                return 0;
        chunk = (size_t) data[0] * 61 + 1;
        data++;
        size--;
        elf_stream_init(&s);
        s.keep = true;
        for (size_t o = 0; o < size; o += chunk)
                elf_stream_feed(&s, data + o, size - o < chunk ? size - o : chunk, o);
        if (s.notes_done && s.kept_notes)
                parse_notes(s.kept_notes, s.kept_notes_len, s.is64, s.machine);
        elf_stream_done(&s);
        elf_stream_free_kept(&s);
        /* the notes parser on the raw bytes too, as both layouts */
        parse_notes(data, size, true, 62 /* EM_X86_64 */);
        parse_notes(data, size, false, 3 /* EM_386 */);
        return 0;
}
