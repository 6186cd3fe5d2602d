/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of coredumpctl delete (the invoking user's privileges): unlinks in the store as root,
 * otherwise asks coredumpd over its control socket. */
#pragma once

#include "ctl-entry.h"
#include "ctl.h"

/* delete MATCHES: removes the matching entries' cores and records from the store. root does it
 * directly; anyone else asks coredumpd over its control socket, which deletes only what is the
 * caller's own (the core's ACL names the caller). The journal entries stay ("missing"). */
int verb_delete(const CtlArgs *a, const EntryList *l);
