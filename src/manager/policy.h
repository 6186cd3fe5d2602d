/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "pidfd-util.h"

typedef struct Manager Manager;

/* What to answer the kernel's request: COREDUMP_KERNEL|COREDUMP_WAIT to take the core, or
 * COREDUMP_REJECT (why says so). Decided before a byte of the core is sent. */
uint64_t policy_decide(Manager *m, const PidfdInfo *info, const char **why);
