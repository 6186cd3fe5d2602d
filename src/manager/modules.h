/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface of the module opener: the crashed process's mapped files, opened read-only beneath
 * its root by the per-crash collector. Never reads the files, only hands the descriptors on. */
#pragma once

/* The crashed process's mapped files, opened for the worker's stack traces in the process's
 * own root and mount namespace (through /proc/PID/root), while the task is pinned. A file is
 * opened only if it is the very file the maps line names (its device and inode), reached
 * without following any symlink (maps writes a file's path as the kernel knows it: none in
 * it), a regular file on a real file system (not procfs, sysfs, debugfs or another kernel
 * interface), and only as the caller's credentials may: the collector takes the crashed
 * task's file-system uid, gid and groups before it opens anything. Whether a file's contents
 * are what was mapped, the worker checks against the build-id in the core. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* At most MODULES_MAX files (proto.h) are handed to a worker: the executable, then the others
 * in the order they were mapped (ld.so and the libraries linked at start before dlopen()ed
 * ones). The rest are counted and left out of the stack traces (COREDUMP_MODULES_OMITTED=);
 * the core is stored all the same. */
typedef struct ModuleSet {
        size_t n;
        unsigned omitted;                    /* distinct mapped files past MODULES_MAX, not opened */
        unsigned refused;                    /* files that failed a check or could not be opened */
        int first_refusal;                   /* the first one's error */
        char first_refused[MODULE_PATH_MAX]; /* and its path */
        int fds[MODULES_MAX];
        ModuleEntry entries[MODULES_MAX];
} ModuleSet;

/* Told of each file right before it is opened (the collector notes where it may stall). */
typedef void (*ModulesProgress)(void *userdata, const char *path);

typedef struct ModulesSource {
        int root;              /* O_PATH descriptor of the task's root directory */
        const char *root_path; /* that root as the reader sees it (a chroot's), or NULL */
        const char *exe;       /* its executable's path (the exe link), or NULL */
        const char *maps;      /* the text of /proc/PID/maps */
        size_t maps_len;
        const char *mountinfo; /* the text of /proc/PID/mountinfo (devices of mounts) */
        size_t mountinfo_len;
        ModulesProgress progress;
        void *userdata;
} ModulesSource;

/* A maps path (which the reader's root names) beneath root_path: the rest, as the task's root
 * names it; path itself if it is not below root_path. */
const char *modules_path_in_root(const char *root_path, const char *path);

/* A file a maps line names. */
typedef struct MapsFile {
        char path[MODULE_PATH_MAX];
        dev_t dev;
        ino_t ino;
} MapsFile;

/* Opens the files src->maps names. Returns how many were opened; ret->omitted counts the
 * files left out past MODULES_MAX, ret->refused those not opened. Only the first ret->n
 * descriptors and entries are set, the rest of ret left as it was. */
int modules_open(const ModulesSource *src, ModuleSet *ret);
void modules_close(ModuleSet *s);

/* What the manager holds of a crash's module files: their table, and two sockets, never a file.
 * Closing a descriptor of a file on FUSE, or on a file system stacked over FUSE (overlayfs and
 * ecryptfs pass FLUSH down), waits for the FUSE server's answer, uninterruptibly; dropping the
 * last reference to one may wait for it too (FUSE's release with writeback_cache). So the
 * collector that opened them keeps them until the crash lets go, and queues them (one message:
 * a uint32_t count, the files as SCM_RIGHTS) only when a worker is given the job, on a socket the
 * manager passes on to the worker unread. The worker takes them once it can no longer give the
 * job back (a job given back has them still for the next worker): they are in flight (counted
 * against root, the collector's user, as every descriptor in flight is against its sender's) from
 * the queueing until then, milliseconds unless that worker is held itself (a dump the kernel
 * cannot finish, a job given back). What is still queued when the manager lets go is not the
 * last reference to a file while the collector lives (it closes its own after). */
typedef struct ModuleHandoff {
        size_t n;          /* entries, and files the collector keeps */
        int collector;     /* to the collector keeping them (COLLECT_QUEUE; EOF lets it go), or -EBADF */
        int queue;         /* the queue, once made (the worker's end), or -EBADF */
        int collector_end; /* its other end, until sent to the collector */
        ModuleEntry entries[MODULES_MAX];
} ModuleHandoff;

/* An empty handoff on the heap: only its counts are written, not its 64 KiB of entries (a page
 * the manager writes after it forked a collector is a page copied). */
ModuleHandoff *module_handoff_new(void);
/* Lets the files go: the queue first, then the collector (whose EOF makes it close its own). */
void module_handoff_let_go(ModuleHandoff *h);
void module_handoff_free(ModuleHandoff *h);

/* Pure: the file of a maps line, if it maps one worth opening (inode not 0, a path "/..." not
 * deleted); -ENOENT otherwise. */
int modules_maps_line(const char *line, size_t len, MapsFile *ret);
/* Pure: the device mountinfo gives the mount with ID mnt_id. */
int modules_mount_dev(const char *mountinfo, size_t len, uint64_t mnt_id, dev_t *ret);
/* Pure: the file system type mountinfo gives the mount with ID mnt_id ("ext4", "fuse.sshfs"). */
int modules_mount_fstype(const char *mountinfo, size_t len, uint64_t mnt_id, char *buf, size_t size);
/* Pure: whether a file with FUSE's magic, on the mount with ID mnt_id and device dev, may be
 * opened: mountinfo names that mount virtiofs (whose server is not a user's), on that device. */
bool modules_mount_trusted_fuse(const char *mountinfo, size_t len, uint64_t mnt_id, dev_t dev);
