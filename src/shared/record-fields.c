/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A record's final fields (signal, thread, file, MESSAGE) and the checked merge of a worker's
 * analysis. Shared (manager and worker), pure: in-memory records only. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "crash-signature.h"
#include "parse-util.h"
#include "proto.h"
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

/* "" or, when the manager handed the worker only the first MODULES_MAX mapped files, how many
 * more the traces could not use. */
static const char *omitted_note(const Record *r, char *buf, size_t size) {
        char n[32];

        if (!field_str(r, "COREDUMP_MODULES_OMITTED", n, sizeof n, NULL))
                return "";
        snprintf(buf, size, "\n\n%s more mapped files were left out of the stack traces (at most %u are used).", n,
                 MODULES_MAX);
        return buf;
}

/* "Process PID (COMM) of user UID dumped core." and, after a blank line, the stack traces; a
 * crash whose core was refused or lost says so instead ("... crashed, no core: WHY."). */
static int add_message(Record *r, const char *pid, const char *comm, const char *uid) {
        _cleanup_free_ char *m = NULL;
        RecordField st, err;
        bool stack = record_find(r->buf, r->len, ANALYSIS_STACK_FIELD, &st) && st.value_len > 0;
        char note[128];
        int n;

        if (record_find(r->buf, r->len, "COREDUMP_PROCESSING_ERROR", &err) && !has_field(r, "COREDUMP_FILENAME"))
                n = asprintf(&m, "Process %s (%s) of user %s crashed, no core: %.*s.", pid, comm, uid,
                             (int) MIN(err.value_len, (size_t) INT_MAX), (const char *) err.value);
        else
                n = asprintf(&m, "Process %s (%s) of user %s dumped core.%s%.*s%s", pid, comm, uid, stack ? "\n\n" : "",
                             stack ? (int) st.value_len : 0, stack ? (const char *) st.value : "",
                             omitted_note(r, note, sizeof note));
        if (n < 0)
                return -ENOMEM;
        return record_add(r, "MESSAGE", m, (size_t) n, 0);
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
        else if (f->processing_error[0] && !has_field(r, "COREDUMP_PROCESSING_ERROR"))
                ret = ret ?: record_add_str(r, "COREDUMP_PROCESSING_ERROR", f->processing_error);
        if (f->truncated)
                ret = ret ?: record_add_str(r, "COREDUMP_TRUNCATED", "1");
        if (f->forwarded_to[0])
                ret = ret ?: record_add_str(r, "COREDUMP_FORWARDED_TO", f->forwarded_to);
        if (f->forward_error[0])
                ret = ret ?: record_add_str(r, "COREDUMP_FORWARD_ERROR", f->forward_error);

        ret = ret ?: record_add_str(r, "SYSLOG_IDENTIFIER", "coredump-socket");
        ret = ret ?: record_add_str(r, "MESSAGE_ID", SD_MESSAGE_COREDUMP_STR);
        ret = ret ?: record_add_str(r, "PRIORITY", "2");
        return ret ?: add_message(r, field_str(r, "COREDUMP_PID", pid, sizeof pid, "?"),
                                  field_str(r, "COREDUMP_COMM", comm, sizeof comm, "n/a"),
                                  field_str(r, "COREDUMP_UID", uid, sizeof uid, "?"));
}

static const char *const analysis_fields[] = {
        ANALYSIS_STACK_FIELD, "COREDUMP_PACKAGE_NAME", "COREDUMP_PACKAGE_VERSION", "COREDUMP_PACKAGE_JSON",
        "COREDUMP_SIGNATURE",
};

/* COREDUMP_SIGNATURE as crash_signature() writes it: nothing else passes. */
static bool signature_valid(const RecordField *f) {
        if (f->name_len != strlen("COREDUMP_SIGNATURE") || memcmp(f->name, "COREDUMP_SIGNATURE", f->name_len) != 0)
                return true;
        if (f->value_len != CRASH_SIGNATURE_HEX)
                return false;
        for (size_t i = 0; i < f->value_len; i++)
                if (!strchr("0123456789abcdef", f->value[i]) || f->value[i] == 0)
                        return false;
        return true;
}

int record_merge_analysis(Record *r, const uint8_t *buf, size_t len) {
        bool seen[ELEMENTSOF(analysis_fields)] = {};
        RecordField f;
        size_t pos = 0;
        int e;

        /* check all before adding any */
        while ((e = record_next(buf, len, &pos, &f)) > 0) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(analysis_fields); i++)
                        if (strlen(analysis_fields[i]) == f.name_len && memcmp(analysis_fields[i], f.name, f.name_len) == 0)
                                break;
                if (i == ELEMENTSOF(analysis_fields) || seen[i] || memchr(f.value, 0, f.value_len) ||
                    !signature_valid(&f))
                        return -EBADMSG;
                seen[i] = true;
        }
        if (e < 0 || len > ANALYSIS_BYTES_MAX)
                return -EBADMSG;
        pos = 0;
        while (record_next(buf, len, &pos, &f) > 0) {
                char name[FIELD_NAME_MAX + 1];
                snprintf(name, sizeof name, "%.*s", (int) f.name_len, f.name);
                e = record_add(r, name, f.value, f.value_len, 0);
                if (e < 0)
                        return e;
        }
        return 0;
}
