/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file system types code that opens others' files refuses: kernel interfaces, and FUSE
 * (which the callers tell apart further). Pure: no I/O. */
#include <linux/magic.h>

#include "fs-kind.h"
#include "macro.h"

/* the magics older kernel headers lack */
#ifndef PIDFS_MAGIC
#define PIDFS_MAGIC 0x50494446
#endif
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif
#ifndef FUSE_CTL_SUPER_MAGIC
#define FUSE_CTL_SUPER_MAGIC 0x65735543
#endif

/* Kernel interfaces dressed as files: nothing on them is a program's file, and some of them
 * (procfs's mem, sysfs's resources, debugfs) are dangerous to hand out. */
bool fs_is_kernel_interface(uint64_t f_type) {
        static const uint64_t refused[] = {
                PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC,
                CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC, CONFIGFS_MAGIC, EFIVARFS_MAGIC,
                PSTOREFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, DEVPTS_SUPER_MAGIC, BINFMTFS_MAGIC,
                FUSE_CTL_SUPER_MAGIC, NSFS_MAGIC, ANON_INODE_FS_MAGIC, SOCKFS_MAGIC, PIPEFS_MAGIC,
                MQUEUE_MAGIC, PIDFS_MAGIC,
        };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                if (f_type == refused[i])
                        return true;
        return false;
}

bool fs_is_fuse(uint64_t f_type) {
        return f_type == FUSE_SUPER_MAGIC;
}
