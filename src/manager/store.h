/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the core store. Manager (root): files are created, linked and deleted only in the
 * storage directory. */
#pragma once

#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "meta.h"
#include "pidfd-util.h"
#include "record.h"
#include "uid-class.h"
#include "vacuum.h"

#define STORED_CORE_MODE 0640
#define STORAGE_DIR_MODE 0755
/* The uid classes (uid-class.h, shared with coredumpctl): system users up to SYSTEM_UID_MAX,
 * nobody, and systemd's DynamicUser= range, whose uids are handed out to services and recycled
 * between unrelated ones, so a core must not stay readable by whoever holds the uid next. */
#define SYSTEM_UID_MAX UID_CLASS_SYSTEM_MAX
#define NOBODY_UID UID_CLASS_NOBODY
#define DYNAMIC_UID_MIN UID_CLASS_DYNAMIC_MIN
#define DYNAMIC_UID_MAX UID_CLASS_DYNAMIC_MAX

/* Opens (creating if needed) the storage directory, refusing a symlink. */
int store_open_dir(const char *path);
/* An unnamed file in the storage directory, root-owned STORED_CORE_MODE. */
int store_open_tmpfile(int dirfd);

/* Pure: whether a crash of actor may have owner's files deleted to make room for its core
 * (vacuum_may_displace: its own; a system uid's, an unprivileged owner's). */
bool store_may_displace(uid_t actor, uid_t owner);
/* Pure: whether uid may be given read access to its own cores: a regular user's, not a system
 * user, nobody, or a DynamicUser= uid. */
bool store_uid_may_read(uid_t uid);
/* Who besides root may read the stored core (UID_INVALID: nobody) — compat.md's rule. */
uid_t store_reader_uid(const PidfdInfo *info, const CrashMeta *meta);

typedef struct StoreAttrs {
        pid_t pid;
        uid_t uid;
        gid_t gid;
        int signal; /* 0 if unknown */
        uint64_t timestamp_usec;
        const char *hostname;
        bool truncated; /* user.coredump.truncated=1 (COREDUMP_TRUNCATED) */
        pid_t tid;      /* 0 if unknown */
        const char *thread_name;
        const CrashMeta *meta;
} StoreAttrs;

/* Sets xattrs and the ACL on fd, links it under name in dirfd, syncs the directory. */
int store_link(int dirfd, int fd, const char *name, const StoreAttrs *a, uid_t reader);
/* Writes the record in journal export format as dirfd/name (created unnamed, then linked),
 * readable like the core. */
int store_write_record(int dirfd, const char *name, const Record *r, uid_t reader);
#define STORE_BLOCK_SIZE 4096 /* a byte count rounded up to this when the file cannot say */
#define STORE_RESCAN_USEC (30 * USEC_PER_SEC) /* rescan the store at least this often */

/* What the manager knows of the store's size between scans. */
typedef struct StoreUsage {
        bool known;
        uint64_t bytes_cores;  /* at the last scan, plus what was stored since */
        uint64_t bytes_records; /* the same for records */
        uint64_t scanned_usec; /* CLOCK_MONOTONIC */
        bool said_unreachable; /* the log said KeepFree= cannot be restored by the vacuum */
        bool said_stopped;     /* the log said the vacuum stopped at the core just stored */
        /* the stored cores' bytes by owner, unordered (what each crash may not displace is read
         * from them): at their last scan, plus the cores stored and less those deleted here since */
        VacuumOwner *owners;
        size_t n_owners;
        bool owners_known;
        uint64_t owners_scanned_usec; /* CLOCK_MONOTONIC */
} StoreUsage;

/* Frees and forgets all that is known of the store (another directory, the daemon's end). */
void store_usage_reset(StoreUsage *u);
/* Forgets the sizes (the next crash scans the store again), not what the log said. */
void store_usage_forget(StoreUsage *u);

/* What the stored file fd takes on disk (as du counts it); bytes rounded up if fstat fails. */
uint64_t store_allocated(int fd, uint64_t bytes);

