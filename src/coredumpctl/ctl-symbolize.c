/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl info: a stored stack trace named again from debug info found by the modules'
 * build-ids (debuginfod, /usr/lib/debug): the line parsers, and the parent's side. The invoking
 * user, often root, reads entries a user wrote: every ELF and DWARF byte is parsed by a child
 * confined with confine.h (ctl-symbolize-child.c), which asks this process for each file by
 * module or build-id; this process opens them (ctl-symbolize-files.c) and parses nothing. Never
 * the core. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "confine.h"
#include "ctl-symbolize-proto.h"
#include "fd-util.h"
#include "json.h"
#include "time-util.h"


#define FRAME_HEX_MAX 16U         /* digits of a 64-bit address or offset */
#define FRAME_INDEX_DIGITS_MAX 9U /* of a frame's number */
#define WITH_BUILD_ID " with build-id "

static bool is_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* len hex digits (1..FRAME_HEX_MAX) as a number. */
static bool parse_hex(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0 || len > FRAME_HEX_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (!is_hex(s[i]))
                        return false;
                v = v << 4 | (uint64_t) (s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
        }
        *ret = v;
        return true;
}

/* The last occurrence of needle in line[from, len), or SIZE_MAX. */
static size_t rfind(const char *line, size_t from, size_t len, const char *needle) {
        size_t nl = strlen(needle);

        for (size_t i = len; i >= from + nl && i > 0; i--)
                if (memcmp(line + i - nl, needle, nl) == 0)
                        return i - nl;
        return SIZE_MAX;
}

/* "#N" then spaces, "0x" and the address, one space: the index and where the name starts. */
static bool parse_frame_head(const char *line, size_t len, unsigned *ret_index, size_t *ret_name_off) {
        size_t p = 1, hex_start;
        uint64_t v;

        if (len == 0 || line[0] != '#')
                return false;
        while (p < len && p <= FRAME_INDEX_DIGITS_MAX && line[p] >= '0' && line[p] <= '9')
                p++;
        if (p == 1 || p >= len || line[p] != ' ')
                return false;
        *ret_index = (unsigned) strtoul(line + 1, NULL, 10);
        while (p < len && line[p] == ' ')
                p++;
        if (len - p < 3 || line[p] != '0' || line[p + 1] != 'x')
                return false;
        hex_start = p += 2;
        while (p < len && is_hex(line[p]))
                p++;
        if (!parse_hex(line + hex_start, p - hex_start, &v) || p >= len || line[p] != ' ')
                return false;
        *ret_name_off = p + 1;
        return true;
}

bool symbolize_parse_frame(const char *line, size_t len, SymFrame *ret) {
        SymFrame f = {};
        size_t open, plus;

        if (!parse_frame_head(line, len, &f.index, &f.name_off) || len < f.name_off + 1 || line[len - 1] != ')')
                return false;
        /* names have no spaces (the worker does not demangle), file names may: the name ends at
         * the first " (", the module at the last " + 0x" */
        open = f.name_off;
        while (open < len && line[open] != ' ')
                open++;
        if (open == f.name_off || len - open < 2 || line[open + 1] != '(')
                return false;
        plus = rfind(line, open + 2, len - 1, " + 0x");
        if (plus == SIZE_MAX || plus == open + 2 || !parse_hex(line + plus + 5, len - 1 - (plus + 5), &f.offset))
                return false;
        f.name_len = open - f.name_off;
        f.module_off = open + 2;
        f.module_len = plus - f.module_off;
        *ret = f;
        return true;
}

bool symbolize_parse_module(const char *line, size_t len, SymModuleLine *ret) {
        static const char prefix[] = "Module /";
        size_t w;

        if (len < sizeof prefix || memcmp(line, prefix, sizeof prefix - 1) != 0)
                return false;
        w = rfind(line, sizeof prefix - 2, len, WITH_BUILD_ID);
        if (w == SIZE_MAX)
                return false;
        *ret = (SymModuleLine) {
                .path_off = sizeof prefix - 2,
                .path_len = w - (sizeof prefix - 2),
                .id_off = w + strlen(WITH_BUILD_ID),
                .id_len = len - w - strlen(WITH_BUILD_ID),
        };
        for (size_t i = ret->id_off; i < len; i++)
                if (!is_hex(line[i]))
                        return false;
        return ret->id_len > 0 && ret->id_len % 2 == 0 && ret->id_len <= 2 * SYMBOLIZE_BUILD_ID_MAX;
}

