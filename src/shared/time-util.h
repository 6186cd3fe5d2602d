/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: clock readings in microseconds. Shared, no I/O. */
#pragma once

#include <stdint.h>
#include <time.h>

uint64_t now_usec(clockid_t clock);
