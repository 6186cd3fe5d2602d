/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <systemd/sd-journal.h>

#include "journal.h"
#include "macro.h"
#include "record.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* sd_journal_sendv() succeeds silently when there is no journald: ask the socket first, so a
 * missing entry is reported (and the record beside the core says it all). */
static int journal_reachable(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return negative_errno();
        return 0;
}

int journal_send_record(const uint8_t *rec, size_t len, const void *core_field, size_t core_len) {
        _cleanup_free_ struct iovec *iov = calloc(JOURNAL_FIELDS_MAX + 1, sizeof(struct iovec));
        _cleanup_free_ uint8_t *text = malloc(len + 1);
        size_t pos = 0, n = 0, o = 0;
        RecordField f;
        int r;

        if (!iov || !text)
                return -ENOMEM;
        r = journal_reachable();
        if (r < 0)
                return r;
        /* "NAME=value" must be contiguous: lay the fields out again, a little shorter than the
         * serialised record (9 bytes of length framing become 1 byte of '='). */
        while ((r = record_next(rec, len, &pos, &f)) > 0) {
                if (f.name_len >= 5 && memcmp(f.name, "_CDS_", 5) == 0)
                        continue;
                if (n == JOURNAL_FIELDS_MAX)
                        return -E2BIG;
                iov[n].iov_base = text + o;
                memcpy(text + o, f.name, f.name_len);
                text[o + f.name_len] = '=';
                memcpy(text + o + f.name_len + 1, f.value, f.value_len);
                iov[n].iov_len = f.name_len + 1 + f.value_len;
                o += iov[n++].iov_len;
        }
        if (r < 0)
                return r;
        if (core_field)
                iov[n++] = (struct iovec) { (void *) core_field, core_len };
        return sd_journal_sendv(iov, (int) n);
}
