/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: a record as one journal entry over journald's native socket. Shared (worker and
 * manager): connects only to /run/systemd/journal/socket (a memfd for large entries). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Most fields one entry may have (a record of RECORD_MAX has far fewer). */
#define JOURNAL_FIELDS_MAX 256U

/* Sends one journal entry made of the record's fields ("_CDS_" ones are internal and left out)
 * plus, if core_field is not NULL, the prepared "COREDUMP=<core>" of core_len bytes. flags go to
 * send(): MSG_DONTWAIT where a stopped journald must not stop the caller. */
int journal_send_record(const uint8_t *rec, size_t len, const void *core_field, size_t core_len, int flags);
/* The memfd the next entry too large for a datagram is written into (taken, and closed once
 * used): made ahead by a process whose filter refuses memfd_create, bounded by its seals
 * (memfd-slot.h). Without one, such an entry makes its own. */
void journal_send_use_memfd(int fd);
