/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sidecar record reader of coredumpctl: a record.*.export file is journal export format,
 * and a user who can write to the storage directory (or a forged file) controls its bytes. */
#include "ctl-source.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        for (CollectMode mode = COLLECT_LIST; mode <= COLLECT_FULL; mode++) {
                Entry e = {};

                if (entry_from_export(&e, data, size, mode, "COREDUMP_EXE") >= 0)
                        entry_index(&e);
                entry_free(&e);
        }
        return 0;
}
