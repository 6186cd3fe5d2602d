/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the worker's core stream. Worker (sandboxed): reads the connection, writes the
 * output and journal descriptors it is given, nothing else. */
#pragma once

#include "proto.h"
#include "sink.h"

/* What the stream kept for the stack traces: a small ELF core rebuilt from the notes, the
 * stacks and the modules' first pages (see capture.h), or why there is none. */
typedef struct CoreCapture {
        uint8_t *core;
        size_t len;
        char why_not[160];
} CoreCapture;

void core_capture_free(CoreCapture *c);

/* Bytes read from the connection per read() (and per piece of a spool replayed), faulted in
 * before the job. A read returns what the socket holds, which the kernel's send buffer bounds
 * (a few hundred KiB at the defaults): a larger buffer is only more pages to fault in for every
 * crash. */
#define CORE_READ_CHUNK (256U << 10)
/* The file system's free space is asked again each time the stored file grew by this much:
 * concurrent workers each overshoot KeepFree= by at most this and a chunk's bound. */
#define STORE_SPACE_CHECK_BYTES (1U << 20)
/* The core goes to the sink in pieces of at most this, each checked against the room first;
 * near the room's end the pieces halve down to STORE_PIECE_MIN. */
#define STORE_PIECE_MAX (64U << 10)
#define STORE_PIECE_MIN 512U
/* A spool is decided on once the ELF headers are in, if they come within this many bytes... */
#define SPOOL_DECIDE_BY (1U << 20)
/* ...and only for at least this much more core to store (less compresses faster than it is
 * written into a memfd and read back). */
#define SPOOL_WANT_MIN (64U << 10)

/* The worker's RLIMIT_FSIZE for a job: its store room (or WORKER_FSIZE_FLOOR, what its memfds
 * need), plus the core for Storage=journal. The spool never needs more. */
uint64_t job_file_size_limit(const MsgJob *job);

/* The read buffer mapped and faulted in now, before the job (a fault per page as the core
 * comes in costs its time with the task held); core_receive() takes it, or maps its own. */
int core_receive_prepare(void);

/* What core_receive() calls back (the struct is required; each field may be NULL: nothing). */
typedef struct ReceiveHooks {
        /* asks the manager for bytes of spool; *granted is what it may hold (0: none), *ret_fd the
         * memfd the manager made for it, sealed at that size (taken) */
        int (*ask)(uint64_t bytes, uint64_t *granted, int *ret_fd);
        /* the room that came with the job (MsgJob.spool_given): a memfd sealed at that size before
         * a byte of the core was read, taken by the spool if it uses that room (-EBADF: none) */
        int given_fd;
        /* between two chunks of the core, for what else the worker waits on */
        void (*tick)(void);
        /* a spooled core only: once the connection is closed (received: bytes of the core), before
         * the spool is compressed, for what the task's release still waits on besides; <0 fails
         * the core (not compressed) */
        int (*received)(uint64_t received);
} ReceiveHooks;

/* Streams the core from conn into sink (NULL: read and drop) until EOF or the job's limits,
 * storing only while the file, finished, stays within store_size_max and the file system keeps
 * KeepFree= (res->store_stop says why it stopped; reading goes on for the stack traces),
 * closes conn as soon as the kernel has nothing more to give (that releases the task), then
 * finishes and syncs the output. With hooks->ask (and the job's spool_max), the part of the core
 * after its headers is held in a spool (the room given with the job, or granted on asking) while
 * received and compressed after the release (res->spooled says how much the spool held), after
 * hooks->received. hooks->tick is called after each chunk read. With
 * journal_fd >= 0 the core is also copied there, up to the job's journal_size_max
 * (*ret_journal_fit says whether all of it fit). Fills res (with what the core's notes say) and
 * ret_capture; returns 0 or negative errno for a local failure. */
int core_receive(int conn, Sink *sink, int out_fd, int journal_fd, const MsgJob *job, const ReceiveHooks *hooks,
                 MsgResult *res, bool *ret_journal_fit, CoreCapture *ret_capture);
