/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Interface: core.COMM.UID.BOOTID.PID.USEC names and the 128-bit ids in them. Shared: reads the
 * two id files only. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BOOT_ID_STRING_MAX 33 /* 32 hex digits + NUL */
/* "core." + escaped comm (16 bytes, each up to 4) + numbers + suffix, with room to spare */
#define COREDUMP_NAME_MAX 256

/* Escapes comm the way systemd does for core file names: '/', '.', ' ', '\' and
 * non-printable bytes become \xNN. Returns length or -ENOBUFS. */
int coredump_escape_comm(const char *comm, char *buf, size_t size);
/* core.<comm>.<uid>.<boot-id>.<pid>.<timestamp-usec><suffix> */
int coredump_filename(char *buf, size_t size, const char *comm, uid_t uid, const char *boot_id, pid_t pid,
                      uint64_t timestamp_usec, const char *suffix);
/* What a stored core's name says about its crash: core.COMM.UID.BOOTID.PID.USEC, then nothing
 * or a compression suffix (ours or systemd's). coredumpd (root) chose the name; coredumpctl
 * checks a journal entry's COREDUMP_FILENAME against it. */
typedef struct CoredumpName {
        uid_t uid;
        char boot_id[BOOT_ID_STRING_MAX];
        uint64_t pid, usec;
} CoredumpName;

/* Parses a base name (no directory) of exactly that shape: 0, or -EINVAL. Pure. */
int coredump_name_parse(const char *name, CoredumpName *ret);
/* The boot id without dashes, from /proc/sys/kernel/random/boot_id. */
int read_boot_id(char ret[BOOT_ID_STRING_MAX]);
/* /etc/machine-id, same form; -ENOENT on machines without one. */
int read_machine_id(char ret[BOOT_ID_STRING_MAX]);
