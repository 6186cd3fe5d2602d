/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One crash in coredumpd: verify the peer, the @@ handshake, /proc, a worker, then link the core
 * and keep its record. Manager (root): never reads core bytes; creates files only in the store. */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collector.h"
#include "container.h"
#include "crash-record.h"
#include "crash.h"
#include "forward-launch.h"
#include "handshake.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "policy.h"
#include "record-fields.h"
#include "store.h"
#include "test-fault.h"
#include "time-util.h"
#include "verify.h"
#include "worker-pool.h"

static void crash_keep_record(Crash *c, const CoreFacts *facts, const char *error);
static void crash_commit(Crash *c, const CoreFacts *facts);
static void crash_worker_recorded(Crash *c, int error);
static void crash_worker_lost(Crash *c, const char *why);
static int crash_forward(Crash *c, CoreFacts *facts);

/* comm for the daemon's own log lines: the process chose it, so no control character gets through */
static const char *crash_comm(const Crash *c) {
        return c->log_comm[0] ? c->log_comm : "n/a";
}

void crash_free(Crash *c) {
        Manager *m;

        if (!c)
                return;
        m = c->manager;
        if (c->worker)
                worker_kill(c->worker, "its crash was abandoned"); /* nothing it reports could be used now */
        if (c->collector)
                collector_harvest(c, c->incomplete, sizeof c->incomplete); /* frees it, or kills it if it still runs */
        forward_stop(c->forwarder);
        forward_target_free(c->forward);
        safe_close(c->proc_dir);
        safe_close(c->leader_dir);
        safe_close(c->files_root);
        sd_event_source_disable_unref(c->io_source);
        sd_event_source_disable_unref(c->timer_source);
        safe_close(c->conn_fd);
        safe_close(c->pidfd);
        safe_close(c->out_fd);
        record_free(&c->record);
        meta_done(&c->meta);
        record_free(&c->analysis);
        record_free(&c->forwarded_fields);
        if (c->core_counted)
                m->n_cores--;
        LIST_REMOVE(crashes, m->crashes, c);
        m->n_crashes--;
        free(c);
        manager_update_accepting(m);
        collector_prefork(m); /* forks the spare collector for the next crash, now that this one is done */
}

/* A verified crash whose worker never got to the record: the manager keeps what it knows. */
static void crash_keep_failed_record(Crash *c, const char *why) {
        CoreFacts none = {};

        if (c->state == CRASH_FORWARDING) { /* its core is stored: the record names it */
                CoreFacts stored = c->forward_facts;

                snprintf(stored.forward_error, sizeof stored.forward_error, "stopped: %s", why);
                crash_keep_record(c, &stored, NULL);
                return;
        }

        if (c->collected && c->state != CRASH_RECORDING)
                crash_keep_record(c, &none, why);
}

void crash_drop(Crash *c, int level, const char *what) {
        /* the record first: once the log says what happened, the record says it too */
        crash_keep_failed_record(c, what);
        log_full_errno(level, 0, "Crash of PID %d (%s): %s", (int) c->info.pid, crash_comm(c), what);
        crash_free(c);
}

/* No worker could be given the crash, not even for its record (error r): the manager keeps the
 * record, which says so. */
static void crash_drop_unhanded(Crash *c, int r) {
        char what[128];

        snprintf(what, sizeof what, "could not be handed to a worker: %s; %s", strerror(-r),
                 c->storing ? "core lost, task released" : "task released");
        crash_drop(c, LOG_ERR, what);
}

static int crash_start_streaming(Crash *c);
static int crash_record_only(Crash *c, const char *why);

/* Refused and counted for its limit's summary: nothing more to do. Every crash ends with a line
 * at debug level. */
static void crash_counted(Crash *c) {
        log_debug("Crash of PID %d: refused, counted for the summary (%s)", (int) c->info.pid, c->no_core_why);
        crash_free(c);
}

static int crash_arm_timer(Crash *c, uint64_t usec_from_accept);
static bool crash_has_stored(const Crash *c);
static void crash_keep_stored(Crash *c, const char *why);

/* Whether the crashed task has exited: the kernel let it go (its worker closed the connection:
 * the core received, or cut short) or it was killed. Its pidfd says so; without one (pipe mode on
 * kernels before %F) it counts as held. */
