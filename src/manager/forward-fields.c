/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fields a forwarded crash carries into its container (forward.h), in systemd-coredump's
 * terms: the ids as the container sees them, its cgroup and units, nothing of the host's. Pure:
 * builds a record from a record. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "forward-proto.h"
#include "forward.h"
#include "macro.h"

/* What the host read that holds for the container too, in the host record's order. Left out:
 * the host's PID, UID, GID and TID, COREDUMP_CONTAINER_* (the container seen from outside),
 * COREDUMP_OPEN_FDS and COREDUMP_PROC_CGROUP (the host's paths), COREDUMP_PROC_STATUS (host PIDs
 * and ids), COREDUMP_HOSTNAME (the host's; the task's own where known is added), the cgroup
 * fields (rewritten below), and what the receiver computes itself (MESSAGE, the file, the
 * packages). */
static const char *const kept[] = {
        "COREDUMP_TIMESTAMP", "COREDUMP_RLIMIT",      "COREDUMP_DUMPABLE",     "COREDUMP_CODE",
        "COREDUMP_COMM",      "COREDUMP_EXE",         "COREDUMP_CMDLINE",      "COREDUMP_ENVIRON",
        "COREDUMP_PROC_MAPS", "COREDUMP_PROC_LIMITS", "COREDUMP_PROC_MOUNTINFO", "COREDUMP_PROC_AUXV",
        "COREDUMP_CWD",       "COREDUMP_ROOT",        "COREDUMP_RECORD_TRUNCATED",
};

static bool is_kept(const RecordField *f) {
        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                if (f->name_len == strlen(kept[i]) && memcmp(f->name, kept[i], f->name_len) == 0)
                        return true;
        return false;
}

static bool has(const uint8_t *rec, size_t len, const char *name) {
        return record_find(rec, len, name, &(RecordField) {}) != NULL;
}

/* The host's cgroup path of the process as the container names it: below its cgroup root. */
static int container_cgroup(const char *host_path, const char *root, char *buf, size_t size) {
        size_t l = strlen(root);

        while (l > 0 && root[l - 1] == '/')
                l--;
        if (strncmp(host_path, root, l) != 0 || (host_path[l] != '/' && host_path[l] != 0))
                return -EXDEV;
        return snprintf(buf, size, "%s", host_path[l] ? host_path + l : "/") < (int) size ? 0 : -ENOBUFS;
}

static int add_cgroup(Record *r, const uint8_t *rec, size_t len, const char *root) {
        char host[PATH_MAX], path[PATH_MAX];
        RecordField f;
        CgroupInfo ci;
        int e = 0;

        if (!record_find(rec, len, "COREDUMP_CGROUP", &f) || f.value_len >= sizeof host)
                return 0;
        memcpy(host, f.value, f.value_len);
        host[f.value_len] = 0;
        if (container_cgroup(host, root, path, sizeof path) < 0)
                return 0;
        cgroup_parse(path, &ci);
        e = e ?: record_add_str(r, "COREDUMP_CGROUP", path);
        if (ci.unit[0])
                e = e ?: record_add_str(r, "COREDUMP_UNIT", ci.unit);
        if (ci.user_unit[0])
                e = e ?: record_add_str(r, "COREDUMP_USER_UNIT", ci.user_unit);
        if (ci.slice[0])
                e = e ?: record_add_str(r, "COREDUMP_SLICE", ci.slice);
        if (ci.session[0])
                e = e ?: record_add_str(r, "COREDUMP_SESSION", ci.session);
        if (ci.owner_uid != UID_INVALID)
                e = e ?: record_addf(r, "COREDUMP_OWNER_UID", "%u", (unsigned) ci.owner_uid);
        return e;
}

/* COREDUMP_SIGNAL (the record's, or signal) and its name, as systemd's receiver wants them. */
static int add_signal(Record *r, const uint8_t *rec, size_t len, int signal) {
        char buf[16];
        RecordField f;
        const char *abbrev;
        int e = 0;

        if (record_find(rec, len, "COREDUMP_SIGNAL", &f) && f.value_len > 0 && f.value_len < sizeof buf) {
                memcpy(buf, f.value, f.value_len);
                buf[f.value_len] = 0;
                signal = atoi(buf);
        }
        e = record_addf(r, "COREDUMP_SIGNAL", "%d", signal > 0 && signal < NSIG ? signal : 0);
        abbrev = signal > 0 && signal < NSIG ? sigabbrev_np(signal) : NULL;
        if (abbrev)
                e = e ?: record_addf(r, "COREDUMP_SIGNAL_NAME", "SIG%s", abbrev);
        return e;
}

int forward_fields(const uint8_t *rec, size_t len, const ForwardTarget *t, int signal, const char *hostname,
                   bool with_pidfd, Record *ret) {
        Record r = {};
        size_t pos = 0;
        RecordField f;
        int e = 0, n;

        e = e ?: record_add_str(&r, "MESSAGE_ID", "fc2e22bc6ee647b6b90729ab34a250b1");
        e = e ?: record_add_str(&r, "PRIORITY", "2");
        e = e ?: record_addf(&r, "COREDUMP_PID", "%d", (int) t->pid);
        if (with_pidfd)
                e = e ?: record_add_str(&r, "COREDUMP_BY_PIDFD", "1");
        e = e ?: record_addf(&r, "COREDUMP_UID", "%u", (unsigned) t->uid);
        e = e ?: record_addf(&r, "COREDUMP_GID", "%u", (unsigned) t->gid);
        e = e ?: add_signal(&r, rec, len, signal);
        /* systemd's receiver requires the field; empty where the task's own name is not known */
        e = e ?: record_add_str(&r, "COREDUMP_HOSTNAME", hostname ?: "");
        while (e >= 0 && (n = record_next(rec, len, &pos, &f)) > 0) {
                char name[FIELD_NAME_MAX + 1];

                if (!is_kept(&f))
                        continue;
                snprintf(name, sizeof name, "%.*s", (int) f.name_len, f.name);
                e = record_add(&r, name, f.value, f.value_len, 0);
        }
        /* what systemd's receiver requires besides: an unknown limit is none */
        if (e >= 0 && !has(rec, len, "COREDUMP_RLIMIT"))
                e = record_add_str(&r, "COREDUMP_RLIMIT", "18446744073709551615");
        if (e >= 0 && !has(rec, len, "COREDUMP_COMM"))
                e = record_add_str(&r, "COREDUMP_COMM", "n/a");
        e = e ?: add_cgroup(&r, rec, len, t->cgroup_root);
        e = e ?: record_add_str(&r, FORWARD_MARK_FIELD, "1");
        if (e < 0) {
                record_free(&r);
                return e;
        }
        *ret = r;
        return 0;
}