bool symbolize_enabled(void) {
        const char *urls = getenv("DEBUGINFOD_URLS");

        return urls && urls[strspn(urls, " \t")];
}

static void add_module(SymModules *l, const char *path, size_t path_len, const char *hex, size_t hex_len) {
        SymModule *m = &l->items[l->n];

        if (l->n >= SYMBOLIZE_MODULES_MAX || path_len == 0 || path[0] != '/' || hex_len == 0 || hex_len % 2 != 0 ||
            hex_len > 2 * SYMBOLIZE_BUILD_ID_MAX || memchr(path, 0, path_len))
                return;
        for (size_t i = 0; i < l->n; i++)
                if (strlen(l->items[i].path) == path_len && memcmp(l->items[i].path, path, path_len) == 0)
                        return;
        *m = (SymModule) {};
        for (size_t i = 0; i < hex_len / 2; i++) {
                uint64_t b;
                if (!parse_hex(hex + 2 * i, 2, &b))
                        return;
                m->build_id[i] = (uint8_t) b;
        }
        m->path = strndup(path, path_len);
        if (!m->path)
                return;
        m->base = strrchr(m->path, '/') + 1;
        m->build_id_len = hex_len / 2;
        l->n++;
}

static void add_json_module(const char *key, const char *build_id, void *userdata) {
        if (key && build_id)
                add_module(userdata, key, strlen(key), build_id, strlen(build_id));
}

void sym_modules_collect(SymModules *l, const char *message, const char *json) {
        for (const char *p = message; *p;) {
                const char *eol = strchrnul(p, '\n');
                SymModuleLine ml;

                if (symbolize_parse_module(p, (size_t) (eol - p), &ml))
                        add_module(l, p + ml.path_off, ml.path_len, p + ml.id_off, ml.id_len);
                p = *eol ? eol + 1 : eol;
        }
        if (json)
                (void) json_object_scan(json, strlen(json), "buildId", add_json_module, l);
}

void sym_modules_free(SymModules *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].path);
        l->n = 0;
}

static void sym_modules_freep(SymModules **l) {
        if (*l)
                sym_modules_free(*l);
        free(*l);
}

#if HAVE_LIBDW

/* Over all the entries of one run: when lookups stop, and a server that could not be reached
 * (not asked again). */
static uint64_t run_deadline;
static int run_unreachable;

/* The child's confinement: nobody when coredumpctl is root's; a descriptor for each module's
 * file, debug file and dwz file and a few more; no file written, no process started; address
 * space for whole debug files mapped and their sections decompressed (unbounded under the
 * sanitizers, whose shadow memory needs terabytes); receiving its files, asking for them,
 * waiting for the answer. */
#define SYM_CHILD_NOFILE (16U + 3U * SYMBOLIZE_MODULES_MAX)
#ifdef SANITIZED
#define SYM_CHILD_AS RLIM_INFINITY
#else
#define SYM_CHILD_AS ((rlim_t) 8 << 30)
#endif
static const int child_calls[] = { SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(recvfrom), SCMP_SYS(poll),
                                   SCMP_SYS(ppoll), SCMP_SYS(dup) };
static const ConfineSpec child_confinement = {
        .id = CONFINE_NOBODY,
        .nofile = SYM_CHILD_NOFILE,
        .as = SYM_CHILD_AS,
        .fsize = 0,
        .nproc = 0,
        .allowed = child_calls,
        .n_allowed = ELEMENTSOF(child_calls),
};

/* A child silent this long (between its requests, or before its result) is taken as stuck in
 * what it parses, and killed; the run's deadline and the downloads are bounded on their own. */
#define SYM_CHILD_IDLE_MSEC (30 * 1000)
/* The largest new message a child may return: the stored one, at most the journal data read
 * (2 MiB), with each of its renamed frames' names. */
#define SYM_TEXT_MAX ((size_t) (2U << 20) + (size_t) SYMBOLIZE_FRAMES_MAX * SYMBOLIZE_NAME_MAX)

