/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl vacuum and disk-usage: the shared rules of vacuum.c on the storage directory, as the
 * invoking user; vacuum deletes cores and records there only, disk-usage only reads. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>

#include "ctl-format.h"
#include "ctl-vacuum.h"
#include "log.h"
#include "time-util.h"
#include "vacuum.h"

static int open_store(const CtlArgs *a, char *dir, size_t size) {
        int r = ctl_storage_dir(a, dir, size), fd;

        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Failed to open the storage directory %s: %m", dir);
        return fd;
}

static void report_deleted(const char *name, uint64_t bytes, void *userdata) {
        const CtlArgs *a = userdata;
        char b[FORMAT_BYTES_MAX];

        if (!a->quiet)
                printf("Deleted %s (%s).\n", name, format_bytes(b, sizeof b, bytes));
}

int verb_vacuum(const CtlArgs *a) {
        char dir[PATH_MAX], freed[FORMAT_BYTES_MAX], left[FORMAT_BYTES_MAX];
        _cleanup_close_ int fd = -EBADF;
        VacuumLimits l;
        VacuumStats s;
        Config c;
        int r;

        if (a->n_matches > 0)
                return log_error_errno(-EINVAL, "vacuum takes no matches; use delete for chosen cores.");
        r = ctl_load_config(a, &c);
        if (r < 0)
                return r;
        fd = open_store(a, dir, sizeof dir);
        if (fd < 0)
                return fd;
        l = (VacuumLimits) {
                .max_use = a->max_use != UINT64_MAX ? a->max_use : c.max_use,
                .keep_free = a->keep_free != UINT64_MAX ? a->keep_free : c.keep_free,
                .max_age_usec = a->older_than_usec,
                .max_age_cores_only = true, /* --older-than: cores; the records keep the history */
                .records_min = VACUUM_RECORDS_MIN,
                .now_usec = now_usec(CLOCK_REALTIME),
        };
        r = vacuum_run(fd, &l, NULL, report_deleted, (void *) a, &s);
        if (r < 0)
                return log_error_errno(r, "Failed to vacuum %s: %m", dir);
        if (!a->quiet)
                printf("Vacuuming done, freed %s (cores deleted: %u, records deleted: %u); %s in %u cores remain in %s.\n",
                       format_bytes(freed, sizeof freed, s.bytes_freed), s.n_deleted, s.n_records_deleted,
                       format_bytes(left, sizeof left, s.bytes_cores), s.n_cores, dir);
        return 0;
}

int verb_disk_usage(const CtlArgs *a) {
        char dir[PATH_MAX], cores[FORMAT_BYTES_MAX], records[FORMAT_BYTES_MAX];
        _cleanup_close_ int fd = -EBADF;
        VacuumStats s;
        int r;

        fd = open_store(a, dir, sizeof dir);
        if (fd < 0)
                return fd;
        r = vacuum_usage(fd, &s);
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", dir);
        if (a->quiet)
                printf("%llu\n", (unsigned long long) (s.bytes_cores + s.bytes_records));
        else
                printf("Cores take up %s on disk in %s (%u cores; %u records, %s).\n",
                       format_bytes(cores, sizeof cores, s.bytes_cores), dir, s.n_cores, s.n_records,
                       format_bytes(records, sizeof records, s.bytes_records));
        return 0;
}
