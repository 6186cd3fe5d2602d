/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd: the manager. Accepts the kernel's coredump connections, proves each comes from a
 * crashing task, answers the request, collects what /proc says about the task, and hands the
 * connection to a single-use sandboxed worker; then stores the result. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "build-config.h"
#include "caps.h"
#include "config.h"
#include "control.h"
#include "forward-launch.h"
#include "forward-proto.h"
#include "log.h"
#include "manager.h"
#include "pattern.h"
#include "register.h"
#include "syscall-filter.h"

enum Action { ACTION_RUN, ACTION_CHECK_CONFIG, ACTION_REGISTER, ACTION_UNREGISTER };

typedef struct Args {
        enum Action action;
        const char *socket_path;
        const char *control_path;
        const char *receive_path;
        const char *config_file;
        const char *dropin_dir;
        bool register_pattern;
} Args;

static void help(void) {
        printf("Usage: coredumpd [OPTIONS]\n\n"
               "Receives core dumps from the kernel's coredump socket and stores them.\n\n"
               "  --socket=PATH        socket to bind when not socket-activated (default %s)\n"
               "  --control=PATH       control socket for coredumpctl, \"\" for none (default %s)\n"
               "  --config=FILE        configuration file (default %s)\n"
               "  --config-dir=DIR     drop-in directory (default %s)\n"
               "  --receive=PATH       take crashes forwarded from the host on PATH, when not\n"
               "                       socket-activated with " FORWARD_SOCKET_PATH "\n"
               "  --no-register        do not set kernel.core_pattern (a unit does it)\n"
               "  --check-config       validate the configuration and exit\n"
               "  --register           set kernel.core_pattern for the socket and exit\n"
               "  --unregister         restore the previous kernel.core_pattern and exit\n"
               "  --version            print the version\n",
               DEFAULT_SOCKET_PATH, DEFAULT_CONTROL_PATH, CONFIG_FILE, CONFIG_DROPIN_DIR);
}

static int parse_args(int argc, char **argv, Args *a) {
        enum { OPT_SOCKET = 256, OPT_CONFIG, OPT_CONFIG_DIR, OPT_NO_REGISTER, OPT_CHECK, OPT_REG, OPT_UNREG, OPT_VERSION, OPT_CONTROL, OPT_RECEIVE };
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "config", required_argument, NULL, OPT_CONFIG },
                { "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
                { "no-register", no_argument, NULL, OPT_NO_REGISTER },
                { "check-config", no_argument, NULL, OPT_CHECK },
                { "register", no_argument, NULL, OPT_REG },
                { "unregister", no_argument, NULL, OPT_UNREG },
                { "version", no_argument, NULL, OPT_VERSION },
                { "control", required_argument, NULL, OPT_CONTROL },
                { "receive", required_argument, NULL, OPT_RECEIVE },
                {},
        };
        int c;

        *a = (Args) { ACTION_RUN, DEFAULT_SOCKET_PATH, DEFAULT_CONTROL_PATH, NULL, CONFIG_FILE, CONFIG_DROPIN_DIR, true };
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case OPT_VERSION:
                        printf("coredumpd %s\n", PACKAGE_VERSION);
                        return 0;
                case OPT_SOCKET:
                        a->socket_path = optarg;
                        break;
                case OPT_CONTROL:
                        a->control_path = optarg;
                        break;
                case OPT_RECEIVE:
                        a->receive_path = optarg;
                        break;
                case OPT_CONFIG:
                        a->config_file = optarg;
                        break;
                case OPT_CONFIG_DIR:
                        a->dropin_dir = optarg;
                        break;
                case OPT_NO_REGISTER:
                        a->register_pattern = false;
                        break;
                case OPT_CHECK:
                        a->action = ACTION_CHECK_CONFIG;
                        break;
                case OPT_REG:
                        a->action = ACTION_REGISTER;
                        break;
                case OPT_UNREG:
                        a->action = ACTION_UNREGISTER;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind != argc)
                return log_error_errno(-EINVAL, "Unexpected argument '%s'", argv[optind]);
        return 1;
}

static int check_config(const Args *a) {
        _cleanup_(config_files_freep) char **files = NULL;
        char pattern[CORE_PATTERN_MAX + 2];
        const char *why = "";
        ConfigSearch search;
        Config c;
        int r;

        config_search_init(&search, a->config_file, a->dropin_dir);
        if (config_load_search(&c, &search, &files) < 0)
                return 1;
        /* the files applied, in order, as comments: the lines below stay KEY=value */
        for (char **f = files; *f; f++)
                printf("# %s\n", *f);
        r = pattern_choose(c.mode, a->socket_path, pattern, sizeof pattern, &why);
        printf("Mode=%s\nActive=%s (%s)\nPattern=%s\n", mode_to_string(c.mode),
               r < 0 ? "none" : r == 1 ? "pipe" : "socket", r < 0 ? strerror(-r) : why, r < 0 ? "" : pattern);
        printf("Storage=%s\nCompress=%s\nCompressLevel=%d\nProcessSizeMax=%llu\nExternalSizeMax=%llu\n"
               "JournalSizeMax=%llu\nDirectory=%s\nWorkerUser=%s\nSpareWorkers=%u\nMaxParallel=%u\nTimeoutSec=%llu\n"
               "RateLimitIntervalSec=%llu\nRateLimitBurst=%u\n",
               storage_to_string(c.storage), compression_to_string(c.compress), c.compress_level,
               (unsigned long long) c.process_size_max, (unsigned long long) c.external_size_max,
               (unsigned long long) c.journal_size_max, c.directory, c.worker_user, c.spare_workers, c.max_parallel,
               (unsigned long long) (c.timeout_usec / USEC_PER_SEC),
               (unsigned long long) (c.rate_limit_interval_usec / USEC_PER_SEC), c.rate_limit_burst);
        /* the per-user cap in effect (the default rule applied); "infinity" for none */
        if (config_max_parallel_per_user(&c) == PARALLEL_PER_USER_INFINITY)
                printf("MaxParallelPerUser=infinity\n");
        else
                printf("MaxParallelPerUser=%u\n", config_max_parallel_per_user(&c));
        printf("WorkerZygote=%s\n", c.worker_zygote ? "yes" : "no");
        if (c.worker_stall_usec == WORKER_STALL_INFINITY)
                printf("WorkerStallTimeoutSec=infinity\n");
        else
                printf("WorkerStallTimeoutSec=%llu\n", (unsigned long long) (c.worker_stall_usec / USEC_PER_SEC));
        /* in bytes, as this machine's memory makes it */
        printf("SpoolMax=%llu\n", (unsigned long long) config_spool_max(&c, (uint64_t) MAX(sysconf(_SC_PHYS_PAGES), 0L) *
                                                                            (uint64_t) MAX(sysconf(_SC_PAGESIZE), 0L)));
        return 0;
}

