/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* COREDUMP_SIGNATURE from an entry's text (coredumpctl computes it for entries anyone may have
 * written): input is "signal byte, trace NUL package JSON NUL exe". Pure. */
#include <string.h>

#include "crash-signature.h"
#include "fuzz.h"

/* inputs beyond this are cut: MESSAGE is bounded by the journal, not by this parser */
#define FUZZ_SIGNATURE_INPUT_MAX (1U << 20)

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
        return 0;
}
