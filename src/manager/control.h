/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the control socket coredumpctl deletes through. Manager (root): binds one socket
 * anyone may connect to; deletes only in the storage directory. */
#pragma once

/* The control socket: coredumpctl asks coredumpd to delete a stored core or record. Anyone may
 * connect; root may delete any stored file, another user only a file whose ACL grants that
 * user read access (their own plain crash). One request per connection, bounded in size and
 * time; at most CONTROL_CONNECTIONS_MAX at once, CONTROL_CONNECTIONS_PER_UID of them per user
 * (root's beside them), so that a user holding connections open cannot lock the others out. */

#include "manager.h"

#define CONTROL_CONNECTIONS_MAX 16U
/* coredumpctl makes one request at a time: two leave room for a second coredumpctl */
#define CONTROL_CONNECTIONS_PER_UID 2U
#define CONTROL_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define CONTROL_SOCKET_MODE 0666
#define CONTROL_DIR_MODE 0755

/* Binds path (its directory is created if missing) and serves it from the event loop. A
 * failure is logged and leaves the daemon without the control socket (crashes come first). */
void control_setup(Manager *m, const char *path);
void control_free(Manager *m);
