/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "parse-util.h"
#include "record-fields.h"

const char *signal_name(int sig, char *buf, size_t size) {
        const char *abbrev = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;

        if (!abbrev)
                return NULL;
        snprintf(buf, size, "SIG%s", abbrev);
        return buf;
}

void string_sanitize(char *s) {
        for (; *s; s++)
                if (*s < ' ' || *s > '~')
                        *s = '?';
}

/* A field's value as a NUL-terminated string, or def. */
static const char *field_str(const Record *r, const char *name, char *buf, size_t size, const char *def) {
        RecordField f;

        if (!record_find(r->buf, r->len, name, &f))
                return def;
        snprintf(buf, size, "%.*s", (int) MIN(f.value_len, size - 1), (const char *) f.value);
        return buf;
}

static bool has_field(const Record *r, const char *name) {
        RecordField f;
        return record_find(r->buf, r->len, name, &f) != NULL;
}

int record_finalize(Record *r, const CoreFacts *f) {
        char pid[32], uid[32], comm[64], sig[32], name[32];
        uint64_t signo = 0;
        int ret = 0;

        if (f->has_signal && !has_field(r, "COREDUMP_SIGNAL"))
                ret = ret ?: record_addf(r, "COREDUMP_SIGNAL", "%d", f->signal);
        if (parse_uint64(field_str(r, "COREDUMP_SIGNAL", sig, sizeof sig, ""), &signo) >= 0 &&
            signal_name((int) signo, name, sizeof name))
                ret = ret ?: record_add_str(r, "COREDUMP_SIGNAL_NAME", name);
        if (f->has_code && !has_field(r, "COREDUMP_CODE"))
                ret = ret ?: record_addf(r, "COREDUMP_CODE", "%d", f->code);
        if (f->has_tid)
                ret = ret ?: record_addf(r, "COREDUMP_TID", "%d", f->tid);
        if (f->thread_name[0])
                ret = ret ?: record_add_str(r, "COREDUMP_THREAD_NAME", f->thread_name);
        /* /proc could not be trusted: the comm the core itself carries */
        if (!has_field(r, "COREDUMP_COMM") && f->comm[0])
                ret = ret ?: record_add_str(r, "COREDUMP_COMM", f->comm);
        if (f->filename[0])
                ret = ret ?: record_add_str(r, "COREDUMP_FILENAME", f->filename);
        if (f->truncated)
                ret = ret ?: record_add_str(r, "COREDUMP_TRUNCATED", "1");

        ret = ret ?: record_add_str(r, "SYSLOG_IDENTIFIER", "coredump-socket");
        ret = ret ?: record_add_str(r, "MESSAGE_ID", SD_MESSAGE_COREDUMP_STR);
        ret = ret ?: record_add_str(r, "PRIORITY", "2");
        ret = ret ?: record_addf(r, "MESSAGE", "Process %s (%s) of user %s dumped core.",
                                 field_str(r, "COREDUMP_PID", pid, sizeof pid, "?"),
                                 field_str(r, "COREDUMP_COMM", comm, sizeof comm, "n/a"),
                                 field_str(r, "COREDUMP_UID", uid, sizeof uid, "?"));
        return ret;
}
