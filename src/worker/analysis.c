/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker's analysis: module table and files (out of the collector's queue), then, sandboxed,
 * stack traces and packages as record fields in a sealed memfd. Opens no path. */
#include <assert.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "analysis.h"
#include "memfd-slot.h"
#include "build-config.h"
#include "crash-signature.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "record-fields.h"

/* How long a worker waits for the collector to queue the module files: it was asked as the job
 * was sent, and is awake, microseconds away; past this the traces go without them. */
#define MODULES_QUEUE_WAIT_MSEC 500

void module_files_close(ModuleFiles *m) {
        for (size_t i = 0; i < m->n; i++)
                m->items[i].fd = safe_close(m->items[i].fd);
        m->n = 0;
        m->queue = safe_close(m->queue);
}

/* 1 once fd is readable (or its peer gone), 0 past timeout_msec, or a negative errno. */
static int wait_readable(int fd, int timeout_msec) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_msec);
        while (r < 0 && errno == EINTR);
        return r < 0 ? negative_errno() : r;
}

/* The n files the collector queued on sock, once it has: 0, -ETIMEDOUT, or -EBADMSG if the queue
 * does not hold one message of n (then none is kept; any beyond n are never opened). */
static int take_files(int sock, size_t n, ModuleFiles *m) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * MODULES_MAX)];
        } control;
        uint32_t count = 0;
        struct iovec iov = { .iov_base = &count, .iov_len = sizeof count };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                             .msg_controllen = CMSG_LEN(sizeof(int) * n) };
        int fds[MODULES_MAX], r;
        size_t got = 0;
        ssize_t k;

        assert(n > 0 && n <= MODULES_MAX);
        r = wait_readable(sock, MODULES_QUEUE_WAIT_MSEC);
        if (r <= 0)
                return r < 0 ? r : -ETIMEDOUT;
        do
                k = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) && got < n; i++)
                                memcpy(&fds[got++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
        if (k != (ssize_t) sizeof count || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || count != n || got != n) {
                for (size_t i = 0; i < got; i++)
                        safe_close(fds[i]);
                return -EBADMSG;
        }
        for (size_t i = 0; i < n; i++)
                m->items[i].fd = fds[i];
        return 0;
}

int module_files_take(ModuleFiles *m) {
        int r = 0;

        if (m->queue >= 0 && m->n > 0)
                r = take_files(m->queue, m->n, m);
        if (r < 0)
                m->n = 0; /* the collector's queue, not the manager's word: the crash goes on without them */
        m->queue = safe_close(m->queue);
        return r;
}

static int read_table(int fd, size_t n, ModuleFiles *m) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((uint64_t) st.st_size != n * sizeof(ModuleEntry))
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                ModuleEntry e;
                if (pread(fd, &e, sizeof e, (off_t) (i * sizeof e)) != (ssize_t) sizeof e)
                        return -EBADMSG;
                if (e.path[0] != '/' || !memchr(e.path, 0, sizeof e.path))
                        return -EBADMSG;
                memcpy(m->paths[i], e.path, sizeof e.path);
                m->items[i] = (BtModule) { .path = m->paths[i], .fd = -EBADF };
        }
        return 0;
}

int module_files_receive(uint32_t n_modules, int table_fd, ModuleFiles *ret,
                         int (*wait_msg)(uint32_t type, void *msg, size_t size, int *fds, size_t n_fds)) {
        size_t n = n_modules;
        MsgModules msg;
        int r;

        *ret = (ModuleFiles) MODULE_FILES_INIT;
        if (n > MODULES_MAX)
                return -EBADMSG;
        r = read_table(table_fd, n, ret);
        if (r < 0 || n == 0)
                return r;
        r = wait_msg(MSG_MODULES, &msg, sizeof msg, &ret->queue, 1);
        if (r < 0)
                return r;
        if (msg.count != n || msg.spare != 0)
                return -EBADMSG;
        ret->n = n; /* (their descriptors once taken) */
        return 0;
}

static int no_stack_trace(Record *r, const char *why) {
        char text[256];

        snprintf(text, sizeof text, "No stack trace: %s.", why);
        return record_add_str(r, ANALYSIS_STACK_FIELD, text);
}

#if HAVE_LIBDW
/* The stack traces, module list and the executable's package, unwound by libdwfl. */
static int add_backtrace(CoreCapture *cap, const ModuleFiles *mods, const char *exe, int signo, Record *ret) {
        char signature[CRASH_SIGNATURE_SIZE];
        BtResult bt;
        int r;

        r = backtrace_core(cap->core, cap->len, mods->items, mods->n, exe, &bt);
        core_capture_free(cap);
        if (r < 0) {
                log_info_errno(r, "No stack trace: the core could not be unwound: %m");
                return no_stack_trace(ret, "the core could not be unwound");
        }
        if (bt.text && bt.text[0])
                r = record_add(ret, ANALYSIS_STACK_FIELD, bt.text, strnlen(bt.text, BT_TEXT_MAX + 4096), 0);
        if (r >= 0 && bt.package_json)
                r = record_add_str(ret, "COREDUMP_PACKAGE_JSON", bt.package_json);
        if (r >= 0 && bt.package_name[0] && bt.package_version[0]) {
                r = record_add_str(ret, "COREDUMP_PACKAGE_NAME", bt.package_name);
                r = r ?: record_add_str(ret, "COREDUMP_PACKAGE_VERSION", bt.package_version);
        }
        if (r >= 0 && crash_signature(bt.text, bt.package_json, exe, signo, signature) >= 0)
                r = record_add_str(ret, "COREDUMP_SIGNATURE", signature);
        bt_result_free(&bt);
        return r;
}
#else
/* Built with -Dlibdw=disabled: receive.c keeps no capture (its why_not says so), so this is not
 * reached; the core is stored as ever, its entry says why it has no trace. */
static int add_backtrace(CoreCapture *cap, const ModuleFiles *mods, const char *exe, int signo, Record *ret) {
        core_capture_free(cap);
        return no_stack_trace(ret, "built without elfutils (libdw)");
}
#endif

int analysis_build(CoreCapture *cap, const ModuleFiles *mods, const char *exe, int signo, Record *ret) {
        *ret = (Record) {};
        if (!cap->core)
                return no_stack_trace(ret, cap->why_not);
        return add_backtrace(cap, mods, exe, signo, ret);
}

int analysis_memfd(int slot, const Record *r) {
        _cleanup_close_ int fd = slot;
        int e;

        if (fd < 0)
                return fd;
        e = memfd_slot_fill(fd, r->buf, r->len);
        e = e ?: memfd_slot_finish(fd, r->len);
        return e < 0 ? e : TAKE_FD(fd);
}
