/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The storage directory: unnamed files for cores and records, xattrs and ACL, linking, vacuum.
 * Manager (root): creates, links and deletes files only in that directory (made if missing). */
#include <acl/libacl.h>
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "log.h"
#include "record-fields.h"
#include "macro.h"
#include "store.h"
#include "time-util.h"
#include "vacuum-plan.h"
#include "vacuum.h"

/* the vacuum's privileged owners are the system users the ACL rule knows */
_Static_assert(VACUUM_PRIVILEGED_UID_MAX == SYSTEM_UID_MAX, "system uids differ");

int store_open_dir(const char *path) {
        bool made = mkdir(path, STORAGE_DIR_MODE) >= 0;
        int fd;

        if (!made && errno != EEXIST)
                return negative_errno();
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        /* the unit's UMask=0077 took the bits users need to reach their cores through */
        if (made && fchmod(fd, STORAGE_DIR_MODE) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        return fd;
}

int store_open_tmpfile(int dirfd) {
        int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, STORED_CORE_MODE);

        if (fd < 0)
                return negative_errno();
        /* The umask may have taken bits away; the mode is part of the contract. */
        if (fchmod(fd, STORED_CORE_MODE) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        return fd;
}

bool store_may_displace(uid_t actor, uid_t owner) {
        return vacuum_may_displace(actor, owner);
}

bool store_uid_may_read(uid_t uid) {
        return uid_is_personal(uid);
}

uid_t store_reader_uid(const PidfdInfo *info, const CrashMeta *meta) {
        /* Only a plain user dump of a process that never changed credentials is the user's. */
        if (!(info->coredump_mask & PIDFD_COREDUMP_USER) || (info->coredump_mask & PIDFD_COREDUMP_ROOT))
                return UID_INVALID;
        if (!meta->proc_valid || !meta->auxv_valid || meta->at_secure)
                return UID_INVALID;
        if (info->ruid != info->euid || info->rgid != info->egid)
                return UID_INVALID;
        if (!store_uid_may_read(info->ruid))
                return UID_INVALID;
        return info->ruid;
}

static int set_acl(int fd, uid_t reader) {
        char text[128];
        acl_t acl;
        int r = 0;

        snprintf(text, sizeof text, "u::rw-,u:%u:r--,g::r--,m::r--,o::---", (unsigned) reader);
        acl = acl_from_text(text);
        if (!acl)
                return negative_errno();
        if (acl_set_fd(fd, acl) < 0)
                r = negative_errno();
        acl_free(acl);
        return r;
}

static int set_xattr_str(int fd, const char *name, const char *value) {
        if (fsetxattr(fd, name, value, strlen(value), 0) < 0)
                return negative_errno();
        return 0;
}

static int set_xattr_u64(int fd, const char *name, uint64_t v) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRIu64, v);
        return set_xattr_str(fd, name, buf);
}

static int set_xattrs(int fd, const StoreAttrs *a) {
        int r = 0;

        r = r ?: set_xattr_u64(fd, "user.coredump.pid", (uint64_t) a->pid);
        r = r ?: set_xattr_u64(fd, "user.coredump.uid", a->uid);
        r = r ?: set_xattr_u64(fd, "user.coredump.gid", a->gid);
        r = r ?: set_xattr_u64(fd, "user.coredump.timestamp", a->timestamp_usec);
        r = r ?: set_xattr_str(fd, "user.coredump.hostname", a->hostname);
        if (a->signal > 0)
                r = r ?: set_xattr_u64(fd, "user.coredump.signal", (uint64_t) a->signal);
        if (a->meta->rlimit_valid) /* as the kernel prints %c: unlimited is 2^64-1 */
                r = r ?: set_xattr_u64(fd, "user.coredump.rlimit", a->meta->rlimit_core);
        if (a->tid > 0)
                r = r ?: set_xattr_u64(fd, "user.coredump.tid", (uint64_t) a->tid);
        if (a->thread_name && a->thread_name[0])
                r = r ?: set_xattr_str(fd, "user.coredump.thread_name", a->thread_name);
        if (a->truncated)
                r = r ?: set_xattr_str(fd, "user.coredump.truncated", "1");
        if (a->meta->proc_valid && a->meta->comm[0])
                r = r ?: set_xattr_str(fd, "user.coredump.comm", a->meta->comm);
        if (a->meta->proc_valid && a->meta->exe[0])
                r = r ?: set_xattr_str(fd, "user.coredump.exe", a->meta->exe);
        return r;
}

