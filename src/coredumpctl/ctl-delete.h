/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl-entry.h"
#include "ctl.h"

/* delete MATCHES: removes the matching entries' cores and records from the store. root does it
 * directly; anyone else asks coredumpd over its control socket, which deletes only what is the
 * caller's own (the core's ACL names the caller). The journal entries stay ("missing"). */
int verb_delete(const CtlArgs *a, const EntryList *l);
