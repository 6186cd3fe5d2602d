/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl.h"

int verb_vacuum(const CtlArgs *a);
int verb_disk_usage(const CtlArgs *a);