static int link_fd(int dirfd, int fd, const char *name) {
        char proc[64];

        if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) >= 0)
                return 0;
        if (errno != ENOENT && errno != EPERM)
                return negative_errno();
        /* Without CAP_DAC_READ_SEARCH, AT_EMPTY_PATH is refused; /proc/self/fd works. */
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) < 0)
                return negative_errno();
        return 0;
}

int store_link(int dirfd, int fd, const char *name, const StoreAttrs *a, uid_t reader) {
        int r;

        r = set_xattrs(fd, a);
        if (r < 0)
                log_warning_errno(r, "Failed to set xattrs on %s, storing it without: %m", name);
        if (reader != UID_INVALID) {
                r = set_acl(fd, reader);
                if (r < 0)
                        log_warning_errno(r, "Failed to grant uid %u read access to %s: %m", (unsigned) reader, name);
        }
        r = link_fd(dirfd, fd, name);
        if (r < 0)
                return r;
        /* linked: the core is there, whatever else fails now (the caller must not undo it) */
        if (fsync(dirfd) < 0)
                log_warning_errno(negative_errno(), "Failed to sync the store after linking %s: %m", name);
        return 0;
}

int store_write_record(int dirfd, const char *name, const Record *r, uid_t reader) {
        _cleanup_close_ int fd = store_open_tmpfile(dirfd);
        int e;

        if (fd < 0)
                return fd;
        e = record_write_export(r->buf, r->len, fd);
        if (e < 0)
                return e;
        if (reader != UID_INVALID && (e = set_acl(fd, reader)) < 0)
                return e;
        if (fsync(fd) < 0)
                return negative_errno();
        return link_fd(dirfd, fd, name);
}

static uint64_t sub_sat(uint64_t a, uint64_t b) {
        return a > b ? a - b : 0;
}

void store_usage_reset(StoreUsage *u) {
        free(u->owners);
        *u = (StoreUsage) {};
}

void store_usage_forget(StoreUsage *u) {
        u->known = u->owners_known = false;
}

static VacuumOwner *owner_of(StoreUsage *u, uid_t uid) {
        for (size_t i = 0; i < u->n_owners; i++)
                if (u->owners[i].uid == uid)
                        return &u->owners[i];
        return NULL;
}

/* A core of uid took bytes more: its owner's total follows (a new owner is appended). */
static void owners_add(StoreUsage *u, uid_t uid, uint64_t bytes) {
        VacuumOwner *o;

        if (!u->owners_known)
                return;
        o = owner_of(u, uid);
        if (o) {
                o->bytes = o->bytes > UINT64_MAX - bytes ? UINT64_MAX : o->bytes + bytes;
                return;
        }
        o = reallocarray(u->owners, u->n_owners + 1, sizeof *o);
        if (!o) {
                u->owners_known = false;
                return;
        }
        u->owners = o;
        u->owners[u->n_owners++] = (VacuumOwner) { .uid = uid, .bytes = bytes };
}

/* The stored core name (bytes on disk) went: its owner's total follows. A name that says no
 * owner (the scan counts such a file by its inode's owner) or an owner the totals do not know
 * (a file added by someone else since the scan) makes them unknown: the next crash scans. */
static void owners_sub(StoreUsage *u, const char *name, uint64_t bytes) {
        VacuumOwner *o;
        uint64_t usec;
        uid_t uid;

        if (!u->owners_known)
                return;
        if (vacuum_parse_name(name, &uid, &usec) < 0 || !(o = owner_of(u, uid))) {
                u->owners_known = false;
                return;
        }
        o->bytes = sub_sat(o->bytes, bytes);
}

static void report_vacuumed(const char *name, uint64_t bytes, void *userdata) {
        StoreUsage *u = userdata;

        if (strncmp(name, "core.", 5) == 0) {
                owners_sub(u, name, bytes);
                log_info("Vacuumed %s (%llu bytes) to keep MaxUse=/KeepFree=/MaxAgeSec=; its record stays", name,
                         (unsigned long long) bytes);
        } else
                log_info("Vacuumed %s (%llu bytes): records may take 1/%u of MaxUse= (at least %llu MiB), and none "
                         "older than MaxAgeSec=", name, (unsigned long long) bytes, VACUUM_RECORDS_SHARE,
                         (unsigned long long) (VACUUM_RECORDS_MIN >> 20));
}

