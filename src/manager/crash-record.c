/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A crash's base record (pidfd info, verified /proc fields) sealed in a memfd for the worker, and
 * the worker's RESULT checked into facts. Manager (root): no I/O beyond the memfd it makes. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "crash-record.h"
#include "crash.h"
#include "fd-util.h"
#include "manager.h"

static int crash_record_forwarded(Crash *c, Record *r);

int crash_record_base(Crash *c, Record *ret) {
        const PidfdInfo *i = &c->info;
        const CrashMeta *m = &c->meta;
        Record r = {};
        int e = 0;

        e = e ?: record_addf(&r, "COREDUMP_PID", "%d", (int) i->pid);
        e = e ?: record_addf(&r, "COREDUMP_UID", "%u", (unsigned) i->ruid);
        e = e ?: record_addf(&r, "COREDUMP_GID", "%u", (unsigned) i->rgid);
        e = e ?: record_addf(&r, "COREDUMP_TIMESTAMP", "%llu", (unsigned long long) c->timestamp_usec);
        /* the task's own UTS name where the kernel gave it (%h), as systemd records it */
        e = e ?: record_add_str(&r, "COREDUMP_HOSTNAME", c->pipe && c->pipe_hostname[0] ? c->pipe_hostname
                                                                                     : c->manager->hostname);
        /* pipe mode on kernels without %F has no pidfd: the field is absent then */
        if (c->pidfd >= 0)
                e = e ?: record_add_str(&r, "COREDUMP_BY_PIDFD", "1");
        /* what the kernel's dumpable mode was: 1 (user) or 2 (suidsafe, root-only core) */
        if (i->coredump_mask & (PIDFD_COREDUMP_ROOT | PIDFD_COREDUMP_USER)) /* unknown: left out */
                e = e ?: record_add_str(&r, "COREDUMP_DUMPABLE", (i->coredump_mask & PIDFD_COREDUMP_ROOT) ? "2" : "1");
        if (i->mask & PIDFD_INFO_COREDUMP_SIGNAL)
                e = e ?: record_addf(&r, "COREDUMP_SIGNAL", "%u", i->coredump_signal);
        else if (c->pipe && c->pipe_signal > 0) /* %s, from the kernel */
                e = e ?: record_addf(&r, "COREDUMP_SIGNAL", "%d", c->pipe_signal);
        if (i->mask & PIDFD_INFO_COREDUMP_CODE)
                e = e ?: record_addf(&r, "COREDUMP_CODE", "%d", (int) i->coredump_code);
        if (m->proc_valid && m->rlimit_valid)
                e = e ?: record_addf(&r, "COREDUMP_RLIMIT", "%llu", (unsigned long long) m->rlimit_core);
        if (m->proc_valid && m->fields.len > 0 && r.len + m->fields.len <= RECORD_MAX) {
                uint8_t *n = realloc(r.buf, r.len + m->fields.len);
                if (!n)
                        e = e ?: -ENOMEM;
                else {
                        memcpy(n + r.len, m->fields.buf, m->fields.len);
                        r.buf = n;
                        r.len += m->fields.len;
                        r.cap = r.len;
                        r.overflow |= m->fields.overflow;
                }
        }
        if (!m->proc_valid)
                e = e ?: record_add_str(&r, "COREDUMP_PROC_MISSING", "1");
        if (c->forwarded)
                e = e ?: crash_record_forwarded(c, &r);
        /* a field was cut to its bound: say so in the record itself, both sides read it */
        if (r.overflow)
                e = e ?: record_add_str(&r, "COREDUMP_RECORD_TRUNCATED", "1");
        if (e < 0) {
                record_free(&r);
                return e;
        }
        *ret = r;
        return 0;
}

/* What the sender says that /proc did not: its fields where the record has none (its own
 * marker, COREDUMP_FORWARDED=1, among them), never the identity the pidfd checked nor the
 * final fields the worker adds. */
static int crash_record_forwarded(Crash *c, Record *r) {
        static const char *const never[] = {
                "COREDUMP_PID", "COREDUMP_UID", "COREDUMP_GID", "COREDUMP_BY_PIDFD", "COREDUMP_FILENAME",
                "COREDUMP_TRUNCATED", "COREDUMP_TID", "COREDUMP_THREAD_NAME", "MESSAGE", "MESSAGE_ID", "PRIORITY",
                "SYSLOG_IDENTIFIER", "COREDUMP_PACKAGE_NAME", "COREDUMP_PACKAGE_VERSION", "COREDUMP_PACKAGE_JSON",
                "COREDUMP_SIGNATURE", "COREDUMP_SIGNAL_NAME", "COREDUMP_PROCESSING_ERROR", "COREDUMP_FORWARDED_TO", "COREDUMP_FORWARD_ERROR",
        };
        const Record *f = &c->forwarded_fields;
        size_t pos = 0;
        RecordField x;
        int e = 0, n;

        while (e >= 0 && (n = record_next(f->buf, f->len, &pos, &x)) > 0) {
                char name[FIELD_NAME_MAX + 1];
                bool skip = false;

                snprintf(name, sizeof name, "%.*s", (int) x.name_len, x.name);
                for (size_t i = 0; i < ELEMENTSOF(never) && !skip; i++)
                        skip = strcmp(name, never[i]) == 0;
                if (!skip && !record_find(r->buf, r->len, name, &(RecordField) {}))
                        e = record_add(r, name, x.value, x.value_len, 0);
        }
        /* the sender's own marker: always, whatever it sent */
        if (e >= 0 && !record_find(r->buf, r->len, "COREDUMP_FORWARDED", &(RecordField) {}))
                e = record_add_str(r, "COREDUMP_FORWARDED", "1");
        return e;
}

int crash_record_memfd(const Record *r) {
        _cleanup_close_ int fd = memfd_create("coredump-record", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        int e;

        if (fd < 0)
                return negative_errno();
        e = loop_write(fd, r->buf, r->len);
        if (e < 0)
                return e;
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

void crash_facts(Crash *c, const MsgResult *res, const char *filename, CoreFacts *ret) {
        char name[THREAD_NAME_MAX];

        *ret = (CoreFacts) {
                .truncated = res->state == CORE_TRUNCATED_LIMIT || res->state == CORE_TRUNCATED_EOF,
        };
        /* The worker parsed hostile bytes: take only values that make sense. */
        if (res->has_siginfo && res->signo > 0 && res->signo < NSIG) {
                ret->has_signal = true;
                ret->signal = res->signo;
                ret->has_code = true;
                ret->code = res->code;
        }
        if (res->has_prstatus && res->tid > 0) {
                ret->has_tid = true;
                ret->tid = res->tid;
                ret->n_threads = res->n_threads;
                if (c->meta.proc_valid && meta_thread_name(&c->meta, res->tid, name, sizeof name))
                        snprintf(ret->thread_name, sizeof ret->thread_name, "%s", name);
        }
        if (res->has_psinfo) {
                memcpy(ret->comm, res->fname, sizeof ret->comm - 1);
                ret->comm[sizeof ret->comm - 1] = 0;
                string_sanitize(ret->comm);
        }
        if (filename)
                snprintf(ret->filename, sizeof ret->filename, "%s", filename);
}
