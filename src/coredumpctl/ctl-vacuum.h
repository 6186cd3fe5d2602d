/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of coredumpctl vacuum (deletes in the storage directory, as the invoking user) and
 * disk-usage (read-only). */
#pragma once

#include "ctl.h"

int verb_vacuum(const CtlArgs *a);
int verb_disk_usage(const CtlArgs *a);
