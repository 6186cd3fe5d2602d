/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The summary of crashes a limit refused: a record kept as suppressed.*.export in the store and
 * sent to the journal without waiting. Manager (root): writes nothing else. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "journal-send.h"
#include "log.h"
#include "manager.h"
#include "record-fields.h"
#include "store.h"
#include "suppress.h"
#include "time-util.h"

#define SUPPRESS_PRIORITY "4" /* warning: cores were refused */
#define PIDS_TEXT_MAX (LIMIT_PIDS_LISTED * 12)

static const char *reason(const LimitBucket *b) {
        return b->kind == LIMIT_CAP ? "max-parallel" : b->kind == LIMIT_USER ? "max-parallel-per-user" : "rate-limit";
}

static void why_text(const LimitBucket *b, const Config *c, char *buf, size_t size) {
        if (b->kind == LIMIT_CAP)
                snprintf(buf, size, "MaxParallel=%u cores were in flight", c->max_parallel);
        else if (b->kind == LIMIT_USER)
                snprintf(buf, size, "MaxParallelPerUser=%u crashes of user %s were in flight",
                         config_max_parallel_per_user(c), b->key);
        else
                snprintf(buf, size, "more than RateLimitBurst=%u per RateLimitIntervalSec=%llus of %s %s",
                         c->rate_limit_burst, (unsigned long long) (c->rate_limit_interval_usec / USEC_PER_SEC),
                         limit_kind_to_string(b->kind), b->key);
}

static void pids_text(const LimitBucket *b, char *buf, size_t size) {
        size_t o = 0;

        buf[0] = 0;
        for (unsigned i = 0; i < b->n_pids && o < size; i++)
                o += (size_t) snprintf(buf + o, size - o, "%s%d", i ? " " : "", (int) b->pids[i]);
}

int suppress_record(const LimitBucket *b, const Manager *m, Record *ret) {
        char why[PATH_MAX + 160], pids[PIDS_TEXT_MAX];
        Record r = {};
        int e = 0;

        why_text(b, &m->config, why, sizeof why);
        pids_text(b, pids, sizeof pids);
        e = e ?: record_add_str(&r, "MESSAGE_ID", MESSAGE_COREDUMP_SUPPRESSED_STR);
        e = e ?: record_add_str(&r, "PRIORITY", SUPPRESS_PRIORITY);
        e = e ?: record_addf(&r, "MESSAGE", "%u crash%s not dumped in %llu s: %s. The last: PID %d (%s) of user %u.",
                             b->n_suppressed, b->n_suppressed == 1 ? "" : "es",
                             (unsigned long long) (b->last_realtime > b->first_realtime /* clock set back */
                                                           ? (b->last_realtime - b->first_realtime) / USEC_PER_SEC : 0),
                             why,
                             (int) b->last_pid, b->last_comm[0] ? b->last_comm : "n/a", (unsigned) b->last_uid);
        e = e ?: record_addf(&r, "COREDUMP_SUPPRESSED", "%u", b->n_suppressed);
        e = e ?: record_add_str(&r, "COREDUMP_SUPPRESSED_REASON", reason(b));
        e = e ?: record_add_str(&r, "COREDUMP_SUPPRESSED_PIDS", pids);
        e = e ?: record_addf(&r, "COREDUMP_SUPPRESSED_SINCE", "%llu", (unsigned long long) b->first_realtime);
        if (b->kind == LIMIT_EXE)
                e = e ?: record_add_str(&r, "COREDUMP_EXE", b->key);
        else if (b->kind == LIMIT_UNIT)
                e = e ?: record_add_str(&r, "COREDUMP_SUPPRESSED_SERVICE", b->key);
        e = e ?: record_addf(&r, "COREDUMP_PID", "%d", (int) b->last_pid);
        e = e ?: record_addf(&r, "COREDUMP_UID", "%u", (unsigned) b->last_uid);
        if (b->last_comm[0])
                e = e ?: record_add_str(&r, "COREDUMP_COMM", b->last_comm);
        e = e ?: record_addf(&r, "COREDUMP_TIMESTAMP", "%llu", (unsigned long long) b->last_realtime);
        e = e ?: record_add_str(&r, "COREDUMP_HOSTNAME", m->hostname);
        e = e ?: record_addf(&r, "__REALTIME_TIMESTAMP", "%llu", (unsigned long long) now_usec(CLOCK_REALTIME));
        e = e ?: record_add_str(&r, "_BOOT_ID", m->boot_id);
        if (e < 0) {
                record_free(&r);
                return e;
        }
        *ret = r;
        return 0;
}

void suppress_summary(const LimitBucket *b, void *userdata) {
        Manager *m = userdata;
        char name[BOOT_ID_STRING_MAX + 64];
        RecordField msg;
        Record r;
        int e;

        e = suppress_record(b, m, &r);
        if (e < 0)
                return (void) log_error_errno(e, "Failed to make the summary of %u suppressed crashes: %m",
                                              b->n_suppressed);
        if (record_find(r.buf, r.len, "MESSAGE", &msg))
                log_warning("%.*s", (int) msg.value_len, (const char *) msg.value);
        snprintf(name, sizeof name, "suppressed.%s.%llu.%08x.export", m->boot_id, (unsigned long long) b->last_realtime,
                 (unsigned) b->hash);
        if (m->storage_fd >= 0 && (e = store_write_record(m->storage_fd, name, &r, UID_INVALID)) < 0)
                log_error_errno(e, "Failed to keep the summary of suppressed crashes in %s: %m", m->config.directory);
        e = journal_send_record(r.buf, r.len, NULL, 0, MSG_DONTWAIT);
        if (e < 0)
                log_debug_errno(e, "The summary of suppressed crashes is not in the journal: %m");
        record_free(&r);
}
