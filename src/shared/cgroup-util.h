/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: what systemd's cgroup layout says about a process. Shared, pure: parses text the
 * caller read. */
#pragma once

#include <sys/types.h>

#define UNIT_NAME_MAX 256

/* What systemd's cgroup layout tells about a process, from its unified cgroup path:
 *   /system.slice/foo.service                               unit foo.service, slice system.slice
 *   /user.slice/user-1000.slice/session-3.scope             unit session-3.scope, session 3, owner 1000
 *   /user.slice/user-1000.slice/user@1000.service/app.slice/x.service
 *                                                           unit user@1000.service, user unit x.service */
typedef struct CgroupInfo {
        char unit[UNIT_NAME_MAX];
        char user_unit[UNIT_NAME_MAX];
        char slice[UNIT_NAME_MAX];
        char session[64];
        uid_t owner_uid; /* UID_INVALID if none */
} CgroupInfo;

/* Pure. Fields that do not apply stay empty. */
void cgroup_parse(const char *path, CgroupInfo *ret);
/* The prefix of path up to and including its first unit below the leading slices (systemd's
 * unit path: "/machine.slice/systemd-nspawn@ct.service/payload" gives
 * "/machine.slice/systemd-nspawn@ct.service"); -ENXIO if the first name past the slices is not a
 * unit's, -ENOBUFS if buf is too small. */
int cgroup_unit_path(const char *path, char *buf, size_t size);
/* The unified ("0::") path from /proc/<pid>/cgroup contents, copied into buf. */
int cgroup_unified_path(const char *proc_cgroup, char *buf, size_t size);
