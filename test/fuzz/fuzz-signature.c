/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parsers of an entry's trace text that coredumpctl runs on entries anyone may have written:
 * COREDUMP_SIGNATURE, and info's frame and module lines (ctl-symbolize). Input: "signal byte,
 * trace NUL package JSON NUL exe". Pure. */
#include <string.h>

#include "crash-signature.h"
#include "ctl-symbolize.h"
#include "fuzz.h"

/* inputs beyond this are cut: MESSAGE is bounded by the journal, not by this parser */
#define FUZZ_SIGNATURE_INPUT_MAX (1U << 20)

/* Every line through info's parsers: what they return lies within the line. */
static void parse_lines(const char *text) {
        for (const char *p = text; *p;) {
                const char *eol = strchrnul(p, '\n');
                size_t len = (size_t) (eol - p);
                SymModuleLine m;
                SymFrame f;

                if (symbolize_parse_frame(p, len, &f) &&
                    (f.name_off + f.name_len > len || f.module_off + f.module_len > len))
                        __builtin_trap();
                if (symbolize_parse_module(p, len, &m) &&
                    (m.path_off + m.path_len > len || m.id_off + m.id_len > len))
                        __builtin_trap();
                p = *eol ? eol + 1 : eol;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char buf[FUZZ_SIGNATURE_INPUT_MAX + 3];
        char sig[CRASH_SIGNATURE_SIZE];
        const char *trace, *json, *exe;
        size_t n;

        if (size < 1)
                return 0;
        n = size - 1 < FUZZ_SIGNATURE_INPUT_MAX ? size - 1 : FUZZ_SIGNATURE_INPUT_MAX;
        memcpy(buf, data + 1, n);
        buf[n] = buf[n + 1] = buf[n + 2] = 0;
        trace = buf;
        json = trace + strlen(trace) + 1;
        exe = json <= buf + n ? json + strlen(json) + 1 : buf + n + 1;
        if (crash_signature(trace, json, exe <= buf + n ? exe : NULL, data[0], sig) == 0 &&
            (strlen(sig) != CRASH_SIGNATURE_HEX || strspn(sig, "0123456789abcdef") != CRASH_SIGNATURE_HEX))
                __builtin_trap();
        parse_lines(trace);
        return 0;
}
