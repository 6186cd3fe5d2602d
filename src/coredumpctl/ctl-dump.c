/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl dump and debug: the newest matching core, uncompressed to --output or stdout, or into
 * an unnamed temporary file for a debugger it forks and execs, all as the invoking user. */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-corefile.h"
#include "ctl-decompress.h"
#include "ctl-dump.h"
#include "ctl-escape.h"
#include "ctl-show.h"
#include "ctl-source.h"
#include "ctl-symbolize.h"
#include "log.h"

/* Writes the entry's core, from its file or from the journal, uncompressed to out_fd. */
static int save_core(const CtlArgs *a, const Entry *e, const CoreFile *cf, int out_fd) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ void *buf = NULL;
        size_t len = 0;
        int r;

        if (cf->path[0]) {
                _cleanup_free_ char *shown = escape_text(cf->path, ESCAPE_DEFAULT);

                assert(!cf->foreign && !cf->outside_store);
                if (!decompress_supported(cf->path))
                        return log_error_errno(-EOPNOTSUPP, "Cannot decompress %s: this coredumpctl was built without lz4 support.",
                                               shown ?: "the core");
                /* the one open: what is read is the regular file found in the store then, whatever
                 * is renamed over its name later */
                fd = corefile_open(a, e);
                if (fd == -EBADFD)
                        return log_error_errno(fd, "Cannot use %s: not a regular file", shown ?: "the core");
                if (fd < 0)
                        return log_error_errno(fd, "Failed to open %s: %m", shown ?: "the core");
                r = decompress_core(cf->path, fd, out_fd, true);
                if (r < 0)
                        return log_error_errno(r, "Failed to decompress %s: %m", shown ?: "the core");
                return 0;
        }
        r = journal_read_core(a, e, &buf, &len);
        if (r < 0)
                return r;
        r = write_core_buffer(buf, len, out_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to write output: %m");
        return 0;
}

/* An entry received from another machine whose core stayed there: say where. */
static int core_elsewhere(const Entry *e, const char *path) {
        _cleanup_free_ char *id = entry_dup(e, "_MACHINE_ID"), *host = entry_hostname(e);
        _cleanup_free_ char *shown_id = escape_text(id ?: "?", ESCAPE_DEFAULT),
                            *shown_host = escape_text(host ?: "?", ESCAPE_DEFAULT);

        return log_error_errno(-EREMOTE, "The core of PID %llu's crash is stored on machine %s (host %s) at \"%s\", "
                               "not on this machine: run coredumpctl there, or use Storage=journal to carry cores in "
                               "the entry.", (unsigned long long) e->pid, shown_id ?: "?", shown_host ?: "?", path);
}

/* Whether the entry has a core we can read at all; a clear error if not. */
static int check_core(const CtlArgs *a, const Entry *e, const CoreFile *cf) {
        if (cf->path[0]) {
                _cleanup_free_ char *shown = escape_text(cf->path, ESCAPE_DEFAULT);
                const char *p = shown ?: "the core";

                if (cf->foreign)
                        return log_error_errno(-EPERM, "Not using \"%s\": by its name it is not the core of PID %llu's crash.",
                                               p, (unsigned long long) e->pid);
                if (cf->outside_store)
                        return log_error_errno(-EPERM, "Not using \"%s\": it is not in a store the configuration names "
                                               "(Directory=, or systemd-coredump's " SYSTEMD_COREDUMP_DIR "), or that store "
                                               "is writable by others than its owner.", p);
                if (strcmp(cf->state, "remote") == 0 && e->foreign && !entry_from_other_machine(a, e))
                        return log_error_errno(-EREMOTE, "Not using \"%s\": the entry of PID %llu's crash comes from a "
                                               "journal file the local journald did not write (-D, --file, or another "
                                               "machine's or a container's journal), which names no file here.",
                                               p, (unsigned long long) e->pid);
                if (strcmp(cf->state, "remote") == 0)
                        return core_elsewhere(e, p);
                if (strcmp(cf->state, "missing") == 0)
                        return log_error_errno(-ENOENT, "Cannot access \"%s\": %m", p);
                if (strcmp(cf->state, "inaccessible") == 0)
                        return log_error_errno(-EACCES, "Cannot access \"%s\": %m", p);
                if (strcmp(cf->state, "error") == 0)
                        return log_error_errno(-EBADFD, "Cannot use \"%s\": not a regular file", p);
                return 0;
        }
        if (!e->core_in_journal)
                return log_error_errno(-ENOENT, "Coredump entry has no core attached (neither internally in the journal nor externally on disk).");
        return 0;
}

