/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The manager <-> worker boundary: fixed-size, typed messages over a SOCK_SEQPACKET pair.
 * Every message is checked for its exact length and for being allowed in the current phase;
 * anything else is fatal for the worker. The worker is untrusted once it has seen core bytes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_MAGIC UINT32_C(0x43445331) /* "CDS1" */
#define WORKER_CONTROL_FD 3

typedef enum MsgType {
        MSG_READY = 1,  /* worker → manager: sandboxed, waiting for a job */
        MSG_JOB = 2,    /* manager → worker: a crash, with [connection, output] fds */
        MSG_RESULT = 3, /* worker → manager: the core is received and written */
} MsgType;

typedef struct MsgHeader {
        uint32_t magic;
        uint32_t type;
} MsgHeader;

typedef struct MsgReady {
        MsgHeader hdr;
        uint32_t pid;
        uint32_t spare;
} MsgReady;

#define JOB_FLAG_STORE (UINT32_C(1) << 0) /* write the core to the output fd */

typedef struct MsgJob {
        MsgHeader hdr;
        uint32_t flags;
        uint32_t compression; /* Compression */
        int32_t compress_level;
        uint32_t spare;
        uint64_t external_size_max; /* bytes of core to store; the rest is cut */
        uint64_t process_size_max;  /* bytes of core to read at all */
} MsgJob;

/* Why a stored core is incomplete or missing. */
typedef enum CoreState {
        CORE_COMPLETE = 0,
        CORE_TRUNCATED_LIMIT = 1,  /* cut at ExternalSizeMax / ProcessSizeMax */
        CORE_TRUNCATED_EOF = 2,    /* the stream ended before the ELF headers said it would */
        CORE_UNKNOWN_END = 3,      /* not a parsable ELF core: stored as received */
} CoreState;

typedef struct MsgResult {
        MsgHeader hdr;
        int32_t error;    /* 0 or negative errno: output not usable (e.g. -ENOSPC) */
        uint32_t state;   /* CoreState */
        uint64_t bytes_in;  /* core bytes received */
        uint64_t bytes_out; /* bytes written to the output */
        uint64_t expected;  /* core size announced by its ELF headers, 0 if unknown */
} MsgResult;

#define PROTO_FDS_MAX 2

/* Sends one message with up to PROTO_FDS_MAX fds. */
int proto_send(int sock, const void *msg, size_t size, const int *fds, size_t n_fds);
/* Receives one message; fails with -EBADMSG unless it is exactly `size` bytes, has the magic
 * and `type`, and carries exactly n_fds fds (which are returned, O_CLOEXEC). Stray fds are
 * closed. Returns 0, -ECONNRESET on EOF, -EAGAIN if nothing is there yet. */
int proto_recv(int sock, uint32_t type, void *msg, size_t size, int *ret_fds, size_t n_fds);
