/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: the journals coredumpctl's arguments select, each with whether the local journald
 * wrote its files. Opens journal files and lists journal directories, as the invoking user. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-journal.h>

#include "ctl.h"

/* Journal files of other machines and containers read at most (--all, --root). */
#define FOREIGN_JOURNAL_FILES_MAX 4096U

/* The sets of journal files the arguments select, in order, each with whether the local journald
 * wrote its files:
 *   default: this machine's journald's own directories, /var/log/journal/MACHINE_ID and
 *     /run/log/journal/MACHINE_ID (nothing else there: not the top level's files, not another
 *     id's directory); with --all, besides, every other journal file in /var/log/journal and
 *     /run/log/journal (other machines' directories, systemd-journal-remote's, containers'
 *     linked there), each file a set of its own, opened only if it is a regular file;
 *   --root: the same in that tree, "this machine" being the tree's /etc/machine-id;
 *   -D DIR, --file=FILE...: those, one set, local only if DIR (each FILE's directory) is the
 *     local journald's own directory.
 * Who wrote another's file chose every field of its entries, _UID and _MACHINE_ID included (a
 * container's root, a journal-upload client): their entries are never local root's word and
 * never name a file here. */
size_t journal_sets(const CtlArgs *a);
/* The index-th set (0 .. journal_sets() - 1) opened into *ret, *ret_foreign: its files are not
 * the local journald's own. 1: opened; 0: nothing to read there (a file that cannot be opened,
 * skipped as journalctl skips it); a negative errno for -D or --file (logged). */
int journal_open_nth(const CtlArgs *a, size_t index, sd_journal **ret, bool *ret_foreign);

void journal_closep(sd_journal **j);
