/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A worker's stderr lines re-logged with its crash, sanitised and bounded per crash. Manager
 * (root): reads only that pipe, writes only its own log. */
#include <string.h>

#include "crash.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "worker-log.h"
#include "worker-pool.h"

static void emit(Worker *w, char *line, size_t len) {
        if (w->log_lines >= WORKER_LOG_LINES_MAX) {
                w->log_dropped++;
                return;
        }
        w->log_lines++;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) line[i] < ' ' || line[i] == 127)
                        line[i] = '?';
        if (w->crash)
                log_notice("Worker %d (crash of PID %d): %.*s", (int) w->pid, (int) w->crash->info.pid, (int) len, line);
        else
                log_notice("Worker %d: %.*s", (int) w->pid, (int) len, line);
}

/* Appends bytes, emitting every complete line; a line longer than the buffer is cut. */
static void take(Worker *w, const char *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (p[i] == '\n') {
                        emit(w, w->log_buf, w->log_len);
                        w->log_len = 0;
                } else if (w->log_len < sizeof w->log_buf)
                        w->log_buf[w->log_len++] = p[i];
        }
}

static int drain(Worker *w) {
        char buf[4096];

        for (;;) {
                ssize_t n = read(w->log_fd, buf, sizeof buf);
                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
                if (n == 0)
                        return -EPIPE;
                take(w, buf, (size_t) n);
        }
}

static int on_log(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;

        if (drain(w) < 0)
                w->log_source = sd_event_source_disable_unref(w->log_source);
        return 0;
}

int worker_log_watch(Worker *w, int fd) {
        w->log_fd = fd;
        return sd_event_add_io(w->manager->event, &w->log_source, fd, EPOLLIN, on_log, w);
}

void worker_log_close(Worker *w) {
        if (w->log_fd >= 0)
                (void) drain(w);
        if (w->log_len > 0)
                emit(w, w->log_buf, w->log_len);
        if (w->log_dropped > 0)
                log_warning("Worker %d: %u more log lines dropped (at most %u per crash)", (int) w->pid, w->log_dropped,
                            WORKER_LOG_LINES_MAX);
        w->log_source = sd_event_source_disable_unref(w->log_source);
        w->log_fd = safe_close(w->log_fd);
        w->log_len = 0;
        w->log_dropped = 0;
}