#define SUID_DUMPABLE_PATH "/proc/sys/fs/suid_dumpable"

/* fs.suid_dumpable=1 is the kernel's unsafe debugging mode: a process that changed credentials
 * stays dumpable, so its user may ptrace it and read its memory (proc(5)). Workers clear the
 * flag after each id change, but the rest of the system does not: say so, once, at startup. */
static void warn_unsafe_suid_dumpable(void) {
        char buf[8] = {};
        FILE *f = fopen(SUID_DUMPABLE_PATH, "re");

        if (!f)
                return;
        if (fgets(buf, sizeof buf, f) && strcmp(buf, "1\n") == 0)
                log_warning("fs.suid_dumpable=1: the kernel's unsafe debugging mode (processes that changed "
                            "credentials stay ptraceable by their user); use 2 (or 0) in production");
        fclose(f);
}

/* Each crash in flight holds a few descriptors (its connection, output, pidfd, /proc directory,
 * sockets to its collector and worker; never its module files: modules.h), for MaxParallel= and
 * more crashes: the soft descriptor limit goes up to the hard one, at most MANAGER_NOFILE_MAX
 * (coredump-socket.service's LimitNOFILE=), as started by hand it is often 1024. The workers set
 * their own (sandbox.c); nothing here uses select(). */
#define MANAGER_NOFILE_MAX 65536U

static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= MIN(rl.rlim_max, (rlim_t) MANAGER_NOFILE_MAX))
                return;
        rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) MANAGER_NOFILE_MAX);
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warning_errno(negative_errno(), "Could not raise the soft descriptor limit to %llu: %m",
                                  (unsigned long long) rl.rlim_cur);
}

static int run(const Args *a) {
        Manager *m = NULL;
        sigset_t ss;
        int r;

        /* sd-event takes signals (and child exits) through fds: block them first. */
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        sigaddset(&ss, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
                return log_error_errno(negative_errno(), "sigprocmask: %m");
        (void) signal(SIGPIPE, SIG_IGN);
        warn_unsafe_suid_dumpable();
        raise_nofile();

        r = manager_syscall_filter();
        if (r < 0)
                return log_error_errno(r, "Failed to install the syscall filter: %m");
        log_info("Syscall filter installed: the calls no process of coredump-socket makes are refused");
        r = manager_drop_capabilities();
        if (r < 0)
                return log_error_errno(r, "Failed to drop capabilities: %m");
        r = manager_new(&m, a->config_file, a->dropin_dir);
        if (r >= 0) {
                /* the one process that keeps CAP_SYS_ADMIN, for coredump-forward; not us */
                forward_launcher_start(m);
                r = manager_drop_forward_capability();
                if (r < 0)
                        log_error_errno(r, "Failed to drop CAP_SYS_ADMIN: %m");
        }
        if (r >= 0)
                r = manager_setup_listen(m, a->socket_path, a->receive_path);
        if (r >= 0)
                control_setup(m, a->control_path);
        if (r >= 0 && a->register_pattern)
                r = manager_register_pattern(m);
        if (r >= 0)
                r = manager_run(m);
        manager_free(m);
        return r;
}

int main(int argc, char **argv) {
        Args a;
        int r;

        /* The kernel does not stop a socket dump recursing into us: never be dumpable. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        log_setup("coredumpd");

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (a.action == ACTION_CHECK_CONFIG)
                return check_config(&a);
        if (geteuid() != 0) {
                log_error("coredumpd must run as root (it reads other users' /proc and sets core_pattern)");
                return 1;
        }
        if (a.action == ACTION_REGISTER || a.action == ACTION_UNREGISTER) {
                Config c;
                /* Mode= decides socket or pipe; an invalid configuration is not a reason to leave
                 * core_pattern to whoever had it: the defaults are used */
                (void) config_load(&c, a.config_file, a.dropin_dir);
                if (a.action == ACTION_REGISTER)
                        return register_oneshot(a.socket_path, &c) < 0 ? 1 : 0;
                return unregister_oneshot(a.socket_path, &c) < 0 ? 1 : 0;
        }
        return run(&a) < 0 ? 1 : 0;
}
