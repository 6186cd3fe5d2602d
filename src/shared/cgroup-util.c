/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit, user unit, slice, session and owner from a systemd cgroup path, and the unified path in
 * /proc/PID/cgroup text. Shared (used by the manager), pure: no I/O. */
#include <stdio.h>
#include <string.h>

#include "cgroup-util.h"
#include "macro.h"
#include "parse-util.h"

static bool has_suffix(const char *s, size_t len, const char *suffix) {
        size_t l = strlen(suffix);
        return len > l && memcmp(s + len - l, suffix, l) == 0;
}

static bool is_unit(const char *s, size_t len) {
        static const char *const types[] = { ".service", ".scope", ".socket", ".mount", ".swap", ".timer", ".path" };
        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                if (has_suffix(s, len, types[i]))
                        return true;
        return false;
}

static void copy(char *dst, size_t size, const char *s, size_t len) {
        snprintf(dst, size, "%.*s", (int) MIN(len, size - 1), s);
}

/* "<prefix><uid><suffix>" → uid */
static uid_t uid_between(const char *s, size_t len, const char *prefix, const char *suffix) {
        size_t pl = strlen(prefix), sl = strlen(suffix);
        char num[16];
        uint64_t v;

        if (len <= pl + sl || len - pl - sl >= sizeof num || memcmp(s, prefix, pl) != 0 || !has_suffix(s, len, suffix))
                return UID_INVALID;
        memcpy(num, s + pl, len - pl - sl);
        num[len - pl - sl] = 0;
        if (parse_uint64(num, &v) < 0 || v >= UID_INVALID)
                return UID_INVALID;
        return (uid_t) v;
}

void cgroup_parse(const char *path, CgroupInfo *ret) {
        bool in_user_manager = false;
        const char *p = path;

        *ret = (CgroupInfo) { .owner_uid = UID_INVALID };
        while (*p) {
                size_t len;
                uid_t u;

                p += strspn(p, "/");
                len = strcspn(p, "/");
                if (len == 0)
                        break;
                if (has_suffix(p, len, ".slice")) {
                        if (!in_user_manager)
                                copy(ret->slice, sizeof ret->slice, p, len);
                        if ((u = uid_between(p, len, "user-", ".slice")) != UID_INVALID && ret->owner_uid == UID_INVALID)
                                ret->owner_uid = u;
                } else if (is_unit(p, len)) {
                        if (in_user_manager) {
                                copy(ret->user_unit, sizeof ret->user_unit, p, len);
                                break;
                        }
                        copy(ret->unit, sizeof ret->unit, p, len);
                        if ((u = uid_between(p, len, "user@", ".service")) != UID_INVALID) {
                                ret->owner_uid = u;
                                in_user_manager = true; /* what follows is the user manager's tree */
                        } else {
                                if (has_suffix(p, len, ".scope") && len > 8 + 6 && memcmp(p, "session-", 8) == 0)
                                        copy(ret->session, sizeof ret->session, p + 8, len - 8 - 6);
                                break;
                        }
                } else
                        break; /* not systemd's layout below here */
                p += len;
        }
}

int cgroup_unit_path(const char *path, char *buf, size_t size) {
        const char *p = path;

        for (;;) {
                size_t len;

                p += strspn(p, "/");
                len = strcspn(p, "/");
                if (len == 0)
                        return -ENXIO;
                if (has_suffix(p, len, ".slice")) {
                        p += len;
                        continue;
                }
                if (!is_unit(p, len))
                        return -ENXIO;
                if ((size_t) (p + len - path) >= size)
                        return -ENOBUFS;
                memcpy(buf, path, (size_t) (p + len - path));
                buf[p + len - path] = 0;
                return 0;
        }
}

int cgroup_unified_path(const char *proc_cgroup, char *buf, size_t size) {
        const char *l = proc_cgroup;

        /* cgroup v2 is the line "0::/path"; on hybrid systems it is one of several */
        while (l && *l) {
                if (strncmp(l, "0::", 3) == 0) {
                        size_t n = strcspn(l + 3, "\n");
                        if (n >= size)
                                return -ENOBUFS;
                        memcpy(buf, l + 3, n);
                        buf[n] = 0;
                        return 0;
                }
                l = strchr(l, '\n');
                if (l)
                        l++;
        }
        return -ENODATA;
}