static pid_t start_child(const char *message, SymModules *mods, int sock[2], int out[2]) {
        pid_t pid = fork();

        if (pid != 0)
                return pid < 0 ? negative_errno() : pid;
        /* the child: its two descriptors only, nothing it writes reaches the caller's terminal */
        int keep[] = { sock[1], out[1] }, r;

        if (fd_null_stdio() < 0 || close_all_fds_except(keep, ELEMENTSOF(keep)) < 0)
                _exit(EXIT_FAILURE);
        r = confine_drop(&child_confinement);
        /* not dumpable (its memory holds what it parsed), gone with coredumpctl */
        if (r >= 0 && (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0))
                r = -EPERM;
        r = r ?: confine_lock(&child_confinement);
        _exit(r < 0 ? EXIT_FAILURE : symbolize_child(message, mods, run_deadline, sock[1], out[1]));
}

/* Whether id is one of the modules' build-ids. */
static bool module_build_id(const SymModules *mods, const SymRequest *req) {
        for (size_t i = 0; i < mods->n; i++)
                if (mods->items[i].build_id_len == req->build_id_len &&
                    memcmp(mods->items[i].build_id, req->build_id, req->build_id_len) == 0)
                        return true;
        return false;
}

/* Answers one request of the child; a malformed one ends the conversation (-EBADMSG). The child
 * parsed what a user chose: it asks for debug info of the modules' own build-ids only, and for
 * at most one dwz file per module (whose build-id a debug file names), so that the build-ids it
 * asks debuginfod for are no channel of its own. */
static int serve_one(int sock, const SymModules *mods, const char *root, unsigned *n_alt) {
        SymReply reply = { .hdr = { PROTO_MAGIC, MSG_SYM_NONE } };
        _cleanup_close_ int fd = -EBADF;
        SymRequest req;
        int r;

        r = proto_recv(sock, MSG_SYM_REQUEST, &req, sizeof req, NULL, 0);
        if (r < 0)
                return r;
        if (req.want < SYM_WANT_ELF || req.want > SYM_WANT_ALT || req.build_id_len == 0 ||
            req.build_id_len > SYMBOLIZE_BUILD_ID_MAX)
                return -EBADMSG;
        if ((req.want == SYM_WANT_DEBUG && !module_build_id(mods, &req)) ||
            (req.want == SYM_WANT_ALT && ++*n_alt > mods->n))
                return -EBADMSG;
        fd = symbolize_provide(&req, mods, root);
        if (fd == -EINVAL)
                return -EBADMSG;
        if (fd >= 0) {
                reply.hdr.type = MSG_SYM_FILE;
                return proto_send(sock, &reply, sizeof reply, &fd, 1);
        }
        reply.error = fd;
        return proto_send(sock, &reply, sizeof reply, NULL, 0);
}

/* Reads what is there of the child's output into buf (at most max), *len so far: 1 at its end. */
static int read_output(int out, uint8_t *buf, size_t max, size_t *len) {
        ssize_t n;

        if (*len >= max)
                return -EFBIG;
        n = read(out, buf + *len, max - *len);
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : negative_errno();
        *len += (size_t) n;
        return n == 0;
}

/* Answers the child's requests until its output ends; its output into buf. */
static int converse(int sock, int out, const SymModules *mods, const char *root, uint8_t *buf, size_t max, size_t *len) {
        bool sock_open = true;
        unsigned n_alt = 0;

        for (;;) {
                struct pollfd p[2] = { { .fd = sock_open ? sock : -1, .events = POLLIN }, { .fd = out, .events = POLLIN } };
                int r;

                r = poll(p, 2, SYM_CHILD_IDLE_MSEC);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (r == 0)
                        return -ETIMEDOUT;
                if (p[1].revents) {
                        r = read_output(out, buf, max, len);
                        if (r != 0)
                                return r < 0 ? r : 0;
                }
                if (p[0].revents) {
                        r = serve_one(sock, mods, root, &n_alt);
                        if (r == -ECONNRESET)
                                sock_open = false;
                        else if (r < 0 && r != -EAGAIN)
                                return r;
                }
        }
}

