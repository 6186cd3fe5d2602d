/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager takes from a worker (which parsed a hostile core and may be compromised): the
 * RESULT message, checked into the record's facts by the manager's own crash_facts(), then the
 * analysis (stack traces, packages) merged into the crash's record and the record finished into
 * a journal entry and an export file. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "crash-record.h"
#include "crash.h"
#include "fuzz.h"
#include "proto.h"
#include "record-fields.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* a crash whose /proc was confirmed: its threads' names are there for crash_facts() */
        static Crash c = { .meta = { .proc_valid = true } };
        MsgResult res;
        CoreFacts facts = {};
        Record r = {};
        int fd;

        if (size < sizeof res)
                return 0;
        if (!c.meta.fields.buf && record_add_str(&c.meta.fields, "_CDS_TASK_COMM", "1 fuzz-main\n2 fuzz-thread\n3 ") < 0)
                return 0;
        if (proto_check(data, sizeof res, MSG_RESULT, sizeof res) >= 0) {
                memcpy(&res, data, sizeof res);
                crash_facts(&c, &res, NULL, &facts);
        }
        (void) record_add_str(&r, "COREDUMP_PID", "1");
        (void) record_add_str(&r, "COREDUMP_COMM", "fuzz");
        if (record_merge_analysis(&r, data + sizeof res, size - sizeof res) >= 0 && record_finalize(&r, &facts) >= 0) {
                fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) record_write_export(r.buf, r.len, fd);
                        close(fd);
                }
        }
        record_free(&r);
        return 0;
}
