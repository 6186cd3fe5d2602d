/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: an entry's stored core as systemd's COREFILE column shows it (state, size, path
 * under --root). Looked at with the invoking user's privileges, never read. */
#pragma once

#include <limits.h>
#include <stdint.h>

#include "ctl-entry.h"
#include "ctl.h"

/* Where systemd-coredump stores cores: its entries name files there, which stay listed and
 * readable once coredump-socket has replaced it. */
#define SYSTEMD_COREDUMP_DIR "/var/lib/systemd/coredump"

/* Where an entry's core is and whether the caller can have it: systemd's COREFILE column
 * (present, missing, inaccessible, error, journal, none, truncated; NULL for entries that are
 * not coredumps), and ours: remote (an external core of another machine's entry, not here). */
typedef struct CoreFile {
        const char *state;
        const char *color;
        uint64_t size; /* UINT64_MAX: unknown */
        char path[PATH_MAX]; /* under --root; empty if the entry names no file */
        bool foreign; /* the file's name is not this crash's (state "error"): never opened */
        bool outside_store; /* the file is in no store the configuration names (state "error") */
} CoreFile;

/* Whether path names the core of the entry's very crash: coredumpd (root) named it
 * core.COMM.UID.BOOTID.PID.USEC[.EXT] after the crash, and only root renames in the store, so an
 * entry (whose writer may have made it up) naming another crash's core does not pass. */
bool corefile_of_entry(const Entry *e, const char *path);
void corefile_analyze(const CtlArgs *a, const Entry *e, CoreFile *ret);
/* The entry's core file for reading (after corefile_analyze() found it this crash's and
 * present): opened once, directly in its store without following a symlink, and a regular file
 * (-EBADFD otherwise; -EREMOTE: in no store). */
int corefile_open(const CtlArgs *a, const Entry *e);
/* Whether the entry came from another machine (through systemd-journal-remote, or journals copied
 * here): its _MACHINE_ID is not this one's (under --root, that tree's). Unknown either way: not.
 * (An entry from a file the local journald did not write, Entry.foreign, is never this machine's
 * word whatever its _MACHINE_ID says.) */
bool entry_from_other_machine(const CtlArgs *a, const Entry *e);
