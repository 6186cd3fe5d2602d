/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A worker's stderr lines re-logged with its crash, sanitised and bounded per crash. Manager
 * (root): reads only that pipe, writes only its own log. */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "manager.h"
#include "worker-log.h"
#include "worker-pool.h"

#define WHO_MAX 96 /* "Worker PID (" and a job's label */

static const char *who(const Worker *w, char buf[static WHO_MAX]) {
        if (w->ops)
                snprintf(buf, WHO_MAX, "Worker %d (%s)", (int) w->pid, w->label);
        else
                snprintf(buf, WHO_MAX, "Worker %d", (int) w->pid);
        return buf;
}

/* Past WORKER_LOG_LINES_MAX a line only counts: its bytes and newline are dropped. */
static void emit(Worker *w, char *line, size_t len) {
        char buf[WHO_MAX];

        if (w->log_lines >= WORKER_LOG_LINES_MAX) {
                w->log_dropped += (unsigned) len + 1;
                return;
        }
        w->log_lines++;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) line[i] < ' ' || line[i] == 127)
                        line[i] = '?';
        log_notice("%s: %.*s", who(w, buf), (int) len, line);
}

/* Appends bytes, emitting every complete line; what a line holds past the buffer is dropped. */
static void take(Worker *w, const char *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (p[i] == '\n') {
                        emit(w, w->log_buf, w->log_len);
                        w->log_len = 0;
                } else if (w->log_len < sizeof w->log_buf)
                        w->log_buf[w->log_len++] = p[i];
                else
                        w->log_dropped++;
        }
}

static bool over_budget(const Worker *w) {
        return w->log_dropped >= WORKER_LOG_DROPPED_MAX;
}

/* The budget is spent: the pipe is closed (the worker's next write gets EPIPE, or SIGPIPE), and
 * this is the one line that says so. */
static void cut_off(Worker *w) {
        char buf[WHO_MAX];

        log_warning("%s: floods its log; %u bytes not logged, the rest is not read (at most %u lines and %u dropped "
                    "bytes per crash)", who(w, buf), w->log_dropped, WORKER_LOG_LINES_MAX, WORKER_LOG_DROPPED_MAX);
        w->log_source = sd_event_source_disable_unref(w->log_source);
        w->log_fd = safe_close(w->log_fd);
}

/* One read of at most WORKER_LOG_READ_MAX: 1 if it got bytes, 0 if there were none, or negative
 * if the channel is done (EOF, an error, the budget spent: then the pipe is closed). */
static int pump(Worker *w) {
        char buf[WORKER_LOG_READ_MAX];
        ssize_t n = read(w->log_fd, buf, sizeof buf);

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        if (n == 0)
                return -EPIPE;
        take(w, buf, (size_t) n);
        if (over_budget(w)) {
                cut_off(w);
                return -EMSGSIZE;
        }
        return 1;
}

/* One bounded read per event: a worker that keeps its pipe full gets its turn like every other
 * source of the event loop, never the loop to itself. */
static int on_log(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;

        if (pump(w) < 0)
                w->log_source = sd_event_source_disable_unref(w->log_source);
        return 0;
}

int worker_log_watch(Worker *w, int fd) {
        w->log_fd = fd;
        return sd_event_add_io(w->manager->event, &w->log_source, fd, EPOLLIN, on_log, w);
}

void worker_log_close(Worker *w) {
        char buf[WHO_MAX];

        /* what is left: bounded by the budget */
        while (w->log_fd >= 0 && pump(w) > 0)
                ;
        if (w->log_len > 0)
                emit(w, w->log_buf, w->log_len);
        if (w->log_dropped > 0 && !over_budget(w))
                log_warning("%s: %u bytes of its log not logged (at most %u lines per crash)", who(w, buf),
                            w->log_dropped, WORKER_LOG_LINES_MAX);
        w->log_source = sd_event_source_disable_unref(w->log_source);
        w->log_fd = safe_close(w->log_fd);
        w->log_len = 0;
        w->log_dropped = 0;
}