/* What the vacuum would not do, said once until it changes (not per crash). */
static void report_refusals(const VacuumStats *s, const StoreUsage *u) {
        if (s->keep_free_unreachable && !u->said_unreachable)
                log_warning("The file system of the store is below KeepFree= by more than all its cores: deleting "
                            "them would not restore it, none deleted for it (something else fills the disk)");
        if (s->stopped_at_keep && !u->said_stopped)
                log_info("The store stays past MaxUse= for now: nothing the crash may displace is left (a user's "
                         "crash deletes only that user's older files), or the owner using the most has only the core "
                         "just stored left");
        if (s->keep_deleted)
                log_warning("The core just stored was larger than what MaxUse= leaves beside the cores its crash may "
                            "not displace: deleted, no other core was");
}

uint64_t store_allocated(int fd, uint64_t bytes) {
        struct stat st;

        if (fd >= 0 && fstat(fd, &st) >= 0)
                return (uint64_t) st.st_blocks * 512;
        return ALIGN_TO(bytes, STORE_BLOCK_SIZE);
}

static VacuumLimits limits_of(const Config *c) {
        return (VacuumLimits) {
                .max_use = c->max_use,
                .keep_free = c->keep_free,
                .max_age_usec = c->max_age_usec,
                .records_min = VACUUM_RECORDS_MIN,
                .now_usec = now_usec(CLOCK_REALTIME),
        };
}

uint64_t store_core_bound(uint64_t raw_max) {
        uint64_t grown = raw_max / STORE_COMPRESS_GROWTH + STORE_FILE_OVERHEAD;

        return raw_max > UINT64_MAX - grown ? UINT64_MAX : raw_max + grown;
}

/* What a core of uid starting now has room for, and what decided it. */
typedef struct CoreRoom {
        uint64_t room;        /* the cap */
        uint64_t room_others; /* the cap if uid could displace every stored core */
        uint64_t keep_free;   /* KeepFree= and the record's room */
        uint64_t held;        /* stored cores uid may not displace */
} CoreRoom;

/* What the stored cores a crash of uid may not displace take: from the owners' totals, scanned
 * again when unknown or older than STORE_RESCAN_USEC. */
static int store_held(int dirfd, uid_t uid, StoreUsage *u, uint64_t *ret) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (!u->owners_known || now - u->owners_scanned_usec >= STORE_RESCAN_USEC) {
                VacuumOwner *o = NULL;
                size_t n = 0;
                int r = vacuum_owners(dirfd, &o, &n);

                if (r < 0)
                        return r;
                free(u->owners);
                u->owners = o;
                u->n_owners = n;
                u->owners_known = true;
                u->owners_scanned_usec = now;
        }
        *ret = vacuum_held_of(u->owners, u->n_owners, uid);
        return 0;
}

static bool core_room(int dirfd, const Config *c, uid_t uid, uint64_t in_flight, size_t record_len, StoreUsage *u,
                      CoreRoom *ret) {
        VacuumLimits l = limits_of(c);
        uint64_t max_use, keep_free, avail, held = 0, record_room = (uint64_t) record_len + STORE_RECORD_SLACK;

        *ret = (CoreRoom) { .keep_free = UINT64_MAX };
        if (!vacuum_effective_limits(dirfd, &l, &max_use, &keep_free, &avail) || store_held(dirfd, uid, u, &held) < 0)
                return false;
        /* the crash's record must still fit when the core has taken its room */
        keep_free = keep_free > UINT64_MAX - record_room ? UINT64_MAX : keep_free + record_room;
        *ret = (CoreRoom) {
                .room = sub_sat(vacuum_core_room(max_use, keep_free, avail, in_flight, held), STORE_FILE_OVERHEAD),
                .room_others = sub_sat(vacuum_core_room(max_use, keep_free, avail, in_flight, 0), STORE_FILE_OVERHEAD),
                .keep_free = keep_free,
                .held = held,
        };
        return true;
}

uint64_t store_core_cap(int dirfd, const Config *c, uid_t uid, uint64_t in_flight, size_t record_len,
                        StoreUsage *u, uint64_t *ret_keep_free, uint64_t *ret_held) {
        CoreRoom cr;

        (void) core_room(dirfd, c, uid, in_flight, record_len, u, &cr);
        *ret_keep_free = cr.keep_free;
        *ret_held = cr.held;
        return cr.room;
}

