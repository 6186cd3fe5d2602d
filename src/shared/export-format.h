/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: reading journal export entries (the sidecar records). Shared, pure parsing: no
 * I/O. */
#pragma once

/* Journal export format (the sidecar records beside the cores, `journalctl -o export`):
 * entries of fields, each "NAME=value\n" or "NAME\n" le64(len) value "\n", an entry ended by an
 * empty line. Pure parsing over (buffer, length): the bytes come from files another user may
 * have influenced, so every length is checked. */

#include <stddef.h>

#include "record.h"

/* The next field of the entry at *pos: 1 and *ret filled, 0 at the end of the entry (the empty
 * line is consumed) or of the buffer, -EBADMSG if the bytes are malformed. Names may start with
 * "__" (export metadata such as __REALTIME_TIMESTAMP). */
int export_next_field(const uint8_t *buf, size_t len, size_t *pos, RecordField *ret);
