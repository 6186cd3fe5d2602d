/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the zygote: coredump-worker started once, forking a single-use worker per crash.
 * Worker binary, before any sandbox: its own process and the descriptors coredumpd gives it. */
#pragma once

/* Dies with the coredumpd that started it, checking that its parent is the control socket's
 * peer (a process reparented before asking stops: -ESRCH). */
int die_with_manager(void);

/* Runs the zygote: READY, then a worker for each FORK until coredumpd closes the socket.
 * Returns 0 (exit) or a negative errno in the zygote, and 1 in a new worker, whose control
 * socket is on WORKER_CONTROL_FD and log pipe on stderr (it goes on as a started worker). */
int zygote_run(void);
