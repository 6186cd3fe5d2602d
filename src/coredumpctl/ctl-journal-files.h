/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the journals coredumpctl's arguments select, each with whether the local journald
 * wrote its files. Opens journal files and lists journal directories, as the invoking user. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-journal.h>

#include "ctl.h"

/* Journal files of other machines and containers read at once (--all, --root). */
#define FOREIGN_JOURNAL_FILES_MAX 4096U

/* The index-th set of journal files the arguments select (index 0, 1, ...), opened into *ret:
 *   default: this machine's journald's own files (sd_journal_open(), local only); with --all, as
 *     index 1, every other file in /var/log/journal and /run/log/journal (other machines'
 *     directories, systemd-journal-remote's, containers' linked there);
 *   --root: the same two sets in that tree, "this machine" being the tree's /etc/machine-id;
 *   -D DIR, --file=FILE...: those, local only if DIR (each FILE's directory) is the local
 *     journald's own /var/log/journal/MACHINE_ID or /run/log/journal/MACHINE_ID.
 * *ret_foreign: the files are not the local journald's own. Who wrote such a file chose every
 * field of its entries, _UID and _MACHINE_ID included (a container's root, a journal-upload
 * client): their entries are never local root's word and never name a file here.
 * Returns 1 (opened), 0 (no such set, or no journal there: records may still be read), or a
 * negative errno (logged). */
int journal_open_nth(const CtlArgs *a, unsigned index, sd_journal **ret, bool *ret_foreign);

void journal_closep(sd_journal **j);
