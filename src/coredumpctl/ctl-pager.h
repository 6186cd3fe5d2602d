/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the pager around coredumpctl's output (a forked child, only on a terminal). */
#pragma once

#include "ctl.h"

/* On a terminal (and without --no-pager), sends stdout through $SYSTEMD_PAGER, $PAGER or less
 * until pager_close(). Nothing in a pipe. Idempotent. */
void pager_open(const CtlArgs *a);
/* Flushes stdout, ends the pager's input and waits for the user to quit it. */
void pager_close(void);