/* The result the child wrote: the new message (or NULL) and the note, if it is well-formed. */
static int parse_result(const uint8_t *buf, size_t len, char **ret_text, char *note, size_t note_size) {
        SymResult res;

        if (len < sizeof res)
                return -EBADMSG;
        memcpy(&res, buf, sizeof res);
        if (res.magic != SYM_RESULT_MAGIC || res.text_len != len - sizeof res || (res.has_text == 0) != (res.text_len == 0) ||
            !memchr(res.note, 0, sizeof res.note) || res.unreachable > 0)
                return -EBADMSG;
        snprintf(note, note_size, "%s", res.note);
        run_unreachable = res.unreachable;
        if (res.has_text && !(*ret_text = strndup((const char *) buf + sizeof res, res.text_len)))
                return -ENOMEM;
        return 0;
}

static int wait_child(pid_t pid, bool kill_it) {
        siginfo_t si = {};

        if (kill_it)
                (void) kill(pid, SIGKILL);
        while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return si.si_code == CLD_EXITED && si.si_status == 0 ? 0 : -ECHILD;
}

static void close_pair(int p[2]) {
        safe_close(p[0]);
        safe_close(p[1]);
}

/* The child's whole run: 0 and its result, or why there is none (the stored message stands). */
static int run_child(const char *message, SymModules *mods, const char *root, char **ret_text, char *note,
                     size_t note_size) {
        _cleanup_free_ uint8_t *buf = malloc(sizeof(SymResult) + SYM_TEXT_MAX);
        int sock[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        size_t len = 0;
        pid_t pid;
        int r, w;

        if (!buf)
                return -ENOMEM;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
                return negative_errno();
        if (pipe2(out, O_CLOEXEC) < 0) {
                r = negative_errno();
                close_pair(sock);
                return r;
        }
        fflush(NULL); /* nothing buffered is written twice */
        pid = start_child(message, mods, sock, out);
        sock[1] = safe_close(sock[1]);
        out[1] = safe_close(out[1]);
        r = pid < 0 ? (int) pid : converse(sock[0], out[0], mods, root, buf, sizeof(SymResult) + SYM_TEXT_MAX, &len);
        close_pair(sock);
        close_pair(out);
        if (pid < 0)
                return r;
        w = wait_child(pid, r < 0);
        if (r < 0)
                return r;
        if (w < 0)
                return w;
        return parse_result(buf, len, ret_text, note, note_size);
}

int symbolize_message(const char *message, const char *package_json, const char *root, char **ret_text, char *note,
                      size_t note_size) {
        _cleanup_(sym_modules_freep) SymModules *mods = calloc(1, sizeof(SymModules));
        int r;

        *ret_text = NULL;
        if (!mods)
                return -ENOMEM;
        if (run_unreachable < 0) {
                snprintf(note, note_size, "DEBUGINFOD_URLS could not be reached (%s): the trace as stored",
                         strerror(-run_unreachable));
                return 0;
        }
        sym_modules_collect(mods, message, package_json);
        if (mods->n == 0) {
                snprintf(note, note_size, "no module with a build-id to look up (DEBUGINFOD_URLS)");
                return 0;
        }
        /* the client's own timeouts, where the user set none (read at each download) */
        if (setenv("DEBUGINFOD_TIMEOUT", SYMBOLIZE_TIMEOUT_DEFAULT, 0) < 0 ||
            setenv("DEBUGINFOD_MAXTIME", SYMBOLIZE_MAXTIME_DEFAULT, 0) < 0)
                return -ENOMEM;
        if (run_deadline == 0)
                run_deadline = now_usec(CLOCK_MONOTONIC) + SYMBOLIZE_DEADLINE_USEC;
        r = run_child(message, mods, root, ret_text, note, note_size);
        if (r < 0)
                snprintf(note, note_size, "the lookup failed (%s): the trace as stored", strerror(-r));
        return r == -ENOMEM ? r : 0;
}

#else

int symbolize_message(const char *message, const char *package_json, const char *root, char **ret_text, char *note,
                      size_t note_size) {
        *ret_text = NULL;
        snprintf(note, note_size, "this coredumpctl was built without libdw: the trace as stored");
        return -EOPNOTSUPP;
}

#endif
