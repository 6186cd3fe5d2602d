/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kernel-abi.h"
#include "manager.h"
#include "policy.h"

uint64_t policy_decide(Manager *m, const PidfdInfo *info, const char **why) {
        if (m->config.storage == STORAGE_NONE && m->config.process_size_max == 0) {
                *why = "Storage=none and ProcessSizeMax=0: nothing would use the core";
                return COREDUMP_REJECT;
        }
        /* WAIT keeps the task (and /proc/<pid>) until we close the connection. */
        return COREDUMP_KERNEL | COREDUMP_WAIT;
}