bool store_no_room(int dirfd, const Config *c, uid_t uid, uint64_t in_flight, size_t record_len, uint64_t raw_max,
                   StoreUsage *u, uint64_t *ret_room, char *why, size_t size) {
        CoreRoom cr;

        (void) core_room(dirfd, c, uid, in_flight, record_len, u, &cr);
        *ret_room = MIN(cr.room / STORE_GRANT_SHARE, store_core_bound(raw_max));
        if (*ret_room >= STORE_ROOM_MIN)
                return false;
        if (cr.room_others / STORE_GRANT_SHARE >= STORE_ROOM_MIN)
                snprintf(why, size, "no room in the store: it is full with other owners' cores (MaxUse= leaves "
                         "less than a block beside their %llu bytes, which a crash of uid %u may not displace, and "
                         "the %llu bytes of cores being written); core not stored", (unsigned long long) cr.held,
                         (unsigned) uid, (unsigned long long) in_flight);
        else
                snprintf(why, size, "no room in the store: MaxUse= and KeepFree= (with room for the record: %llu "
                         "bytes free) leave %llu bytes beside the %llu bytes of cores being written; core not stored",
                         (unsigned long long) cr.keep_free, (unsigned long long) cr.room,
                         (unsigned long long) in_flight);
        return true;
}

/* Runs the vacuum with l; updates the estimate, logs what it would not do. */
static bool vacuum_with(int dirfd, const Config *c, const VacuumLimits *l, const char *keep, uint64_t added,
                        uint64_t added_records, StoreUsage *u) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        VacuumStats s = {};
        int r;

        /* the estimate knows sizes, not ages: with MaxAgeSec= rescan at least that often */
        if (u->known && now - u->scanned_usec < MIN(STORE_RESCAN_USEC, c->max_age_usec)) {
                u->bytes_cores += added;
                u->bytes_records += added_records;
                if (!vacuum_over_limits(dirfd, l, u->bytes_cores, u->bytes_records))
                        return false;
        }
        r = vacuum_run(dirfd, l, keep, report_vacuumed, u, &s);
        if (r < 0) {
                log_warning_errno(r, "Failed to vacuum the storage directory: %m");
                store_usage_forget(u);
                return false;
        }
        report_refusals(&s, u);
        u->known = true;
        u->bytes_cores = s.bytes_cores;
        u->bytes_records = s.bytes_records;
        u->scanned_usec = now;
        u->said_unreachable = s.keep_free_unreachable;
        u->said_stopped = s.stopped_at_keep;
        return s.keep_deleted;
}

int store_unlink_core(int dirfd, const char *name, StoreUsage *u) {
        struct stat st;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || unlinkat(dirfd, name, 0) < 0)
                return negative_errno();
        if (u->known)
                u->bytes_cores -= MIN(u->bytes_cores, (uint64_t) st.st_blocks * 512);
        owners_sub(u, name, (uint64_t) st.st_blocks * 512);
        return 0;
}

bool store_vacuum(int dirfd, const Config *c, const char *keep, uint64_t added, StoreUsage *u) {
        VacuumLimits l = limits_of(c);
        uint64_t usec;

        /* the core just stored: its crash's rule (the owner its name carries, as the manager made it) */
        if (keep && vacuum_parse_name(keep, &l.crash_uid, &usec) >= 0) {
                l.for_crash = true;
                owners_add(u, l.crash_uid, added);
        } else if (keep) {
                l.for_crash = true, l.crash_uid = UID_INVALID; /* not a name we make: no user's files go */
                u->owners_known = false;
        } else /* the periodic vacuum: anyone may fill the disk, and records are written without a
              * vacuum after them (a user's may push the system's out by the owner-using-the-most rule) */
                l.keep_free_off = l.records_users_first = true;
        return vacuum_with(dirfd, c, &l, keep, added, 0, u);
}

void store_vacuum_for(int dirfd, const Config *c, uid_t uid, StoreUsage *u) {
        VacuumLimits l = limits_of(c);

        l.for_crash = true;
        l.crash_uid = uid;
        (void) vacuum_with(dirfd, c, &l, NULL, 0, 0, u);
}

void store_vacuum_after_record(int dirfd, const Config *c, const char *name, StoreUsage *u) {
        VacuumLimits l = limits_of(c);
        char core[NAME_MAX + 1];
        struct stat st;
        uint64_t usec;

        assert(strncmp(name, "record.", 7) == 0);
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return;
        l.for_crash = true;
        /* its crash's owner, as its core's name carries it */
        snprintf(core, sizeof core, "core.%s", name + 7);
        if (vacuum_parse_name(core, &l.crash_uid, &usec) < 0)
                l.crash_uid = UID_INVALID; /* not a name we make: no user's files go */
        (void) vacuum_with(dirfd, c, &l, NULL, 0, (uint64_t) st.st_blocks * 512, u);
}
