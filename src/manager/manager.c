/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpd's Manager: start-up, accepting, reload, stop and teardown. Manager (root): sets
 * core_pattern, opens the store and sockets, spawns workers; never reads core bytes. */
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "collector.h"
#include "crash.h"
#include "fd-util.h"
#include "control.h"
#include "forward-launch.h"
#include "forward.h"
#include "handover.h"
#include "journal-send.h"
#include "record-fields.h"
#include "receive.h"
#include "manager.h"
#include "proto.h"
#include "store.h"
#include "test-fault.h"
#include "suppress.h"
#include "time-util.h"
#include "worker-pool.h"
#include "worker-watchdog.h"
#include "zygote.h"

/* Refused connections are logged at most this often. */
#define REFUSE_LOG_INTERVAL_USEC (10 * USEC_PER_SEC)
#define REFUSE_LOG_BURST 5
#define WORKER_BINARY "coredump-worker"
#define FORWARD_BINARY "coredump-forward"
/* The store is also vacuumed this often without crashes (MaxAgeSec=, files others added). */
#define VACUUM_PERIOD_USEC (10 * 60 * USEC_PER_SEC)

static int find_worker(Manager *m) {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

        /* The worker is installed next to coredumpd (libexecdir; or the build tree). */
        if (n <= 0)
                return log_error_errno(negative_errno(), "Cannot find our own executable: %m");
        self[n] = 0;
        if (snprintf(m->worker_path, sizeof m->worker_path, "%s/%s", dirname(self), WORKER_BINARY) >=
            (int) sizeof m->worker_path)
                return -ENAMETOOLONG;
        if (access(m->worker_path, X_OK) < 0)
                return log_error_errno(negative_errno(), "Worker %s is not executable: %m", m->worker_path);
        /* Pinned: workers are spawned from this inode, not from the path, so that while a
         * package upgrade replaces the files, this manager keeps starting the worker of its own
         * version (their protocol may differ between versions) until it is restarted itself. */
        _cleanup_close_ int fd = open(m->worker_path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Cannot open the worker %s: %m", m->worker_path);
        /* above the descriptors a spawn puts in place (stdio, WORKER_CONTROL_FD), which would
         * replace it in the child before its exec */
        safe_close(m->worker_fd);
        safe_close(m->forward_fd);
        m->worker_fd = fcntl(fd, F_DUPFD_CLOEXEC, WORKER_CONTROL_FD + 1);
        if (m->worker_fd < 0)
                return log_error_errno(negative_errno(), "Cannot keep the worker %s open: %m", m->worker_path);
        snprintf(m->worker_exec, sizeof m->worker_exec, "/proc/self/fd/%d", m->worker_fd);
        return 0;
}

/* coredump-forward beside the worker, pinned the same way; without it crashes are not forwarded
 * into containers (and the log says so once, at start). */
static void find_forwarder(Manager *m) {
        char path[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;

        if (snprintf(path, sizeof path, "%s", m->worker_path) >= (int) sizeof path || !strrchr(path, '/'))
                return;
        snprintf(strrchr(path, '/') + 1, sizeof path - (size_t) (strrchr(path, '/') + 1 - path), "%s", FORWARD_BINARY);
        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0 || access(path, X_OK) < 0) {
                log_warning_errno(fd < 0 ? fd : negative_errno(),
                                  "%s is missing (%m): crashes will not be forwarded into containers", path);
                return;
        }
        safe_close(m->forward_fd);
        m->forward_fd = fcntl(fd, F_DUPFD_CLOEXEC, FORWARD_FD_FIRST + FORWARD_FDS); /* above what a spawn places */
        if (m->forward_fd >= 0)
                snprintf(m->forward_exec, sizeof m->forward_exec, "/proc/self/fd/%d", m->forward_fd);
}

static int apply_config(Manager *m) {
        int fd;

        /* Needed whatever Storage= says: the records are kept there. */
        fd = store_open_dir(m->config.directory);
        if (fd < 0)
                return log_error_errno(fd, "Cannot open the storage directory %s: %m", m->config.directory);
        safe_close(m->storage_fd);
        m->storage_fd = fd;
        store_usage_reset(&m->store_usage); /* maybe another directory */
        return 0;
}

int manager_new(Manager **ret, const char *config_file, const char *dropin_dir) {
        Manager *m = calloc(1, sizeof *m);
        int r;

        if (!m)
                return -ENOMEM;
        *m = (Manager) {
                .config_file = config_file,
                .dropin_dir = dropin_dir,
                .listen_fd = -EBADF,
                .storage_fd = -EBADF,
                .worker_fd = -EBADF,
                .forward_fd = -EBADF,
                .launcher_sock = -EBADF,
                .launcher_pidfd = -EBADF,
                .refuse_ratelimit = RATELIMIT_INIT(REFUSE_LOG_INTERVAL_USEC, REFUSE_LOG_BURST),
                .record_ratelimit = RATELIMIT_INIT(REFUSE_LOG_INTERVAL_USEC, REFUSE_LOG_BURST),
                .user_cap_ratelimit = RATELIMIT_INIT(REFUSE_LOG_INTERVAL_USEC, REFUSE_LOG_BURST),
        };
        *ret = m;
        zygote_init(&m->zygote);
        limits_init(&m->limits, suppress_summary, m);
        m->physical_memory = (uint64_t) MAX(sysconf(_SC_PHYS_PAGES), 0L) * (uint64_t) MAX(sysconf(_SC_PAGESIZE), 0L);

        r = config_load(&m->config, config_file, dropin_dir);
        if (r < 0)
                return log_error_errno(r, "Invalid configuration, not starting.");
        r = read_boot_id(m->boot_id);
        if (r < 0)
                return log_error_errno(r, "Failed to read the boot id: %m");
        if (read_machine_id(m->machine_id) < 0)
                m->machine_id[0] = 0;
        if (gethostname(m->hostname, sizeof m->hostname - 1) < 0)
                snprintf(m->hostname, sizeof m->hostname, "localhost");
        r = find_worker(m);
        if (r >= 0)
                find_forwarder(m);
        if (r < 0)
                return r;
        r = pool_resolve_user(m);
        if (r < 0)
                return r;
        r = apply_config(m);
        if (r < 0)
                return r;
        return sd_event_default(&m->event);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        /* One connection per wake-up, so a storm cannot starve crashes already in flight. */
        int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (conn < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning_errno(negative_errno(), "accept: %m");
                return 0;
        }
        crash_accept(m, conn);
        return 0;
}

void manager_update_accepting(Manager *m) {
        /* past MaxParallel= cores in flight crashes are still taken in, to be refused */
        bool want = !m->stopping && m->n_crashes < m->config.max_parallel + CRASHES_REFUSING_MAX;

        /* handovers already accepted are crashes too: they are read before the daemon exits */
        if (m->stopping && m->n_crashes == 0 && m->handover_server.n_conns == 0 && m->receive_server.n_conns == 0)
                (void) sd_event_exit(m->event, 0);

        if (!m->listen_source || want == m->accepting)
                return;
        /* Past that the kernel's connections wait in the listen backlog. */
        (void) sd_event_source_set_enabled(m->listen_source, want ? SD_EVENT_ON : SD_EVENT_OFF);
        m->accepting = want;
}

int manager_setup_listen(Manager *m, const char *socket_path, const char *receive_path) {
        int handover = -EBADF, receive = -EBADF;
        int fd = listen_from_systemd(m->socket_path, sizeof m->socket_path, &handover, &receive);
        int r;

        if (fd < 0)
                return fd;
        if (fd == 0) {
                fd = listen_bind(socket_path);
                if (fd < 0)
                        return fd;
                snprintf(m->socket_path, sizeof m->socket_path, "%s", socket_path);
                m->socket_bound_here = true;
        } else
                log_info("Using the socket passed by the service manager: %s", m->socket_path);
        m->listen_fd = fd;
        r = fd_set_nonblock(fd, true);
        if (r < 0)
                return r;
        r = sd_event_add_io(m->event, &m->listen_source, fd, EPOLLIN, on_accept, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the listening socket: %m");
        m->accepting = true;
        /* forwarded crashes: passed as /run/systemd/coredump, or --receive= */
        r = receive_setup(m, receive, receive_path);
        if (r < 0) {
                safe_close(handover);
                return r;
        }
        /* pipe mode's handover socket, beside it (harmless in socket mode) */
        return handover_setup(m, handover);
}

int manager_register_pattern(Manager *m) {
        int r = pattern_register(m->config.mode, m->socket_path, m->saved_pattern, sizeof m->saved_pattern,
                                 m->our_pattern, sizeof m->our_pattern, &m->pipe_mode);
        if (r < 0)
                return r;
        m->registered = true;
        if (m->pipe_mode && pipe_limit_raise(m->config.max_parallel + CRASHES_REFUSING_MAX, &m->saved_pipe_limit) >= 0)
                m->pipe_limit_raised = true;
        return 0;
}

/* Gives core_pattern (and core_pipe_limit) back. */
static void manager_unregister(Manager *m) {
        if (!m->registered)
                return;
        (void) pattern_restore(m->saved_pattern, m->our_pattern);
        if (m->pipe_limit_raised)
                (void) pipe_limit_set(m->saved_pipe_limit);
        m->registered = m->pipe_limit_raised = false;
}

/* Tells the journal, as root, which uid the workers log crash entries as: journals read on another
 * machine carry this machine's uids, which mean nothing there (coredumpctl(1)). Without journald
 * (records only) there is nobody to tell. */
static void announce_workers(const Manager *m) {
        _cleanup_(record_free) Record r = {};
        int e;

        e = record_addf(&r, "MESSAGE", "Workers log crash entries as uid %u (%s)", (unsigned) m->worker_uid,
                        m->config.worker_user);
        e = e ?: record_add_str(&r, "MESSAGE_ID", MESSAGE_COREDUMP_WORKERS_STR);
        e = e ?: record_add_str(&r, "PRIORITY", "6");
        e = e ?: record_addf(&r, WORKERS_UID_FIELD, "%u", (unsigned) m->worker_uid);
        /* a stopped journald must not stop the start */
        e = e ?: journal_send_record(r.buf, r.len, NULL, 0, MSG_DONTWAIT);
        if (e < 0 && e != -ENOENT && e != -ECONNREFUSED)
                log_debug_errno(e, "Failed to tell the journal the workers' uid: %m");
}

int manager_reload(Manager *m) {
        Config old = m->config, fresh;
        uid_t old_uid = m->worker_uid;
        gid_t old_gid = m->worker_gid;
        int r;

        log_info("Reloading configuration");
        r = config_load(&fresh, m->config_file, m->dropin_dir);
        if (r < 0)
                return log_error_errno(r, "New configuration is invalid, keeping the previous one.");
        m->config = fresh;
        r = apply_config(m);
        if (r >= 0)
                r = pool_resolve_user(m);
        if (r < 0) {
                m->config = old;
                (void) apply_config(m);
                (void) pool_resolve_user(m); /* the old name may resolve to another uid by now */
                if (m->worker_uid != old_uid || m->worker_gid != old_gid) {
                        pool_retire_idle(m); /* spares mapped ahead to the old ids */
                        pool_fill(m);
                }
        } else {
                /* Spares were started for the old settings (user); busy workers finish their crash. */
                if (!m->config.worker_zygote)
                        zygote_stop(m);
                pool_retire_idle(m);
                m->map_ahead_failures = 0; /* the new settings may let spares be mapped ahead again */
                pool_fill(m);
                manager_update_accepting(m);
        }
        if (m->worker_uid != old_uid) /* entries from now on come from another uid */
                announce_workers(m);
        if (r < 0)
                return log_error_errno(r, "New configuration cannot be applied, keeping the previous one.");
        return 0;
}

static int on_stop_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        log_error("%u crash(es) still in flight after %llus, giving up on them", m->n_crashes,
                  (unsigned long long) (STOP_DRAIN_TIMEOUT_USEC / USEC_PER_SEC));
        return sd_event_exit(m->event, 0);
}

/* Takes no new crashes and gives the pattern back at once (the kernel's next dump goes where
 * it went before us), lets the ones in flight finish, then exits. */
static void manager_begin_stop(Manager *m) {
        m->stopping = true;
        (void) sd_notify(false, "STOPPING=1");
        manager_unregister(m);
        /* new handovers stay queued in the socket for the next coredumpd */
        handover_stop_accepting(m);
        receive_stop_accepting(m);
        pool_retire_idle(m);
        (void) sd_event_add_time_relative(m->event, &m->stop_timer, CLOCK_MONOTONIC, STOP_DRAIN_TIMEOUT_USEC, 0,
                                          on_stop_timeout, m);
        manager_update_accepting(m);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        if (si->ssi_signo == SIGHUP) {
                (void) manager_reload(m);
                return 0;
        }
        if (m->stopping) {
                log_notice("Received %s again, stopping now", strsignal((int) si->ssi_signo));
                return sd_event_exit(m->event, 0);
        }
        log_info("Received %s, stopping after %u crash(es) in flight", strsignal((int) si->ssi_signo), m->n_crashes);
        manager_begin_stop(m);
        return 0;
}

#ifdef MANAGER_TEST_FAULTS
#define FAULT_VACUUM_PERIOD_USEC USEC_PER_SEC
/* Test builds only (meson -Dworker-test-faults=true): COREDUMPD_TEST_FAULT=vacuum-soon runs the
 * periodic vacuum every FAULT_VACUUM_PERIOD_USEC, so that a test sees it without a new crash. */
static uint64_t vacuum_period(void) {
        return test_fault_is("vacuum-soon") ? FAULT_VACUUM_PERIOD_USEC : VACUUM_PERIOD_USEC;
}
#else
static uint64_t vacuum_period(void) {
        return VACUUM_PERIOD_USEC;
}
#endif

static int on_vacuum_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->store_usage.known = false; /* a full scan */
        store_vacuum(m->storage_fd, &m->config, NULL, 0, &m->store_usage);
        (void) sd_event_source_set_time_relative(s, vacuum_period());
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int manager_run(Manager *m) {
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
                r = sd_event_add_signal(m->event, NULL, sigs[i], on_signal, m);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch signal %d: %m", sigs[i]);
        }
        pool_init(m, &crash_pool_ops);
        pool_fill(m);
        collector_prefork(m);
        r = sd_event_add_time_relative(m->event, &m->vacuum_timer, CLOCK_MONOTONIC, vacuum_period(), 0,
                                       on_vacuum_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the vacuum timer: %m");
        (void) sd_notify(false, "READY=1\nSTATUS=Waiting for crashes");
        log_info("Ready: socket %s, storage %s (%s, %s), %u spare workers as uid %u", m->socket_path,
                 m->config.storage == STORAGE_NONE ? "none" : m->config.directory, storage_to_string(m->config.storage),
                 compression_to_string(m->config.compress), m->config.spare_workers, (unsigned) m->worker_uid);
        announce_workers(m);
        return sd_event_loop(m->event);
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        (void) sd_notify(false, "STOPPING=1");
        m->stopping = true; /* whatever ends now starts nothing (a spare collector, workers) */
        /* Stop taking crashes first, then let the kernel go: unregister, close, release tasks. */
        m->listen_source = sd_event_source_disable_unref(m->listen_source);
        control_free(m);
        handover_free(m);
        receive_free(m);
        manager_unregister(m);
        while (m->crashes)
                crash_drop(m->crashes, LOG_ERR, "the daemon stopped before it was done; core lost, task released");
        collector_free_all(m);
        pool_free_all(m);
        forward_launcher_stop(m);
        m->respawn_timer = sd_event_source_disable_unref(m->respawn_timer);
        m->finished_timer = sd_event_source_disable_unref(m->finished_timer);
        worker_watchdog_free(m);
        m->stop_timer = sd_event_source_disable_unref(m->stop_timer);
        m->vacuum_timer = sd_event_source_disable_unref(m->vacuum_timer);
        m->summary_timer = sd_event_source_disable_unref(m->summary_timer);
        limits_done(&m->limits); /* the summaries of windows still open */
        safe_close(m->listen_fd);
        if (m->socket_bound_here)
                (void) unlink(m->socket_path);
        safe_close(m->storage_fd);
        store_usage_reset(&m->store_usage);
        safe_close(m->worker_fd);
        safe_close(m->forward_fd);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}