static bool crash_task_gone(const Crash *c) {
        struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

        return c->pidfd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* TimeoutSec= bounds how long the task is held. A task gone by then holds nothing up: its worker
 * gets as long again to compress, analyse and record the core, once. */
static bool crash_extend_deadline(Crash *c) {
        if (c->deadline_extended || !crash_task_gone(c) || crash_arm_timer(c, 2 * c->manager->config.timeout_usec) < 0)
                return false;
        c->deadline_extended = true;
        log_debug("Crash of PID %d (%s): its task was released in time, its worker has TimeoutSec= again",
                  (int) c->info.pid, crash_comm(c));
        return true;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Crash *c = userdata;

        if ((c->state == CRASH_HANDSHAKE || c->state == CRASH_MARK) &&
            crash_record_only(c, "no complete handshake in time") >= 0)
                return 0;
        if (c->state == CRASH_HANDSHAKE || c->state == CRASH_MARK)
                crash_drop(c, LOG_WARNING, "no complete handshake in time, connection closed");
        else if (c->state == CRASH_COLLECTING)
                crash_collected(c);
        else if (c->state == CRASH_WAIT_WORKER)
                crash_drop(c, LOG_ERR, "no worker became available before the deadline, core lost, task released");
        else if (c->state == CRASH_FORWARDING) {
                forward_stop(TAKE_PTR(c->forwarder));
                crash_forwarded(c, -ETIMEDOUT, "the per-crash deadline (TimeoutSec=) passed while forwarding");
        } else if (c->state == CRASH_RECORDING)
                crash_drop(c, LOG_ERR, "worker exceeded the per-crash deadline writing the journal entry, killed; "
                                       "the core and its record are kept");
        else if (c->deadline_extended || !crash_extend_deadline(c)) {
                if (crash_has_stored(c))
                        crash_keep_stored(c, "its worker passed the per-crash deadline and was killed");
                else if (c->deadline_extended)
                        crash_drop(c, LOG_ERR, "worker exceeded the per-crash deadline after the task's release (twice "
                                               "TimeoutSec=), killed; core lost");
                else
                        crash_drop(c, LOG_ERR, "worker exceeded the per-crash deadline, killed; core lost, task released");
        }
        return 0;
}

static int crash_arm_timer(Crash *c, uint64_t usec_from_accept) {
        uint64_t when = c->accept_usec + usec_from_accept;

        if (c->timer_source) {
                /* a one-shot timer that fired is off: set the time and switch it on again */
                int r = sd_event_source_set_time(c->timer_source, when);
                return r < 0 ? r : sd_event_source_set_enabled(c->timer_source, SD_EVENT_ONESHOT);
        }
        return sd_event_add_time(c->manager->event, &c->timer_source, CLOCK_MONOTONIC, when, 0, on_deadline, c);
}

/* The collector's deadline, from accept: COLLECT_TIMEOUT_USEC from now, but not past half of
 * TimeoutSec=, which the core keeps (a collector stalled that long must not leave the crash's
 * worker a deadline already passed); COLLECT_TIMEOUT_MIN_USEC at least. */
static uint64_t crash_collect_deadline(const Crash *c) {
        uint64_t elapsed = now_usec(CLOCK_MONOTONIC) - c->accept_usec;

        return MIN(elapsed + COLLECT_TIMEOUT_USEC,
                   MAX(elapsed + COLLECT_TIMEOUT_MIN_USEC, c->manager->config.timeout_usec / 2));
}

/* Non-blocking: appends what is there to buf up to want; 1 when complete, 0 to wait, <0 error. */
static int read_some(int fd, uint8_t *buf, size_t *have, size_t want) {
        ssize_t n = recv(fd, buf + *have, want - *have, MSG_DONTWAIT);

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        if (n == 0)
                return -ECONNRESET;
        *have += (size_t) n;
        return *have == want;
}

/* What is known once every read is done: confirmed still this process, its name, the record. */
static int crash_collect_finish(Crash *c) {
        Manager *m = c->manager;
        int r = 0;

        if (c->proc_dir >= 0)
                r = c->pipe && c->pidfd < 0 ? meta_confirm_unpinned(&c->meta, c->proc_dir, c->pipe_tid)
                                            : meta_confirm(&c->meta, c->pidfd, c->info.pid);
        c->proc_dir = safe_close(c->proc_dir);
        c->leader_dir = safe_close(c->leader_dir);
        c->files_root = safe_close(c->files_root);
        c->collected = true;
        if (r < 0) { /* not this process's container either */
                forward_target_free(c->forward);
                c->forward = NULL;
        }
        if (r < 0)
                log_warning_errno(r, "Crash of PID %d: the process changed while its /proc was read, recording only "
                                  "what the kernel guaranteed: %m", (int) c->info.pid);
        if (c->meta.proc_valid && c->incomplete[0])
                (void) record_add_str(&c->meta.fields, "COREDUMP_PROC_INCOMPLETE", c->incomplete);
        if (!c->meta.proc_valid)
                c->log_comm[0] = 0;
        r = coredump_filename(c->name_stem, sizeof c->name_stem, c->meta.proc_valid ? c->meta.comm : NULL,
                              c->info.ruid, m->boot_id, c->info.pid, c->timestamp_usec, "");
        if (r < 0)
                return r;
        record_free(&c->record); /* drops the partial record sent with a job handed out before /proc was read */
        r = crash_record_base(c, &c->record);
        return r < 0 ? r : 1;
}

static void crash_start_early(Crash *c);

/* The kernel's part of /proc, read here; 1 if the collector was started for the rest. */
static int crash_collect_start(Crash *c) {
        _cleanup_close_ int host = -EBADF;
        int r, collecting;

        c->kernel_read = true;
        if (c->pipe && c->pidfd < 0)
                r = meta_collect_unpinned(c->info.pid, c->pipe_tid, &c->meta, &c->proc_dir);
        else
                r = meta_collect(c->pidfd, &c->info, &c->meta, &c->proc_dir);
        if (r < 0) {
                log_warning_errno(r, "Crash of PID %d: /proc could not be confirmed to be this very process%s, "
                                  "recording only what the kernel guaranteed: %m", (int) c->info.pid,
                                  c->info.reaped ? " (it was killed and reaped while being dumped)" : "");
                return 0;
        }
        /* for the log lines from here (meta_confirm() may take it back: crash_collect_finish()) */
        snprintf(c->log_comm, sizeof c->log_comm, "%s", c->meta.comm);
        string_sanitize(c->log_comm);
        host = container_host_dir();
        c->leader_dir = container_leader(c->proc_dir, host);
        /* systemd's EnterNamespace=no: the files of a process in another mount namespace are the
         * host's at the same paths (only the very files it mapped pass the collector's check) */
        if (host >= 0 && container_ns_same(c->proc_dir, host, "ns/mnt") == 0 && !c->manager->config.enter_namespace)
                c->files_root = openat(host, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        /* the collector first, on the other CPU while the rest is read here: the task is held */
        collecting = collector_start(c, c->incomplete, sizeof c->incomplete);
        if (collecting < 0)
                log_error_errno(collecting, "Crash of PID %d: no collector: %m", (int) c->info.pid);
        if (collecting > 0 && c->after_collect == AFTER_STREAM)
                crash_start_early(c);
        meta_collect_rest(&c->meta, c->proc_dir);
        container_add_fields(&c->meta.fields, c->proc_dir, host);
        /* as systemd: where the kernel's pidfd says which process this is, or the dump is a
         * plain user's (pipe mode without %F); never one that was forwarded here already */
        if (!c->forwarded && (c->pidfd >= 0 || (c->info.coredump_mask & PIDFD_COREDUMP_USER)) &&
            forward_launcher_ready(c->manager) &&
            (r = forward_target_find(c->proc_dir, host, c->info.ruid, c->info.rgid, &c->forward)) < 0)
                log_debug_errno(r, "Crash of PID %d: its container cannot be checked for a collector: %m",
                                (int) c->info.pid);
        return collecting > 0;
}

/* Metadata and the base record, once: before the ack, so a rejected crash is recorded too.
 * 1 when done; 0 while the collector runs (crash_collected() then goes on as after_collect
 * says); <0 error. */
static int crash_collect(Crash *c) {
        int r;

        if (c->collected)
                return 1;
        if (!c->kernel_read && crash_collect_start(c) > 0) {
                /* nothing comes on the connection until the ack, or the core once the worker has it */
                c->io_source = sd_event_source_disable_unref(c->io_source);
                c->state_before = c->state;
                c->state = CRASH_COLLECTING;
                r = crash_arm_timer(c, crash_collect_deadline(c));
                return r < 0 ? r : 0;
        }
        return crash_collect_finish(c);
}

static int crash_send_ack(Crash *c, bool take);
static int crash_ready_to_stream(Crash *c);

void crash_collected(Crash *c) {
        Manager *m = c->manager;
        int r;

        collector_harvest(c, c->incomplete, sizeof c->incomplete);
        if (c->incomplete[0] && ratelimit_below(&m->record_ratelimit))
                log_warning("Crash of PID %d (uid %u): its command line, environment or mapped files were not all "
                            "read: %s", (int) c->info.pid, (unsigned) c->info.ruid, c->incomplete);
        c->state = c->state_before;
        r = crash_collect_finish(c);
        if (r >= 0)
                switch (c->after_collect) {
                case AFTER_REJECT_ACK:
                        /* the kernel may have gone meanwhile: the record is made all the same */
                        (void) crash_send_ack(c, false);
                        r = crash_record_only(c, c->no_core_why);
                        break;
                case AFTER_RECORD_ONLY:
                        r = crash_record_only(c, c->no_core_why);
                        break;
                default:
                        r = crash_ready_to_stream(c);
                        /* as on_conn_io() does: a crash that could not be prepared for its core
                         * is still recorded (no_core_why says why) */
                        if (r < 0 && !c->pipe && (c->state == CRASH_HANDSHAKE || c->state == CRASH_MARK))
                                r = crash_record_only(c, c->no_core_why);
                }
        if (r < 0)
                crash_drop_unhanded(c, r);
}

static int crash_open_output(Crash *c) {
        Manager *m = c->manager;

        /* a second try (crash_record_only after a failure) starts afresh */
        c->out_fd = safe_close(c->out_fd);
        c->store_granted = 0;
        if (c->storing) {
                /* room first (systemd vacuums before and after): cheap unless the estimate says so;
                 * only files this crash may displace (a user's crash never costs another owner one) */
                store_vacuum_for(m->storage_fd, &m->config, c->info.ruid, &m->store_usage);
                /* MaxUse=/KeepFree= leave no room beside the cores in flight and those it may not
                 * displace: a record only */
                if (store_no_room(m->storage_fd, &m->config, c->info.ruid, crash_store_in_flight(m, c), c->record.len,
                                  MIN(m->config.external_size_max, c->rlimit_known ? c->rlimit_core : UINT64_MAX),
                                  &m->store_usage, &c->store_granted, c->why_buf, sizeof c->why_buf)) {
                        c->store_granted = 0;
                        log_warning("Crash of PID %d (%s): %s", (int) c->info.pid, crash_comm(c), c->why_buf);
                        c->no_core_why = c->why_buf;
                        c->storing = false;
                } else if ((c->out_fd = store_open_tmpfile(m->storage_fd)) < 0) {
                        log_error_errno(c->out_fd, "Crash of PID %d (%s): cannot create the output in %s, core not stored: %m",
                                        (int) c->info.pid, crash_comm(c), m->config.directory);
                        /* the record and the journal entry say so too */
                        snprintf(c->why_buf, sizeof c->why_buf, "cannot create the output in %s: %s",
                                 m->config.directory, strerror(-c->out_fd));
                        c->no_core_why = c->why_buf;
                        c->storing = false;
                }
        }
        if (!c->storing) {
                /* The worker still takes the stream (and produces the record). */
                c->out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (c->out_fd < 0)
                        return negative_errno();
        }
        return 0;
}

#ifdef MANAGER_TEST_FAULTS
/* Test builds only (meson -Dworker-test-faults=true): COREDUMPD_TEST_FAULT=stream-timer makes
 * arming a crash's stream deadline fail once, as an allocation failure would, after its output
 * was opened: the crash is then recorded without a core, and nothing of the first try stays. */
static bool fault_stream_timer(Crash *c) {
        if (!test_fault_is("stream-timer") || c->fault_fired)
                return false;
        c->fault_fired = true;
        return true;
}

/* COREDUMPD_TEST_FAULT=no-early: every job goes after /proc, as without a worker idle (for the
 * tests of what a job after /proc does). */
static bool fault_no_early(void) {
        return test_fault_is("no-early");
}
#else
static bool fault_no_early(void) {
        return false;
}

static bool fault_stream_timer(Crash *c) {
        return false;
}
#endif

static int crash_send_details(Crash *c);
static bool crash_users_own(const Crash *c);

static int crash_ready_to_stream(Crash *c) {
        int r;

        c->io_source = sd_event_source_disable_unref(c->io_source);
        r = crash_collect(c);
        if (r == 0)
                return 0; /* crash_collected() calls again */
        if (r >= 0 && c->lost_early[0]) {
                crash_worker_lost(c, c->lost_early); /* now that the record can say what it knows */
                return 0;
        }
        if (r >= 0 && !c->output_ready)
                r = crash_open_output(c);
        /* the record (and the journal entry) says why there is no core, once (this may be a retry) */
        if (r >= 0 && c->no_core_why &&
            !record_find(c->record.buf, c->record.len, "COREDUMP_PROCESSING_ERROR", &(RecordField) {}))
                r = record_add_str(&c->record, "COREDUMP_PROCESSING_ERROR", c->no_core_why);
        if (r >= 0)
                r = fault_stream_timer(c) ? -ENOMEM : crash_arm_timer(c, c->manager->config.timeout_usec);
        if (r < 0) {
                /* ours, not the kernel's: the record of the retry says so */
                if (!c->no_core_why) {
                        snprintf(c->why_buf, sizeof c->why_buf, "the crash could not be prepared for its worker: %s",
                                 strerror(-r));
                        c->no_core_why = c->why_buf;
                }
                return r;
        }
        c->state = CRASH_WAIT_WORKER;
        if (c->early_error < 0 && crash_users_own(c) == c->job_users_own)
                return c->early_error; /* no worker may take it: its ids were refused when it went early */
        return c->job_early ? crash_send_details(c) : crash_start_streaming(c);
}

/* No core will come (rejected, refused by the kernel, the task killed mid-dump): let the
 * kernel go, and still make the record, through a worker like every other crash. */
static int crash_record_only(Crash *c, const char *why) {
        /* A worker given the connection while /proc was read is not the one that writes this
         * record: it is killed, and another worker is given the record-only job. */
        if (c->worker) {
                worker_kill(TAKE_PTR(c->worker), "its crash is recorded without its core");
                c->job_early = false;
        }
        c->output_ready = false;
        c->no_core_why = why;
        c->storing = false;
        c->record_only = true;
        if (c->meta.modules) /* no core, no traces: its collector may go */
                module_handoff_let_go(c->meta.modules);
        safe_close(c->conn_fd);
        c->conn_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (c->conn_fd < 0)
                return negative_errno();
        return crash_ready_to_stream(c);
}

/* The ack to the request in req_buf: KERNEL|WAIT to take the core, REJECT otherwise. */
static int crash_send_ack(Crash *c, bool take) {
        struct coredump_req req;
        struct coredump_ack ack;
        int r = handshake_parse_req(c->req_buf, c->req_len, &req);

        if (r >= 0)
                r = handshake_build_ack(&req, take ? COREDUMP_KERNEL | COREDUMP_WAIT : COREDUMP_REJECT, &ack);
        if (r < 0)
                return r;
        if (send(c->conn_fd, &ack, sizeof ack, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) sizeof ack)
                return errno ? negative_errno() : -EIO;
        return 0;
}

static int handle_request(Crash *c) {
        struct coredump_req req;
        PolicyVerdict v;
        const char *why = NULL;
        int r;

        r = handshake_parse_req(c->req_buf, c->req_len, &req);
        if (r < 0)
                return r;
        if (handshake_req_news(&c->manager->handshake_news, &req))
                log_info("The kernel's request is newer than this coredumpd knows (%" PRIu32 " bytes, flags 0x%" PRIx64
                         "; known: %u bytes, 0x%" PRIx64 "): its new parts are left unused, the ack is 7.3's",
                         req.size, req.mask, COREDUMP_REQ_SIZE_VER0, COREDUMP_MASK_KNOWN);
        v = policy_decide(c, &why);
        if (v != POLICY_TAKE) {
                c->counted_only = v == POLICY_COUNT_ONLY;
                c->no_core_why = why ? why : "rejected by policy";
        }
        /* A rejected task goes as soon as it has the ack: collect its /proc first. Otherwise
         * the ack (KERNEL|WAIT) goes first and /proc is read while the kernel answers with its
         * mark: the task stays until the connection closes. */
        if (v == POLICY_RECORD_ONLY) {
                c->after_collect = AFTER_REJECT_ACK;
                r = crash_collect(c);
                if (r <= 0)
                        return r; /* 0: crash_collected() sends the ack */
        }
        r = crash_send_ack(c, v == POLICY_TAKE);
        if (r < 0)
                return r;
        if (v != POLICY_TAKE)
                return -ECANCELED;
        c->state = CRASH_MARK;
        return 0;
}

/* "@" (6.16): the core comes at once; closing the connection is the only refusal. */
static int plain_start(Crash *c) {
        const char *why = NULL;
        PolicyVerdict v;

        c->plain = true;
        v = policy_decide(c, &why);
        if (v == POLICY_TAKE)
                return crash_ready_to_stream(c);
        c->counted_only = v == POLICY_COUNT_ONLY;
        c->no_core_why = why;
        if (v == POLICY_RECORD_ONLY) {
                int r;

                c->after_collect = AFTER_RECORD_ONLY;
                r = crash_collect(c); /* before the close lets the task go */
                if (r <= 0)
                        return r;
        }
        return -ECANCELED;
}

static int handshake_step(Crash *c) {
        uint32_t mark;
        int r;

        if (c->state == CRASH_HANDSHAKE && c->req_size == 0) {
                uint8_t head[4];
                ssize_t n = recv(c->conn_fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
                uint32_t size;

                if (n < 0)
                        return errno == EAGAIN ? 0 : negative_errno();
                if (n == 0)
                        return -ECONNRESET;
                if (n < (ssize_t) sizeof head)
                        return 0;
                if (handshake_is_elf_magic(head))
                        return plain_start(c);
                r = handshake_req_size(head, &size);
                if (r < 0)
                        return r;
                c->req_size = size;
        }
        if (c->state == CRASH_HANDSHAKE) {
                r = read_some(c->conn_fd, c->req_buf, &c->req_len, c->req_size);
                if (r <= 0)
                        return r;
                r = handle_request(c);
                if (r < 0 || c->state == CRASH_COLLECTING)
                        return r;
        }
        r = read_some(c->conn_fd, c->mark, &c->mark_len, sizeof c->mark);
        if (r <= 0)
                return r;
        r = handshake_check_mark(c->mark, &mark);
        if (r < 0) {
                log_error("Crash of PID %d: the kernel refused our ack: mark %u (%s)", (int) c->info.pid, mark,
                          handshake_mark_to_string(mark));
                c->no_core_why = "the kernel refused our ack";
                return r;
        }
        return crash_ready_to_stream(c);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Crash *c = userdata;
        int r = handshake_step(c);

        if (r >= 0)
                return 0;
        if (c->counted_only) {
                crash_counted(c);
                return 0;
        }
        if (!c->no_core_why) {
                log_warning_errno(r, "Crash of PID %d: the kernel's connection ended before the core (%m)",
                                  (int) c->info.pid);
                c->no_core_why = c->info.reaped ? "the process was killed while being dumped"
                                                : "the kernel gave up before sending the core";
        }
        if (c->state == CRASH_HANDSHAKE || c->state == CRASH_MARK) {
                r = crash_record_only(c, c->no_core_why);
                if (r >= 0)
                        return 0;
        }
        crash_drop_unhanded(c, r);
        return 0;
}

/* Whether its worker becomes the crashing user (a plain user's crash), so that the journal entry
 * is theirs; else it is ours (WorkerUser=). */
static bool crash_users_own(const Crash *c) {
        return store_reader_uid(&c->info, &c->meta) != UID_INVALID;
}

static void crash_worker_ids(const Crash *c, uid_t *ret_uid, gid_t *ret_gid) {
        bool users_own = crash_users_own(c);

        *ret_uid = users_own ? c->info.ruid : c->manager->worker_uid;
        *ret_gid = users_own ? c->info.rgid : c->manager->worker_gid;
}

/* The worker's job: the user it becomes (crash_worker_ids()), the limits, and the room its file
 * may take. */
static void crash_job(Crash *c, int record_fd, uid_t uid, gid_t gid, WorkerJob *job) {
        Manager *m = c->manager;
        const Config *cfg = &m->config;

        *job = (WorkerJob) {
                .msg = {
                        .flags = (c->storing ? JOB_FLAG_STORE : 0) |
                                 (cfg->storage == STORAGE_JOURNAL ? JOB_FLAG_JOURNAL_CORE : 0) |
                                 (c->job_returned ? JOB_FLAG_RETURNED : 0),
                        .compression = cfg->compress,
                        .compress_level = cfg->compress_level,
                        .uid = uid,
                        .gid = gid,
                        /* RLIMIT_CORE bounds what is kept of the core, not what the traces may read
                         * (see receive.c: systemd stops reading there) */
                        .external_size_max = MIN(cfg->external_size_max, c->rlimit_known ? c->rlimit_core : UINT64_MAX),
                        .process_size_max = cfg->process_size_max,
                        .journal_size_max = MIN(cfg->journal_size_max, c->rlimit_known ? c->rlimit_core : UINT64_MAX),
                },
                .conn_fd = c->conn_fd,
                .out_fd = c->out_fd,
                .record_fd = record_fd,
                .modules = c->record_only ? NULL : c->meta.modules,
                .account_uid = c->info.ruid,
        };
        snprintf(job->label, sizeof job->label, "crash of PID %d", (int) c->info.pid);
        /* the file's cap: at most the room granted when its output was opened (its reservation,
         * which the cores starting after it counted), and what is left now, the other cores in
         * flight (what each was granted, or holds if more) and the stored cores this crash may not
         * displace counted */
        if (c->storing) {
                uint64_t held;

                job->msg.store_size_max = MIN(c->store_granted,
                                              store_core_cap(m->storage_fd, cfg, c->info.ruid, crash_store_in_flight(m, c),
                                                             c->record.len, &m->store_usage, &job->msg.keep_free, &held));
                c->store_granted = job->msg.store_size_max;
        }
}

static const WorkerJobOps crash_worker_ops;

/* A worker is at hand: the queue of the module files made for it (modules.h), unless made
 * already (for a worker that gave the job back) or no core comes to trace (a core that is only
 * not stored is still traced). */
static void crash_queue_make(Crash *c) {
        int r;

        if (c->record_only || !c->meta.modules)
                return;
        r = collector_queue_make(c->meta.modules);
        if (r < 0)
                log_debug_errno(r, "Crash of PID %d: no queue for its module files, the traces go without: %m",
                                (int) c->info.pid);
}

/* The job is sent and the task let go (or kept for a container): the collector that keeps the
 * module files asked to queue them for the worker. */
static void crash_queue_ask(Crash *c) {
        int r = collector_queue_ask(c->meta.modules); /* (none made for a record-only crash) */

        if (r < 0)
                log_debug_errno(r, "Crash of PID %d: its collector could not be asked for its module files, the "
                                "traces go without: %m", (int) c->info.pid);
}

/* Hands the job to an idle worker (the next one if that one was gone), with the record in a memfd
 * made for the first: 1 if one took it (*ret), 0 if none is idle (one is being started), or the
 * error that stopped it. */
static int crash_hand_job(Crash *c, int *record_fd, uint32_t flags, Worker **ret) {
        WorkerJob job;
        uid_t uid;
        gid_t gid;
        int r;

        crash_worker_ids(c, &uid, &gid);
        do {
                Worker *w = pool_take_idle(c->manager, uid, gid);

                if (!w)
                        return 0;
                crash_queue_make(c);
                if (*record_fd < 0 && (*record_fd = crash_record_memfd(&c->record)) < 0)
                        return *record_fd;
                crash_job(c, *record_fd, uid, gid, &job);
                job.msg.flags |= flags;
                r = worker_start_job(w, &job, &crash_worker_ops, c);
                if (r >= 0) {
                        *ret = w;
                        return 1;
                }
        } while (r == -EAGAIN); /* that worker was killed: try the next idle one, or wait for one */
        return r;
}

static int crash_start_streaming(Crash *c) {
        _cleanup_close_ int record_fd = -EBADF;
        Worker *w;
        int r = crash_hand_job(c, &record_fd, 0, &w);

        if (r <= 0)
                return r; /* 0: stays CRASH_WAIT_WORKER; dispatched when a worker is READY */
        c->worker = w;
        /* The worker holds the only copy now: when it closes it, or dies, the task goes free. But
         * a crash going into its container keeps the task until the container's collector took
         * it (which may check the process, as systemd's does); ForwardTimeoutSec= bounds that. */
        if (!c->forward || !c->storing)
                c->conn_fd = safe_close(c->conn_fd);
        crash_queue_ask(c);
        c->state = CRASH_STREAMING;
        pool_replace_taken(c->manager); /* this crash no longer waits for a worker: refill the pool */
        return 0;
}

/* Item 4 of the design: the connection to a worker while the collector reads /proc, so that the
 * core is received meanwhile and the task goes as soon as /proc is read (our copy of the
 * connection holds it until then). Only for a core to be stored, by a worker idle now, of a
 * process the kernel's pidfd pins; the record the job carries is what the kernel's part of /proc
 * said, DETAILS brings the rest (crash_send_details()). Otherwise, or if anything fails here, the
 * job goes after /proc as before (its ids refused: it fails there too, as it would have). */
static void crash_start_early(Crash *c) {
        _cleanup_close_ int record_fd = -EBADF;
        Worker *w;
        uid_t uid;
        gid_t gid;
        int r;

        assert(!c->worker && !c->collected);
        if (!c->storing || c->no_core_why || c->pidfd < 0 || c->forwarded || c->job_returned || fault_no_early())
                return;
        crash_worker_ids(c, &uid, &gid);
        if (!pool_has_idle(c->manager, uid, gid) || crash_record_base(c, &c->record) < 0)
                return;
        if (crash_open_output(c) < 0 || !c->storing)
                return; /* crash_ready_to_stream() opens it again, or says why there is no core */
        c->output_ready = true;
        record_fd = crash_record_memfd(&c->record);
        if (record_fd < 0)
                return;
        c->job_users_own = crash_users_own(c);
        r = crash_hand_job(c, &record_fd, JOB_FLAG_DETAILS, &w);
        /* no worker may map this crash's user and group: after /proc is read, when the crash
         * is handed out again, every worker will refuse them too (unless /proc names another user) */
        if (r == -EPERM)
                c->early_error = r;
        if (r <= 0)
                return; /* none idle, or an error of ours: it goes after /proc */
        c->worker = w;
        c->job_early = true;
        pool_replace_taken(c->manager);
        log_debug("Crash of PID %d: its worker has the connection while /proc is read", (int) c->info.pid);
}

/* DETAILS to the worker that has the core since before /proc was read: the whole record and the
 * module files. Our copy of the connection goes then: once the worker has read the core, the
 * task is released. The worker's user was chosen from the kernel's part of /proc: if the whole
 * of it says otherwise (the process could not be confirmed), the worker is not the crash's. */
static int crash_send_details(Crash *c) {
        _cleanup_close_ int record_fd = -EBADF;
        const char *why = "could not be given its crash's details";
        const char *lost = "its worker could not be given the crash's details";
        int r;

        assert(c->worker && c->job_early);
        c->job_early = false;
        if (crash_users_own(c) != c->job_users_own) {
                why = "was not its crash's user once /proc was read";
                lost = "its process could not be confirmed once /proc was read, and its worker had become its user";
                r = -EPERM;
        } else {
                crash_queue_make(c);
                record_fd = crash_record_memfd(&c->record);
                r = record_fd < 0 ? record_fd : worker_send_details(c->worker, record_fd, c->meta.modules);
        }
        /* The worker gave the job back before DETAILS reached it. Our copy of the connection is
         * still open, so another worker is given the whole job from the start. */
        if (r == -EAGAIN) {
                c->worker = NULL;
                c->job_returned = true;
                return crash_start_streaming(c);
        }
        if (r < 0) {
                worker_kill(TAKE_PTR(c->worker), why);
                crash_worker_lost(c, r == -ECONNRESET ? "the worker died" : lost);
                return 0;
        }
        if (!c->forward || !c->storing)
                c->conn_fd = safe_close(c->conn_fd);
        crash_queue_ask(c);
        c->state = CRASH_STREAMING;
        return 0;
}

/* Root's crashes first, then the others, oldest first, each waiting crash gets a try: one that
 * finds no idle worker (those left may be mapped ahead to another user) does not stop the next.
 * A worker the pool started for root's crash past the users' bound (worker-pool.h) goes to it. */
static void crash_dispatch_waiting(Manager *m) {
        for (int pass = 0; pass < 2; pass++) {
                Crash *c, *prev;

                LIST_FIND_TAIL(crashes, m->crashes, c);
                for (; c; c = prev) {
                        int r;

                        prev = c->crashes_prev;
                        if (c->state != CRASH_WAIT_WORKER || (c->info.ruid == 0) != (pass == 0))
                                continue;
                        r = crash_start_streaming(c);
                        if (r < 0)
                                crash_drop_unhanded(c, r);
                }
        }
}

static unsigned crash_count_waiting(Manager *m, unsigned *ret_root) {
        unsigned n = 0, root = 0;

        for (Crash *c = m->crashes; c; c = c->crashes_next)
                if (c->state == CRASH_WAIT_WORKER) {
                        n++;
                        root += c->info.ruid == 0;
                }
        *ret_root = root;
        return n;
}

static int verify_connection(Manager *m, Crash *c) {
        const char *why = "unknown";
        int r = verify_peer(c->conn_fd, &c->info, &why);

        if (r < 0) {
                if (ratelimit_below(&m->refuse_ratelimit))
                        log_warning("Refused a connection on the coredump socket: %s (%s)", why, strerror(-r));
                return r;
        }
        c->pidfd = r;
        return 0;
}

void crash_accept(Manager *m, int conn) {
        Crash *c = calloc(1, sizeof *c);
        int r;

        if (!c) {
                log_error("Out of memory, dropping a crash connection");
                safe_close(conn);
                return;
        }
        *c = (Crash) {
                .manager = m,
                .id = ++m->next_crash_id,
                .conn_fd = conn,
                .pidfd = -EBADF,
                .proc_dir = -EBADF,
                .leader_dir = -EBADF,
                .files_root = -EBADF,
                .out_fd = -EBADF,
                .storing = m->config.storage == STORAGE_EXTERNAL,
                .timestamp_usec = now_usec(CLOCK_REALTIME),
                .accept_usec = now_usec(CLOCK_MONOTONIC),
        };
        LIST_PREPEND(crashes, m->crashes, c);
        m->n_crashes++;

        if (verify_connection(m, c) < 0) {
                crash_free(c);
                return;
        }
        r = sd_event_add_io(m->event, &c->io_source, conn, EPOLLIN, on_conn_io, c);
        if (r >= 0)
                /* half of TimeoutSec= at most: a record-only retry has the rest */
                r = crash_arm_timer(c, MIN(HANDSHAKE_TIMEOUT_USEC, m->config.timeout_usec / 2));
        if (r < 0) {
                log_error_errno(r, "Failed to watch the crash connection: %m");
                crash_free(c);
                return;
        }
        /* The request is normally already queued: don't wait for a loop iteration. */
        on_conn_io(c->io_source, conn, EPOLLIN, c);
}

/* Who crashed, in pipe mode: the pidfd's word where the kernel gives it (and it must name the
 * PID the kernel's arguments name), else the arguments (they come from the kernel through the
 * core_pattern only root can set). With no PIDFD_INFO_COREDUMP, %d says whether the dump is a
 * plain user's (1) or root-only (2). */
static int pipe_identity(Crash *c, const MsgHandover *h) {
        PidfdInfo info;
        pid_t pid;
        int r;

        c->info = (PidfdInfo) {
                .mask = PIDFD_INFO_PID | PIDFD_INFO_CREDS,
                .pid = h->pid, .tgid = h->pid,
                .ruid = h->uid, .euid = h->uid, .suid = h->uid, .fsuid = h->uid,
                .rgid = h->gid, .egid = h->gid, .sgid = h->gid, .fsgid = h->gid,
        };
        if (c->pidfd >= 0) {
                r = pidfd_get_info(c->pidfd, PIDFD_INFO_WANT, &info);
                if (r >= 0 && (info.mask & PIDFD_INFO_PID)) {
                        if (info.pid != h->pid)
                                return -ESRCH;
                        c->info = info;
                } else if (r >= 0) {
                        c->info.reaped = true; /* killed while its helper started */
                } else {
                        r = pidfd_get_pid(c->pidfd, &pid);
                        if (r == -ESRCH)
                                c->info.reaped = true;
                        else if (r < 0 || pid != h->pid)
                                return r < 0 ? r : -ESRCH;
                }
        }
        if (!(c->info.mask & PIDFD_INFO_COREDUMP) && h->dumpable > 0)
                c->info.coredump_mask = PIDFD_COREDUMPED |
                                        (h->dumpable == 1 ? PIDFD_COREDUMP_USER : PIDFD_COREDUMP_ROOT);
        return 0;
}

void crash_accept_pipe(Manager *m, int pipe_fd, int pidfd, const MsgHandover *h) {
        crash_accept_forwarded(m, pipe_fd, pidfd, h, NULL);
}

void crash_accept_forwarded(Manager *m, int pipe_fd, int pidfd, const MsgHandover *h, Record *forwarded) {
        Crash *c = calloc(1, sizeof *c);
        int r;

        if (!c) {
                log_error("Out of memory, dropping the core of PID %d", (int) h->pid);
                safe_close(pipe_fd);
                safe_close(pidfd);
                return;
        }
        *c = (Crash) {
                .manager = m,
                .id = ++m->next_crash_id,
                .conn_fd = pipe_fd,
                .pidfd = pidfd,
                .proc_dir = -EBADF,
                .leader_dir = -EBADF,
                .files_root = -EBADF,
                .out_fd = -EBADF,
                .storing = m->config.storage == STORAGE_EXTERNAL,
                .timestamp_usec = now_usec(CLOCK_REALTIME),
                .accept_usec = now_usec(CLOCK_MONOTONIC),
                .pipe = true,
                .pipe_tid = h->tid,
                .pipe_signal = h->signal,
                .rlimit_core = h->rlimit, /* %c: the kernel's own word, unlimited as 2^64-1 */
                .rlimit_known = true,
        };
        snprintf(c->pipe_hostname, sizeof c->pipe_hostname, "%s", h->hostname);
        if (forwarded) {
                c->forwarded = true;
                c->forwarded_fields = *forwarded;
                *forwarded = (Record) {};
        }
        LIST_PREPEND(crashes, m->crashes, c);
        m->n_crashes++;
        r = pipe_identity(c, h);
        if (r < 0) {
                log_warning_errno(r, "Refused a %s for PID %d: its pidfd names another process (%m)",
                          c->forwarded ? "forwarded crash" : "handover", (int) h->pid);
                crash_free(c);
                return;
        }
        /* what the socket's handshake would decide, without a protocol to say it: a refused
         * core's pipe is closed (the kernel stops writing it; nobody reads it), the crash
         * recorded or only counted */
        switch (policy_decide(c, &c->no_core_why)) {
        case POLICY_COUNT_ONLY:
                crash_counted(c);
                return;
        case POLICY_RECORD_ONLY:
                /* /proc while the open pipe still holds the task, then the pipe goes */
                c->after_collect = AFTER_RECORD_ONLY;
                r = crash_collect(c);
                if (r > 0)
                        r = crash_record_only(c, c->no_core_why);
                break;
        default:
                c->no_core_why = NULL;
                r = crash_ready_to_stream(c);
        }
        if (r < 0)
                crash_drop(c, LOG_ERR, "could not be handed to a worker");
}

static bool result_plausible(const MsgResult *res) {
        return res->error <= 0 && res->error > -4096 && res->state <= CORE_UNKNOWN_END;
}

static const char *state_text(uint32_t state) {
        switch (state) {
        case CORE_COMPLETE:
                return "complete";
        case CORE_TRUNCATED_LIMIT:
                return "truncated at the configured size limit";
        case CORE_TRUNCATED_EOF:
                return "truncated: the stream ended early";
        default:
                return "not a parsable ELF core, stored as received";
        }
}

/* Links the core under its final name; fills path on success. */
static int crash_link_core(Crash *c, const MsgResult *res, const CoreFacts *facts, char *path, size_t size) {
        Manager *m = c->manager;
        char name[COREDUMP_NAME_MAX];
        StoreAttrs a = {
                .pid = c->info.pid,
                .uid = c->info.ruid,
                .gid = c->info.rgid,
                .signal = (c->info.mask & PIDFD_INFO_COREDUMP_SIGNAL) ? (int) c->info.coredump_signal
                                                                      : facts->has_signal ? facts->signal : 0,
                .timestamp_usec = c->timestamp_usec,
                .hostname = m->hostname,
                .truncated = facts->truncated,
                .tid = facts->has_tid ? facts->tid : 0,
                .thread_name = facts->thread_name,
                .meta = &c->meta,
        };
        int r;

        /* every check before the link: once linked, the core stays (the caller frees a lost one) */
        if (snprintf(name, sizeof name, "%s%s", c->name_stem, compression_suffix(m->config.compress)) >= (int) sizeof name ||
            snprintf(path, size, "%s/%s", m->config.directory, name) >= (int) size)
                return log_error_errno(-ENAMETOOLONG, "Crash of PID %d (%s): the core's path is too long, not stored",
                                       (int) c->info.pid, crash_comm(c));
        r = store_link(m->storage_fd, c->out_fd, name, &a, store_reader_uid(&c->info, &c->meta));
        if (r < 0)
                return log_error_errno(r, "Crash of PID %d (%s): failed to store the core: %m", (int) c->info.pid,
                                       crash_comm(c));
        log_info("Crash of PID %d (%s, uid %u): core %s, %llu bytes received, %llu stored as %s", (int) c->info.pid,
                 crash_comm(c), (unsigned) c->info.ruid, state_text(res->state), (unsigned long long) res->bytes_in,
                 (unsigned long long) res->bytes_out, path);
        return 0;
}

/* What journald would add to the entry, so the sidecar is a complete journal export entry
 * (coredumpctl merges it with the journal's copy; systemd-journal-remote can import it). */
static int record_add_identity(Record *r, uint64_t timestamp_usec, const char *boot_id, const char *machine_id) {
        int e = record_addf(r, "__REALTIME_TIMESTAMP", "%llu", (unsigned long long) timestamp_usec);

        if (e >= 0)
                e = record_add_str(r, "_BOOT_ID", boot_id);
        if (e >= 0 && machine_id[0])
                e = record_add_str(r, "_MACHINE_ID", machine_id);
        return e;
}

/* The record beside the core (journal export format), so nothing depends on journald. */
static void crash_keep_record(Crash *c, const CoreFacts *facts, const char *error) {
        Manager *m = c->manager;
        char name[COREDUMP_NAME_MAX + 16];
        Record r = {};
        int e;

        if (m->storage_fd < 0)
                return;
        /* "core.X" → "record.X.export" */
        snprintf(name, sizeof name, "record%s.export", c->name_stem + strlen("core"));
        r = (Record) { .buf = malloc(c->record.len + 1), .len = c->record.len, .cap = c->record.len + 1,
                       .overflow = c->record.overflow };
        if (!r.buf)
                return (void) log_error("Crash of PID %d: out of memory for its record", (int) c->info.pid);
        memcpy(r.buf, c->record.buf, c->record.len);
        /* the first reason given stays the reason (a refusal, then a lost worker: the refusal) */
        if (error && !record_find(r.buf, r.len, "COREDUMP_PROCESSING_ERROR", &(RecordField) {}))
                (void) record_add_str(&r, "COREDUMP_PROCESSING_ERROR", error);
        if (c->analysis.len > 0 && record_merge_analysis(&r, c->analysis.buf, c->analysis.len) < 0)
                log_warning("Crash of PID %d: the worker's stack traces are malformed, not kept", (int) c->info.pid);
        e = record_finalize(&r, facts);
        if (e >= 0)
                e = record_add_identity(&r, c->timestamp_usec, m->boot_id, m->machine_id);
        if (e >= 0)
                e = store_write_record(m->storage_fd, name, &r, store_reader_uid(&c->info, &c->meta));
        /* the records' budget too, with this crash's rights (a user's records push out only theirs) */
        if (e >= 0)
                store_vacuum_after_record(m->storage_fd, &m->config, name, &m->store_usage);
        if (e < 0 && ratelimit_below(&m->record_ratelimit))
                log_error_errno(e, "Crash of PID %d (%s): failed to keep its record in %s: %m", (int) c->info.pid,
                                crash_comm(c), m->config.directory);
        record_free(&r);
}

/* The core as the worker's RESULT (or STORED) describes it: linked, or why not, in *facts; a core
 * that is not linked gives its space back. */
static void crash_store_result(Crash *c, const MsgResult *res, CoreFacts *facts) {
        char path[PATH_MAX] = "";
        int r;

        /* the worker stopped storing for room: the record says so (the worker's entry too) */
        if (c->storing && res->error >= 0 && store_stop_to_string(res->store_stop)) {
                log_notice("Crash of PID %d (%s, uid %u): %s", (int) c->info.pid, crash_comm(c), (unsigned) c->info.ruid,
                           store_stop_to_string(res->store_stop));
                if (record_add_str(&c->record, "COREDUMP_PROCESSING_ERROR", store_stop_to_string(res->store_stop)) < 0)
                        log_warning("Crash of PID %d: no room to say why its core is truncated", (int) c->info.pid);
        }
        if (res->error < 0) {
                log_error_errno(res->error, "Crash of PID %d (%s): core lost after %llu bytes: %m", (int) c->info.pid,
                                crash_comm(c), (unsigned long long) res->bytes_in);
                snprintf(facts->processing_error, sizeof facts->processing_error, "core lost after %llu bytes: %s",
                         (unsigned long long) res->bytes_in, strerror(-res->error));
        } else if (c->storing && (r = crash_link_core(c, res, facts, path, sizeof path)) < 0)
                snprintf(facts->processing_error, sizeof facts->processing_error, "failed to store the core: %s",
                         strerror(-r));
        else if (c->storing) {
                snprintf(facts->filename, sizeof facts->filename, "%s", path);
                /* the task is released already: keeping the store within bounds costs it nothing */
                if (store_vacuum(c->manager->storage_fd, &c->manager->config, strrchr(path, '/') + 1,
                                 store_allocated(c->out_fd, res->bytes_out), &c->manager->store_usage)) {
                        /* past what MaxUse= leaves it (it grew past its cap): deleted, nothing else for it */
                        facts->filename[0] = 0;
                        snprintf(facts->processing_error, sizeof facts->processing_error,
                                 "the core was larger than what MaxUse= leaves beside the cores its crash may not "
                                 "displace, not kept");
                }
        } else if (c->no_core_why)
                log_notice("Crash of PID %d (%s, uid %u): no core (%s); recorded", (int) c->info.pid, crash_comm(c),
                           (unsigned) c->info.ruid, c->no_core_why);
        else if (!c->storing)
                log_info("Crash of PID %d (%s, uid %u): %llu bytes processed, core not stored (Storage=%s)",
                         (int) c->info.pid, crash_comm(c), (unsigned) c->info.ruid, (unsigned long long) res->bytes_in,
                         storage_to_string(c->manager->config.storage));
        /* a core that will not be linked gives its space back now, so that its record fits on a
         * full disk (the worker still holds the file open) */
        if (c->storing && !facts->filename[0] && ftruncate(c->out_fd, 0) < 0)
                log_debug_errno(negative_errno(), "Crash of PID %d: could not free the lost core's space: %m",
                                (int) c->info.pid);
}

static void crash_worker_result(Crash *c, const MsgResult *res) {
        CoreFacts facts;

        if (!result_plausible(res)) {
                crash_drop(c, LOG_ERR, "worker sent an impossible result, core discarded");
                return;
        }
        crash_facts(c, res, NULL, &facts);
        log_debug("Crash of PID %d: worker peak memory %u KiB", (int) c->info.pid, (unsigned) res->peak_rss_kib);
        crash_store_result(c, res, &facts);
        if (c->forward && facts.filename[0] && crash_forward(c, &facts) >= 0)
                return; /* crash_forwarded() goes on */
        /* Our copy of the connection was kept in case the crash was forwarded into its container;
         * it is not, so closing the copy releases the crashed task. */
        c->conn_fd = safe_close(c->conn_fd);
        crash_commit(c, &facts);
}

/* Whether its worker said STORED of a core this crash stores, written whole (as far as it went). */
static bool crash_has_stored(const Crash *c) {
        return c->stored_seen && c->storing && c->stored.error == 0 && result_plausible(&c->stored);
}

/* Its worker died or hung (why) after STORED, making the stack traces: the worker goes first (it
 * holds the file), then the core is linked as RESULT would have had it, and the record says what
 * is missing (the stack traces, and the journal entry the worker would have written), or why the
 * core could not be kept after all. */
static void crash_keep_stored(Crash *c, const char *why) {
        CoreFacts facts;
        char error[sizeof facts.processing_error + 256];

        if (c->worker)
                worker_kill(TAKE_PTR(c->worker), "its crash's core is kept without it");
        crash_facts(c, &c->stored, NULL, &facts);
        crash_store_result(c, &c->stored, &facts);
        if (facts.filename[0]) {
                snprintf(error, sizeof error, "no stack traces, no journal entry: %s (the core was stored)", why);
                log_error("Crash of PID %d (%s): %s; the core and its record are kept in %s", (int) c->info.pid,
                          crash_comm(c), error, c->manager->config.directory);
        } else {
                snprintf(error, sizeof error, "%s after its core was written, which could not be kept: %s", why,
                         facts.processing_error);
                log_error("Crash of PID %d (%s): %s; its record is kept", (int) c->info.pid, crash_comm(c), error);
        }
        crash_keep_record(c, &facts, error);
        crash_free(c);
}

/* The record beside the core, then the worker's journal entry. */
static void crash_commit(Crash *c, const CoreFacts *facts) {
        int r;

        crash_keep_record(c, facts, NULL);
        c->state = CRASH_RECORDING;
        r = worker_commit(c->worker, facts);
        if (r < 0)
                crash_worker_recorded(c, r);
}

/* Forwardings in flight: all, and to the unit of c's container. */
static void count_forwarding(const Crash *c, unsigned *all, unsigned *unit) {
        *all = *unit = 0;
        for (const Crash *o = c->manager->crashes; o; o = o->crashes_next)
                if (o->state == CRASH_FORWARDING) {
                        (*all)++;
                        *unit += strcmp(o->forward->unit, c->forward->unit) == 0;
                }
}

/* Starts handing the stored core to the container's collector; <0 if it could not start (the
 * record says why). */
static int crash_forward(Crash *c, CoreFacts *facts) {
        const char *name = strrchr(facts->filename, '/') ? strrchr(facts->filename, '/') + 1 : facts->filename;
        _cleanup_close_ int core = -EBADF;
        unsigned all, unit;
        int r;

        c->forward_facts = *facts;
        count_forwarding(c, &all, &unit);
        if (all >= FORWARDS_MAX || unit >= FORWARDS_PER_UNIT_MAX) {
                snprintf(c->forward_facts.forward_error, sizeof c->forward_facts.forward_error,
                         "the container's collector is busy: %u of its crashes are being forwarded (%u in all)", unit,
                         all);
                log_warning("Crash of PID %d (%s): not forwarded to the collector of %s: %s; kept on the host",
                            (int) c->info.pid, crash_comm(c), c->forward->unit, c->forward_facts.forward_error);
                *facts = c->forward_facts;
                c->conn_fd = safe_close(c->conn_fd);
                return -EBUSY;
        }
        c->forward_signal = facts->has_signal ? facts->signal : 0;
        /* the name crash_link_core() linked, shorter than COREDUMP_NAME_MAX */
        assert(strlen(name) < sizeof c->forward_core);
        snprintf(c->forward_core, sizeof c->forward_core, "%.*s", (int) sizeof c->forward_core - 1, name);
        /* the file just linked, for reading (the output descriptor is write-only) */
        core = openat(c->manager->storage_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        r = core < 0 ? negative_errno() : forward_start(c, core, name);
        if (r < 0) {
                log_warning_errno(r, "Crash of PID %d (%s): could not be forwarded to the collector of %s: %m",
                                  (int) c->info.pid, crash_comm(c), c->forward->unit);
                snprintf(c->forward_facts.forward_error, sizeof c->forward_facts.forward_error, "not started: %s",
                         strerror(-r));
                *facts = c->forward_facts;
                c->conn_fd = safe_close(c->conn_fd);
                return r;
        }
        c->state = CRASH_FORWARDING;
        /* its core is stored and counted in the store's usage: no longer a core slot in flight */
        if (c->core_counted) {
                c->manager->n_cores--;
                c->core_counted = false;
        }
        return 0;
}

void crash_forwarded(Crash *c, int error, const char *why) {
        Manager *m = c->manager;
        CoreFacts facts = c->forward_facts;

        c->conn_fd = safe_close(c->conn_fd); /* the task goes free */
        if (error < 0) {
                log_warning("Crash of PID %d (%s): not forwarded to the collector of %s: %s; kept on the host",
                            (int) c->info.pid, crash_comm(c), c->forward->unit, why);
                snprintf(facts.forward_error, sizeof facts.forward_error, "%s", why);
        } else {
                snprintf(facts.forwarded_to, sizeof facts.forwarded_to, "%s", c->forward->unit);
                if (!m->config.keep_forwarded) {
                        int r = store_unlink_core(m->storage_fd, c->forward_core, &m->store_usage);
                        if (r >= 0 || r == -ENOENT) /* deleted, or by the vacuum meanwhile */
                                facts.filename[0] = 0;
                }
                log_info("Crash of PID %d (%s): forwarded to the collector of %s (PID %d there)%s",
                         (int) c->info.pid, crash_comm(c), c->forward->unit, (int) c->forward->pid,
                         facts.filename[0] ? "" : "; the host keeps its record, not the core (KeepForwarded=no)");
        }
        /* the per-crash deadline may have passed while forwarding: the entry gets one of its own */
        if (crash_arm_timer(c, now_usec(CLOCK_MONOTONIC) - c->accept_usec + FORWARD_COMMIT_TIMEOUT_USEC) < 0)
                log_warning("Crash of PID %d: no deadline for its journal entry", (int) c->info.pid);
        crash_commit(c, &facts);
}

static void crash_worker_recorded(Crash *c, int error) {
        Manager *m = c->manager;

        c->worker = NULL;
        if (error >= 0)
                log_debug("Crash of PID %d: journal entry written", (int) c->info.pid);
        else /* every crash ends with a line at debug level, whatever the rate limit below */
                log_debug("Crash of PID %d: record kept without a journal entry", (int) c->info.pid);
        if (error < 0 && ratelimit_below(&m->record_ratelimit))
                log_warning_errno(error, "Crash of PID %d (%s): no journal entry (%m); its record is kept in %s",
                                  (int) c->info.pid, crash_comm(c), m->config.directory);
        crash_free(c);
}

static void crash_worker_lost(Crash *c, const char *why) {
        c->worker = NULL;
        if (c->job_early) { /* before its DETAILS: the record says it once /proc is read */
                c->job_early = false;
                snprintf(c->lost_early, sizeof c->lost_early, "%s", why);
                return;
        }
        if (c->state == CRASH_FORWARDING) {
                crash_keep_failed_record(c, why);
                log_error("Crash of PID %d (%s): %s while forwarding; its core and record stay on the host in %s",
                          (int) c->info.pid, crash_comm(c), why, c->manager->config.directory);
                crash_free(c);
                return;
        }
        if (c->state == CRASH_STREAMING && crash_has_stored(c)) {
                crash_keep_stored(c, why);
                return;
        }
        crash_keep_failed_record(c, why);
        if (c->state == CRASH_RECORDING)
                log_error("Crash of PID %d (%s): %s before writing the journal entry; its record is kept in %s",
                          (int) c->info.pid, crash_comm(c), why, c->manager->config.directory);
        else
                log_error("Crash of PID %d (%s): %s; core lost, task released", (int) c->info.pid, crash_comm(c), why);
        crash_free(c);
}

uint64_t crash_store_in_flight(Manager *m, const Crash *self) {
        uint64_t sum = 0;

        /* from crash_open_output() (its room granted) until its core is linked or lost */
        for (const Crash *c = m->crashes; c; c = c->crashes_next)
                if (c != self && c->storing && c->out_fd >= 0 && c->state != CRASH_RECORDING &&
                    c->state != CRASH_FORWARDING) {
                        uint64_t held = store_allocated(c->out_fd, 0);

                        /* another owner's core self may displace (a user's, for a system uid's crash)
                         * counts what it holds, not its room: a user's slow crash must not keep
                         * root's core out (the vacuum after root's core makes the room, and the
                         * user's core, linked later, goes if it no longer fits) */
                        if (c->info.ruid == self->info.ruid || !store_may_displace(self->info.ruid, c->info.ruid))
                                held = MAX(c->store_granted, held);
                        sum = sum > UINT64_MAX - held ? UINT64_MAX : sum + held;
                }
        return sum;
}

/* What the worker pool tells a crash of its worker. */
static void on_worker_result(void *owner, const MsgResult *res, Record *analysis) {
        Crash *c = owner;

        if (res->spooled > 0)
                log_debug("Crash of PID %d: %llu bytes spooled, compressed after the release", (int) c->info.pid,
                          (unsigned long long) res->spooled);
        record_free(&c->analysis);
        c->analysis = *analysis;
        *analysis = (Record) {};
        crash_worker_result(c, res); /* → worker_commit() */
}

static void on_worker_stored(void *owner, const MsgResult *res) {
        Crash *c = owner;

        c->stored = *res;
        c->stored_seen = true;
}

static void on_worker_recorded(void *owner, int error) {
        crash_worker_recorded(owner, error);
}

static void on_worker_lost(void *owner, const char *why) {
        crash_worker_lost(owner, why);
}

/* The worker could not start the job and gave its connection back, nothing of the core read (a
 * sandbox it could not enter, memory it could not have): another worker takes it, once; a
 * second failure is the job's, not a worker's. */
static void on_worker_returned(void *owner, int conn, int error) {
        Crash *c = owner;
        int r;

        if (c->job_early && !c->job_returned) {
                /* ours is still open: one worker takes the whole job once /proc is read */
                c->job_early = false;
                c->job_returned = true;
                c->worker = NULL;
                safe_close(conn);
                log_debug("Crash of PID %d: its worker gave the job back, another takes it after /proc", (int) c->info.pid);
                return;
        }
        if (c->job_returned || c->state != CRASH_STREAMING) {
                char why[128];

                safe_close(conn);
                snprintf(why, sizeof why, "its workers could not start on it (%s)", strerror(-error));
                crash_worker_lost(c, why); /* (taken into the record at once) */
                return;
        }
        c->job_returned = true;
        c->worker = NULL;
        if (c->conn_fd < 0)
                c->conn_fd = conn;
        else
                safe_close(conn); /* the copy kept for its container's collector */
        c->state = CRASH_WAIT_WORKER;
        log_debug("Crash of PID %d: its worker gave the job back, another takes it", (int) c->info.pid);
        r = crash_start_streaming(c);
        if (r < 0)
                crash_drop_unhanded(c, r);
}

/* Whether its worker waits on something else, which bounds the wait: a crash being forwarded, for
 * its commit (ForwardTimeoutSec=); a job given while /proc is read, for DETAILS (the collector's
 * deadline) */
static bool crash_waiting_elsewhere(const void *owner) {
        const Crash *c = owner;

        return c->state == CRASH_FORWARDING || c->job_early;
}

static const WorkerJobOps crash_worker_ops = {
        .result = on_worker_result,
        .stored = on_worker_stored,
        .recorded = on_worker_recorded,
        .lost = on_worker_lost,
        .returned = on_worker_returned,
        .waiting_elsewhere = crash_waiting_elsewhere,
};

const PoolOps crash_pool_ops = {
        .worker_ready = crash_dispatch_waiting,
        .jobs_waiting = crash_count_waiting,
};