/* Keeps the store within MaxUse=/KeepFree= after a core of added bytes was stored (keep, its
 * name, which carries its owner) or, with keep NULL, periodically: vacuum.h's rules. After a
 * core, only files its crash may displace go (vacuum_may_displace: a user's crash never costs
 * another owner a file; a system uid's takes from the user using the most, then its own oldest),
 * never the core just stored unless it alone, beside the cores it may not displace, is past
 * MaxUse= (it grew past its cap). The periodic vacuum deletes the oldest cores of the owner using
 * the most for MaxUse= and MaxAgeSec= (new cores are capped so that no user's crash puts the
 * store past MaxUse=) and does not pursue KeepFree= (anyone who can write to the file system can
 * push it below: new cores are capped by it instead, and a crash's own vacuum frees for it what
 * it may displace); records past their budget go the unprivileged owners' first, the system uids'
 * only when theirs alone are past it (records are written after a crash's vacuum, so a user's may
 * push the total past it). Records outlive
 * their cores within their share (vacuum.h). Scans the directory only when the running estimate
 * says the limits may be broken or the last scan is older than STORE_RESCAN_USEC (others may have
 * changed the store): a scan per crash costs a crash storm O(cores) each. True if keep itself was
 * deleted. */
bool store_vacuum(int dirfd, const Config *c, const char *keep, uint64_t added, StoreUsage *u);
/* Deletes the stored core name (its crash went elsewhere, or a user asked) and takes it out of
 * the estimate and its owner's total. */
int store_unlink_core(int dirfd, const char *name, StoreUsage *u);
/* Before a core of uid is written: the limits kept with only the files that crash may displace
 * (KeepFree= included: a disk filled by a user costs only that user's cores). */
void store_vacuum_for(int dirfd, const Config *c, uid_t uid, StoreUsage *u);
/* After the record name (record.COMM.UID...) was written: the records' budget kept with only the
 * files its crash may displace (a user's record pushes out that user's own older ones), so that
 * records past the budget do not wait for the periodic vacuum. */
void store_vacuum_after_record(int dirfd, const Config *c, const char *name, StoreUsage *u);

/* A core gets no file when MaxUse= and KeepFree= leave less than this for it (not a block). */
#define STORE_ROOM_MIN UINT64_C(4096)
/* What a stored file may take on disk beyond the bytes its cap counts: its last block, and the
 * xattrs and the ACL set when it is linked (a block of their own on ext4). The cap leaves it
 * out, so that the vacuum after the core, which counts allocated blocks, finds it within. */
#define STORE_FILE_OVERHEAD (UINT64_C(2) * STORE_BLOCK_SIZE)
/* The most a core of raw_max bytes (ExternalSizeMax=, RLIMIT_CORE) may take stored: zstd and lz4
 * add less than 1/STORE_COMPRESS_GROWTH to incompressible input, and a frame's header and end;
 * its room is granted no larger (a reservation counted by the cores starting beside it). */
#define STORE_COMPRESS_GROWTH 128U
uint64_t store_core_bound(uint64_t raw_max);
/* Kept free beside a core, for its record: the base record (known), the stack traces and
 * packages (at most ANALYSIS_BYTES_MAX), the final fields. */
#define STORE_RECORD_SLACK ((uint64_t) ANALYSIS_BYTES_MAX + (UINT64_C(64) << 10))

/* The most a core of uid starting now may take on disk (vacuum_core_room: MaxUse= less in_flight,
 * what the other cores in flight were granted or hold if more, and less the stored cores uid may
 * not displace (*ret_held); the file system's free space above KeepFree= and its record's room:
 * record_len, its base record's size, and STORE_RECORD_SLACK), and the free space the file
 * system must keep while it is written (KeepFree= and that room); 0 if the file system or the
 * store cannot be read. The held bytes come from u's owner totals: the store is scanned only
 * when they are unknown or older than STORE_RESCAN_USEC (a scan per crash cost a crash storm
 * O(cores) each). Until then others' changes are not seen, as by the size estimate: root's
 * deletions (coredumpctl delete/vacuum) leave the totals high (less room for users' crashes),
 * cores root copies in leave them low. */
uint64_t store_core_cap(int dirfd, const Config *c, uid_t uid, uint64_t in_flight, size_t record_len,
                        StoreUsage *u, uint64_t *ret_keep_free, uint64_t *ret_held);
/* A crash is granted 1/STORE_GRANT_SHARE of the room left (store_core_cap): its size is not known
 * before it is written, and the cores starting beside it, which may not count on its grant,
 * share the rest the same way (a storm of small cores is stored; cores started together never
 * add up to more than MaxUse=). */
#define STORE_GRANT_SHARE 2U
/* Whether a core of uid starting now would be granted less than STORE_ROOM_MIN; if so, why (in
 * why). The room granted to it in *ret_room: its share of store_core_cap, and no more than a core
 * of raw_max bytes (ExternalSizeMax=, RLIMIT_CORE) may take stored (store_core_bound). */
bool store_no_room(int dirfd, const Config *c, uid_t uid, uint64_t in_flight, size_t record_len, uint64_t raw_max,
                   StoreUsage *u, uint64_t *ret_room, char *why, size_t size);
