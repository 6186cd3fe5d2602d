/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The records source: the record.*.export files beside the cores, parsed as untrusted journal
 * export entries. Reads the storage directory with the invoking user's rights; writes nothing. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl-source.h"
#include "export-format.h"
#include "fd-util.h"
#include "log.h"

#define RECORD_PREFIX "record."
#define RECORD_SUFFIX ".export"

static bool is_record_name(const char *n) {
        size_t l = strlen(n);
        return l > strlen(RECORD_PREFIX) + strlen(RECORD_SUFFIX) && strncmp(n, RECORD_PREFIX, strlen(RECORD_PREFIX)) == 0 &&
               strcmp(n + l - strlen(RECORD_SUFFIX), RECORD_SUFFIX) == 0;
}

/* The whole file, if it is a regular file of plausible size. */
static int read_record_file(int dirfd, const char *name, uint8_t **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > (off_t) RECORD_FILE_MAX)
                return -EFBIG;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        n = loop_read(fd, buf, (size_t) st.st_size);
        if (n < 0)
                return (int) n;
        *ret_len = (size_t) n;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Parses one export entry into e. Pure apart from allocation. */
int entry_from_export(Entry *e, const uint8_t *buf, size_t len, CollectMode mode, const char *extra) {
        size_t pos = 0;
        RecordField f;
        int r;

        while ((r = export_next_field(buf, len, &pos, &f)) > 0) {
                char name[FIELD_NAME_MAX + 1];

                memcpy(name, f.name, f.name_len);
                name[f.name_len] = 0;
                if (strcmp(name, "COREDUMP") == 0) {
                        e->core_in_journal = true;
                        continue;
                }
                if (mode == COLLECT_LIST && !entry_field_listed(f.name, f.name_len, extra))
                        continue;
                (void) record_add(&e->fields, name, f.value, f.value_len, 0);
        }
        if (r < 0)
                return r;
        if (!entry_has(e, "COREDUMP_PID") || (!entry_has_value(e, "MESSAGE_ID", SD_MESSAGE_COREDUMP_STR) &&
                                               !entry_has_value(e, "MESSAGE_ID", SD_MESSAGE_BACKTRACE_STR)))
                return -EBADMSG;
        return 0;
}

static int read_one(int dirfd, const char *dir, const char *name, const CtlArgs *a, CollectMode mode, Entry *e) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        r = read_record_file(dirfd, name, &buf, &len);
        if (r < 0)
                return r;
        r = entry_from_export(e, buf, len, mode, a->field);
        if (r < 0)
                return r;
        e->sources = SOURCE_RECORD;
        if (asprintf(&e->record_path, "%s/%s", dir, name) < 0) {
                e->record_path = NULL;
                return -ENOMEM;
        }
        entry_index(e);
        return 0;
}

int source_records(const CtlArgs *a, const MatchSet *m, CollectMode mode, EntryList *out, unsigned *ret_inaccessible) {
        char dir[PATH_MAX];
        struct dirent *de;
        DIR *d;
        int r;

        *ret_inaccessible = 0;
        r = ctl_storage_dir(a, dir, sizeof dir);
        if (r < 0)
                return r;
        d = opendir(dir);
        if (!d)
                return log_debug_errno(negative_errno(), "No records in %s: %m", dir), 0;
        while ((de = readdir(d))) {
                Entry *e;

                if (!is_record_name(de->d_name))
                        continue;
                e = entry_list_add(out);
                if (!e) {
                        closedir(d);
                        return log_error_errno(-ENOMEM, "Too many records or out of memory");
                }
                r = read_one(dirfd(d), dir, de->d_name, a, mode, e);
                if (r == -EACCES || r == -EPERM)
                        (*ret_inaccessible)++;
                else if (r < 0)
                        log_warning_errno(r, "Ignoring record %s/%s: %m", dir, de->d_name);
                if (r < 0 || !match_set_test(m, e)) {
                        entry_free(e);
                        out->n--;
                }
        }
        closedir(d);
        return 0;
}
