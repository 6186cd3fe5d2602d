/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which uids are a person's: the rule coredumpd stores by (store.c) and coredumpctl believes
 * journal entries by (ctl-journal.c). Shared, pure: header only. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Below this uid a user is a system user (systemd's SYSTEM_UID_MAX). */
#define UID_CLASS_SYSTEM_MAX 999U
#define UID_CLASS_NOBODY 65534U
/* systemd's DynamicUser= range: uids recycled between unrelated services */
#define UID_CLASS_DYNAMIC_MIN 61184U
#define UID_CLASS_DYNAMIC_MAX 65519U

/* Whether a crash of uid is its own user's (a person's): not a system user, nobody, or a
 * DynamicUser= uid. Crashes of the others are never theirs to read, and their journal entries
 * are always logged by the collector's own user. */
static inline bool uid_is_personal(uid_t uid) {
        if (uid <= UID_CLASS_SYSTEM_MAX || uid == UID_CLASS_NOBODY || uid == (uid_t) -1)
                return false;
        return uid < UID_CLASS_DYNAMIC_MIN || uid > UID_CLASS_DYNAMIC_MAX;
}