int verb_dump(const CtlArgs *a, const EntryList *l) {
        const Entry *e = &l->items[l->n - 1];
        _cleanup_close_ int out = -EBADF;
        CoreFile cf;
        int r;

        if (a->field)
                return log_error_errno(-EINVAL, "Option --field/-F only makes sense with list");
        show_info_entry(a, a->output ? stdout : stderr, e, false);
        fflush(stdout);
        corefile_analyze(a, e, &cf);
        r = check_core(a, e, &cf);
        if (r < 0)
                return r;
        if (a->output) {
                out = open(a->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
                if (out < 0)
                        return log_error_errno(negative_errno(), "Failed to open \"%s\" for writing: %m", a->output);
        } else if (isatty(STDOUT_FILENO))
                return log_error_errno(-ENOTTY, "Refusing to dump core to tty (use shell redirection or specify --output).");
        r = save_core(a, e, &cf, out >= 0 ? out : STDOUT_FILENO);
        if (r < 0)
                return r;
        if (l->n > 1 && !a->quiet)
                log_notice("More than one entry matches, ignoring rest.");
        return 0;
}

/* An unnamed file for the uncompressed core: nothing to clean up whatever happens. */
static int open_unnamed_tmp(void) {
        const char *dir = getenv("TMPDIR") ?: "/var/tmp";
        char path[PATH_MAX];
        int fd;

        fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
                return fd >= 0 ? fd : negative_errno();
        /* file systems without O_TMPFILE: create and unlink at once */
        snprintf(path, sizeof path, "%s/coredump-XXXXXX", dir);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        (void) unlink(path);
        return fd;
}

static const char *debugger_name(const CtlArgs *a) {
        return a->debugger ?: getenv("SYSTEMD_DEBUGGER") ?: "gdb";
}

/* The tree the crashed program saw: --root, or a chroot the record names. */
static void sysroot_of(const CtlArgs *a, const Entry *e, char *buf, size_t size) {
        _cleanup_free_ char *root = entry_dup(e, "COREDUMP_ROOT");
        struct stat st;

        buf[0] = 0;
        if (a->root)
                snprintf(buf, size, "%s", a->root);
        else if (root && root[0] == '/' && strcmp(root, "/") != 0 && stat(root, &st) >= 0 && S_ISDIR(st.st_mode))
                snprintf(buf, size, "%s", root);
}

/* the debugger, its arguments, the executable, "-c" and the core, two options for the sysroot,
 * two for debuginfod, the NULL */
#define DEBUGGER_ARGV_MAX (DEBUGGER_ARGS_MAX + 10)

static int run_debugger(const CtlArgs *a, const char *exe, const char *core, const char *sysroot) {
        const char *argv[DEBUGGER_ARGV_MAX], *dbg = debugger_name(a);
        char sysroot_cmd[PATH_MAX + 64];
        size_t n = 0;
        int status;
        pid_t pid;

        argv[n++] = dbg;
        for (size_t i = 0; i < a->n_debugger_args; i++)
                argv[n++] = a->debugger_args[i];
        argv[n++] = exe;
        argv[n++] = "-c";
        argv[n++] = core;
        if (sysroot[0] && strcmp(dbg, "gdb") == 0) {
                snprintf(sysroot_cmd, sizeof sysroot_cmd, "set sysroot %s", sysroot);
                argv[n++] = "-iex";
                argv[n++] = sysroot_cmd;
        } else if (sysroot[0] && strcmp(dbg, "lldb") == 0) {
                snprintf(sysroot_cmd, sizeof sysroot_cmd, "platform select --sysroot %s host", sysroot);
                argv[n++] = "-O";
                argv[n++] = sysroot_cmd;
        }
        /* gdb asks before using debuginfod, and without a terminal to ask on does not use it: the
         * user who set DEBUGINFOD_URLS (which gdb inherits) has answered */
        if (symbolize_enabled() && strcmp(dbg, "gdb") == 0) {
                argv[n++] = "-iex";
                argv[n++] = "set debuginfod enabled on";
        }
        argv[n] = NULL;

        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return log_error_errno(negative_errno(), "Failed to fork: %m");
        if (pid == 0) {
                signal(SIGINT, SIG_DFL);
                execvp(dbg, (char *const *) argv);
                log_error_errno(negative_errno(), "Failed to invoke %s: %m", dbg);
                _exit(EXIT_FAILURE);
        }
        /* Ctrl-C belongs to the debugger */
        signal(SIGINT, SIG_IGN);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(negative_errno(), "Failed to wait for %s: %m", dbg);
        signal(SIGINT, SIG_DFL);
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        log_error("%s terminated by signal %s.", dbg, strsignal(WTERMSIG(status)));
        return 128 + WTERMSIG(status);
}

int verb_debug(const CtlArgs *a, const EntryList *l) {
        const Entry *e = &l->items[l->n - 1];
        _cleanup_free_ char *exe = entry_dup(e, "COREDUMP_EXE");
        char exe_path[PATH_MAX], core_path[64], sysroot[PATH_MAX];
        _cleanup_close_ int tmp = -EBADF;
        size_t el;
        CoreFile cf;
        int r;

        if (a->field)
                return log_error_errno(-EINVAL, "Option --field/-F only makes sense with list");
        if (!a->quiet) {
                show_info_entry(a, stdout, e, false);
                fputc('\n', stdout);
        }
        if (!exe)
                return log_error_errno(-ENOENT, "Failed to retrieve COREDUMP_EXE field.");
        el = strlen(exe);
        if (el > strlen(" (deleted)") && strcmp(exe + el - strlen(" (deleted)"), " (deleted)") == 0)
                return log_error_errno(-ENOENT, "Binary already deleted.");
        if (exe[0] != '/')
                return log_error_errno(-ENOENT, "Binary is not an absolute path.");
        sysroot_of(a, e, sysroot, sizeof sysroot);
        snprintf(exe_path, sizeof exe_path, "%s%s", a->root ? a->root : sysroot, exe);
        corefile_analyze(a, e, &cf);
        r = check_core(a, e, &cf);
        if (r < 0)
                return r;
        tmp = open_unnamed_tmp();
        if (tmp < 0)
                return log_error_errno(tmp, "Failed to create a temporary file: %m");
        r = save_core(a, e, &cf, tmp);
        if (r < 0)
                return r;
        /* the debugger inherits the descriptor and opens the unnamed file through it */
        if (fcntl(tmp, F_SETFD, 0) < 0)
                return log_error_errno(negative_errno(), "Failed to pass the core on: %m");
        snprintf(core_path, sizeof core_path, "/proc/self/fd/%d", tmp);
        return run_debugger(a, exe_path, core_path, sysroot);
}
