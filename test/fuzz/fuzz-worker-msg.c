/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager takes from a worker (which parsed a hostile core and may be compromised): the
 * RESULT message, then the analysis (stack traces, packages) merged into the crash's record and
 * the record finished into a journal entry and an export file. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "proto.h"
#include "record-fields.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        MsgResult res;
        CoreFacts facts = {};
        Record r = {};
        int fd;

        if (size < sizeof res)
                return 0;
        if (proto_check(data, sizeof res, MSG_RESULT, sizeof res) >= 0) {
                memcpy(&res, data, sizeof res);
                facts.has_signal = res.has_siginfo;
                facts.signal = res.signo;
                facts.has_tid = res.has_prstatus;
                facts.tid = res.tid;
                memcpy(facts.comm, res.fname, sizeof facts.comm);
                facts.comm[sizeof facts.comm - 1] = 0;
                string_sanitize(facts.comm);
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
