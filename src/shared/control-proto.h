/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the coredumpctl to coredumpd control protocol (DELETE). Shared: constants and a pure
 * check, no I/O. */
#pragma once

/* coredumpctl → coredumpd control requests, over a SOCK_SEQPACKET socket anyone may connect to:
 * one request per connection, "DELETE <name>", answered "OK" or "ERR <errno>". The daemon
 * decides from the peer's SO_PEERCRED what the caller may do. */

#include <stdbool.h>

#define CONTROL_MSG_MAX 512U
#define CONTROL_NAME_MAX 255U
#define CONTROL_DELETE "DELETE"
#define CONTROL_OK "OK"
#define CONTROL_ERR "ERR"

/* A file name coredumpd writes in its store: "core.*" or "record.*.export", printable, no '/'. */
bool control_name_valid(const char *name);
