/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the one-shot (un)registration the socket unit runs. Root: writes /proc/sys/kernel
 * and the saved-value files beside the socket. */
#pragma once

#include "config.h"

/* For units: register/unregister the socket in core_pattern from a process in the initial
 * mount namespace (the socket unit's ExecStartPost=/ExecStopPost=), remembering the previous
 * pattern in a file next to the socket. */
int register_oneshot(const char *socket_path, const Config *c);
int unregister_oneshot(const char *socket_path, const Config *c);
