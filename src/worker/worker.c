/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump-worker: single use. Forked ahead of time by the zygote (zygote.h; the same binary
 * started with --zygote) or started by coredumpd, with its control socket on fd 3, it says
 * READY and waits for exactly one job (the kernel's connection, the unnamed output file, the
 * crash record; or, for a job sent while /proc is still read, a provisional record and later
 * DETAILS). It drops to the user the job names before touching any of it (or, mapped ahead
 * to WorkerUser=, before the job: then it takes only a job of that user), streams and compresses
 * that core, reports what the core's notes say, waits for the manager to link the file, writes
 * the journal entry, and exits. */
#include <assert.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "analysis.h"
#include "fd-util.h"
#include "journal-send.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "proto.h"
#include "receive.h"
#include "record-fields.h"
#include "sandbox.h"
#include "sink.h"
#include "zygote.h"
#include "memfd-slot.h"
#include "journal-send.h"

static const char journal_core_prefix[] = "COREDUMP=";

/* Waits for one message of `type` from the manager. */
static int wait_msg(uint32_t type, void *msg, size_t size, int *fds, size_t n_fds) {
        return proto_wait(WORKER_CONTROL_FD, type, msg, size, fds, n_fds, -1);
}

/* RLIMIT_FSIZE before a byte of the core is read, soft = hard: even a worker the core took over
 * cannot grow its file past the job's cap (or WORKER_FSIZE_FLOOR, what its memfds need), not
 * even after RESULT. The spool is a memfd too: it holds at most this much (receive.c). SIGXFSZ
 * ignored: a write past it fails with EFBIG instead of killing. */
static int limit_file_size(const MsgJob *job) {
        uint64_t max = job_file_size_limit(job);
        struct rlimit rl = { .rlim_cur = max >= RLIM_INFINITY ? RLIM_INFINITY : max };

        rl.rlim_max = rl.rlim_cur;
        if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR || setrlimit(RLIMIT_FSIZE, &rl) < 0)
                return negative_errno();
        return 0;
}

static int take_details(void);

/* SPOOL, then the manager's GRANT with the memfd it made, sealed at the size granted (a DETAILS
 * sent meanwhile is taken first). */
static int ask_spool(uint64_t bytes, uint64_t *granted, int *ret_fd) {
        MsgSpool ask = { .hdr = { PROTO_MAGIC, MSG_SPOOL }, .bytes = bytes }, grant;
        int r = proto_send(WORKER_CONTROL_FD, &ask, sizeof ask, NULL, 0);

        if (r >= 0)
                r = take_details();
        if (r >= 0)
                r = wait_msg(MSG_SPOOL_GRANT, &grant, sizeof grant, ret_fd, 1);
        if (r < 0)
                return log_warning_errno(r, "No spool granted: %m");
        *granted = grant.bytes;
        return 0;
}

/* The memfds a job may need besides the spool the manager grants: made at the worker's start,
 * before its seccomp filter (which refuses memfd_create), and each sealed against growing past
 * its bound before a byte of the core is read (limit_slots()), so that a worker the core took
 * over holds no more memory in files than these bounds and its spool's. */
typedef struct Slots {
        int analysis;     /* the stack traces, sent with RESULT: a record */
        int entry;        /* a journal entry too large for a datagram: a record, and the core inline */
        int journal_core; /* Storage=journal: "COREDUMP=" and the core, as far as JournalSizeMax= */
        int spool;        /* the room that came with the job (MsgJob.spool_given) */
} Slots;

static Slots slots = { -EBADF, -EBADF, -EBADF, -EBADF };

static int make_slots(void) {
        slots.analysis = memfd_slot_new("coredump-analysis");
        slots.entry = memfd_slot_new("journal-entry");
        slots.journal_core = memfd_slot_new("coredump-journal");
        slots.spool = memfd_slot_new("coredump-spool");
        if (slots.analysis < 0 || slots.entry < 0 || slots.journal_core < 0 || slots.spool < 0)
                return -ENOMEM;
        return 0;
}

/* Each slot's bound for this job (one the job does not need is closed), within its file size
 * limit (limit_file_size()), which no file of the worker passes anyway. */
static int limit_slots(const MsgJob *job) {
        bool journal = job->flags & JOB_FLAG_JOURNAL_CORE;
        uint64_t fsize = job_file_size_limit(job), core = 0;
        int r;

        if (journal)
                core = MIN(job->journal_size_max, UINT64_MAX - RECORD_MAX) + sizeof journal_core_prefix;
        r = memfd_slot_limit(slots.analysis, MIN((uint64_t) RECORD_MAX, fsize));
        r = r ?: memfd_slot_limit(slots.entry, MIN(WORKER_FSIZE_FLOOR + core, fsize));
        if (journal)
                r = r ?: memfd_slot_limit(slots.journal_core, MIN(core, fsize));
        else
                slots.journal_core = safe_close(slots.journal_core);
        if (job->spool_given > 0)
                r = r ?: memfd_slot_limit(slots.spool, MIN(job->spool_given, fsize));
        else
                slots.spool = safe_close(slots.spool);
        return r;
}

static int job_valid(const MsgJob *job) {
        if (job->compression > COMPRESSION_LZ4 || (job->flags & ~JOB_FLAGS_ALL) || job->spare != 0 ||
            job->spare2 != 0 || job->n_modules > MODULES_MAX || job->spool_max > JOB_SPOOL_MAX ||
            ((job->flags & JOB_FLAG_DETAILS) && job->n_modules != 0) ||
            job->spool_given > job->spool_max ||
            job->uid == 0 || job->uid == UID_INVALID || job->gid == GID_INVALID)
                return -EBADMSG;
        return 0;
}

/* The record the manager sealed into a memfd, copied into memory we own. */
static int load_record(int fd, Record *ret) {
        struct stat st;
        RecordField f;
        size_t pos = 0;
        ssize_t n;
        int r;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size < 0 || (uint64_t) st.st_size > RECORD_MAX)
                return -EBADMSG;
        *ret = (Record) { .buf = malloc((size_t) st.st_size + 1), .cap = (size_t) st.st_size + 1 };
        if (!ret->buf)
                return -ENOMEM;
        n = pread(fd, ret->buf, (size_t) st.st_size, 0);
        if (n != st.st_size)
                return n < 0 ? negative_errno() : -EIO;
        ret->len = (size_t) n;
        while ((r = record_next(ret->buf, ret->len, &pos, &f)) > 0)
                ;
        return r; /* 0 if well-formed to the end */
}

/* A JOB_FLAG_DETAILS job's DETAILS, taken when it comes: between two chunks of the core, between
 * SPOOL and GRANT, or once the core is in. Its record replaces the job's provisional one, its
 * module files the job's none. */
static struct {
        bool pending;      /* a JOB_FLAG_DETAILS job whose DETAILS is still to come */
        int error;         /* it came, and could not be taken: the job fails once its core is in */
        const MsgJob *job; /* for the sandbox's descriptor limit, lowered to the modules' */
        Record *rec;
        ModuleFiles *mods;
} details;

static int narrow_sandbox(const MsgJob *job, const ModuleFiles *mods);
static int next_msg_type(uint32_t *ret);

/* The module files out of their queue, once the job can no longer be given back. */
static void take_module_files(ModuleFiles *mods) {
        size_t n = mods->n;
        int r = module_files_take(mods);

        if (r < 0)
                log_warning_errno(r, "The module files' queue does not hold the %zu files listed, none are used: %m", n);
}

static int receive_details(void) {
        _cleanup_(record_free) Record rec = {};
        int fds[DETAILS_FDS] = { -EBADF, -EBADF };
        MsgDetails msg;
        int r;

        assert(details.pending && details.rec && details.mods);
        r = wait_msg(MSG_DETAILS, &msg, sizeof msg, fds, DETAILS_FDS);
        if (r >= 0 && (msg.n_modules > MODULES_MAX || msg.spare != 0))
                r = -EBADMSG;
        if (r >= 0)
                r = load_record(fds[DETAILS_FD_RECORD], &rec);
        if (r >= 0)
                r = module_files_receive(msg.n_modules, fds[DETAILS_FD_MODULES], details.mods, wait_msg);
        /* the core is being read: the job can no longer be given back */
        take_module_files(details.mods);
        for (size_t i = 0; i < DETAILS_FDS; i++)
                safe_close(fds[i]);
        details.pending = false;
        if (r >= 0) {
                record_free(details.rec);
                *details.rec = rec;
                rec = (Record) {};
                r = narrow_sandbox(details.job, details.mods);
        } else
                log_error_errno(r, "Invalid crash details from the manager: %m");
        details.error = r;
        return r;
}

/* Between two chunks of the core: DETAILS if it is there already (the descriptor limit is
 * lowered to the modules' then, while the core still comes). */
static void details_tick(void) {
        uint32_t type;

        if (details.pending && proto_peek_type(WORKER_CONTROL_FD, &type) >= 0 && type == MSG_DETAILS)
                (void) receive_details();
}

/* Once the core is in and its connection closed, DETAILS if it has not come yet. A job given
 * before /proc was read releases its task only once /proc is read too (the manager keeps its copy
 * of the connection until then): a spooled core waits here before its compression (the
 * ReceiveHooks' received()), which would take the CPU from the collector the task still waits
 * for; one compressed while received, after it. The worker's slot and its spool room are held
 * meanwhile, at most until the collector's deadline. <0: the details could not be taken. */
static int details_wait(uint64_t received) {
        if (!details.pending)
                return details.error;
        log_debug("Core received (%llu bytes) before the crash's details; waiting for them",
                  (unsigned long long) received);
        (void) receive_details();
        return details.error;
}

/* DETAILS if it is the manager's next message (the worker waits for one anyway). */
static int take_details(void) {
        uint32_t type;
        int r;

        if (!details.pending)
                return 0;
        r = next_msg_type(&type);
        if (r < 0 || type != MSG_DETAILS)
                return r == -EBADMSG ? 0 : r; /* (wait_msg() says what is wrong with it) */
        log_debug("The crash's details came before the spool's GRANT");
        return receive_details();
}

/* The core inline in the entry: its slot, written from its start (its length is where the
 * writing got to). */
static int open_journal_core(const MsgJob *job) {
        int fd;

        if (!(job->flags & JOB_FLAG_JOURNAL_CORE) || slots.journal_core < 0)
                return -EBADF;
        fd = TAKE_FD(slots.journal_core);
        if (loop_write(fd, journal_core_prefix, sizeof journal_core_prefix - 1) < 0)
                return safe_close(fd);
        return fd;
}

static int write_entry(Record *rec, const CoreFacts *facts, int journal_fd, bool journal_fit) {
        void *core = NULL;
        size_t core_len = 0;
        off_t end;
        int r;

        r = record_finalize(rec, facts);
        if (r < 0)
                return r;
        /* its slot is sized to its bound: the core is as long as what was written */
        if (journal_fd >= 0 && journal_fit && (end = lseek(journal_fd, 0, SEEK_CUR)) > 0) {
                core_len = (size_t) end;
                core = mmap(NULL, core_len, PROT_READ, MAP_PRIVATE, journal_fd, 0);
                if (core == MAP_FAILED)
                        return negative_errno();
        }
        r = journal_send_record(rec->buf, rec->len, core, core_len, 0);
        if (core)
                munmap(core, core_len);
        return r;
}

#ifdef WORKER_TEST_FAULTS
#define FAULT_FLOOD_SEC 20                /* "flood" stops by itself after this (a manager that never reads) */
#define FAULT_FLOOD_PIPE_SIZE (1U << 20) /* fs.pipe-max-size's default */

/* Writes stderr as fast as it can until the manager stops reading it (EPIPE or SIGPIPE), or
 * for FAULT_FLOOD_SEC; then the job goes on. First it tries to enlarge the pipe, so that the
 * manager never finds it empty, as a worker the core took over would (the seccomp filter refuses
 * F_SETPIPE_SZ now). */
static void flood_stderr(void) {
        static char chunk[1 << 16];
        struct timespec t0, now;

        (void) fcntl(STDERR_FILENO, F_SETPIPE_SZ, FAULT_FLOOD_PIPE_SIZE);
        memset(chunk, 'f', sizeof chunk);
        for (size_t i = 99; i < sizeof chunk; i += 100)
                chunk[i] = '\n';
        (void) clock_gettime(CLOCK_MONOTONIC, &t0);
        do
                if (write(STDERR_FILENO, chunk, sizeof chunk) < 0 && errno != EINTR)
                        return;
        while (clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec - t0.tv_sec < FAULT_FLOOD_SEC);
}

#define FAULT_GROW_MAX (256U << 20)
/* "grow": as a worker the core took over would, append to the stored core (after RESULT with
 * @journal) until a write fails or FAULT_GROW_MAX, and say how far it got. */
static void grow_output(int out_fd) {
        static const uint8_t chunk[1U << 16] = { 0x5a };
        uint64_t grown = 0;
        ssize_t n = 0;

        if (lseek(out_fd, 0, SEEK_END) < 0)
                return;
        while (grown < FAULT_GROW_MAX && (n = write(out_fd, chunk, sizeof chunk)) > 0)
                grown += (uint64_t) n;
        log_warning_errno(n < 0 ? negative_errno() : 0, "Test fault: grew the stored core by %llu bytes, then: %m",
                          (unsigned long long) grown);
}

#define FAULT_SLOW_MSEC 4000 /* "slow": how long it sleeps */

/* The fault COREDUMP_WORKER_FAULT asks for at this point ("core" without an "@"), in what, for a
 * crash of a program called "crasher-fault"; NULL for none. */
static const char *fault_here(const Record *rec, const char *when, char what[static 16]) {
        const char *fault = getenv("COREDUMP_WORKER_FAULT"), *at;
        RecordField f;

        if (!fault || !record_find(rec->buf, rec->len, "COREDUMP_COMM", &f) || f.value_len != 13 ||
            memcmp(f.value, "crasher-fault", 13) != 0)
                return NULL;
        at = strchr(fault, '@');
        if (strcmp(at ? at + 1 : "core", when) != 0)
                return NULL;
        snprintf(what, 16, "%.*s", (int) (at ? at - fault : (ptrdiff_t) strlen(fault)), fault);
        return what;
}

/* "hoard": fills the room that came with the job (its memfd, sealed at that size) and sleeps
 * FAULT_SLOW_MSEC, as a worker a core took over could, long after it said STORED. */
static void hoard_spool_room(void) {
        static const uint8_t page[4096] = { 1 };
        off_t at = 0;

        while (slots.spool >= 0 && pwrite(slots.spool, page, sizeof page, at) == (ssize_t) sizeof page)
                at += (off_t) sizeof page;
        log_info("Test fault: holding %lld bytes of spool room", (long long) at);
        (void) poll(NULL, 0, FAULT_SLOW_MSEC);
}

/* Test builds only (meson -Dworker-test-faults=true): misbehave on purpose, for crashes of a
 * program called "crasher-fault", as COREDUMP_WORKER_FAULT says: crash, hang, malformed, flood
 * (its stderr), grow (its stored core), slow (sleeps FAULT_SLOW_MSEC), result (an empty RESULT,
 * without its analysis memfd), closemods (closes its module files there, before its exit: a
 * FUSE file's close then waits for its server, the whole process with its memory), hoard
 * (hoard_spool_room()); at the start of the core,
 * with "@analysis" once the core is received and the task released, before the stack traces, or
 * with "@journal" (crash@journal, hang@journal, grow@journal) once the core is stored, before the
 * journal entry. (And twice@result: fault_result_twice().) */
static void maybe_misbehave(const Record *rec, const char *when, int out_fd, ModuleFiles *mods) {
        char what[16];
        const char *fault = fault_here(rec, when, what);

        if (!fault)
                return;
        if (!strcmp(fault, "closemods") && mods)
                module_files_close(mods);
        if (!strcmp(fault, "hoard")) /* keeps what memfd room it has filled, as long as it can */
                hoard_spool_room();
        if (!strcmp(fault, "crash"))
                *(volatile int *) 0 = 0;
        if (!strcmp(fault, "hang"))
                for (;;)
                        (void) poll(NULL, 0, -1);
        if (!strcmp(fault, "malformed"))
                (void) proto_send(WORKER_CONTROL_FD, "garbage", 7, NULL, 0);
        if (!strcmp(fault, "flood"))
                flood_stderr();
        if (!strcmp(fault, "grow"))
                grow_output(out_fd);
        if (!strcmp(fault, "slow")) {
                log_info("Test fault: sleeping %d ms", FAULT_SLOW_MSEC); /* what a test waits for */
                (void) poll(NULL, 0, FAULT_SLOW_MSEC);
        }
        if (!strcmp(fault, "result")) { /* a RESULT of nothing, before the core and its DETAILS */
                MsgResult res = { .hdr = { PROTO_MAGIC, MSG_RESULT } };
                (void) proto_send(WORKER_CONTROL_FD, &res, sizeof res, NULL, 0);
        }
}

/* "twice@result": RESULT sent a second time, as a worker the core took over could. */
static bool fault_result_twice(const Record *rec) {
        char what[16];
        const char *fault = fault_here(rec, "result", what);

        return fault && strcmp(fault, "twice") == 0;
}

/* "giveback": the first worker of the crash gives its job back before the core (as one whose
 * start failed), "giveback2" every worker does, "givebackfd" gives back its output file in place
 * of the connection (as a compromised worker could try). The descriptor it gives back (a
 * JOB_FD_*), or -1. */
static int fault_give_back(const Record *rec, const MsgJob *job) {
        char what[16];
        const char *fault = fault_here(rec, "core", what);

        if (!fault)
                return -1;
        if (strcmp(fault, "giveback2") == 0 || (strcmp(fault, "giveback") == 0 && !(job->flags & JOB_FLAG_RETURNED)))
                return JOB_FD_CONN;
        return strcmp(fault, "givebackfd") == 0 ? JOB_FD_OUT : -1;
}

/* "ahead": a spare mapped ahead fails to enter its sandbox, whatever the crash (there is none). */
static bool fault_ahead(void) {
        const char *fault = getenv("COREDUMP_WORKER_FAULT");

        return fault && strcmp(fault, "ahead") == 0;
}
#else
static void maybe_misbehave(const Record *rec, const char *when, int out_fd, ModuleFiles *mods) {
}

static int fault_give_back(const Record *rec, const MsgJob *job) {
        return -1;
}

static bool fault_result_twice(const Record *rec) {
        return false;
}

static bool fault_ahead(void) {
        return false;
}
#endif

/* RETURNED: a job this worker could not start goes back with its connection, not a byte of the
 * core read, for another worker to take (the manager gives it one more); error says why, and
 * was logged. JOB_GIVEN_BACK if it went, else the error. */
#define JOB_GIVEN_BACK 1
static int give_back_fd(int fd, int error) {
        MsgReturned msg = { .hdr = { PROTO_MAGIC, MSG_RETURNED }, .error = error < 0 && error >= -4095 ? error : -EIO };
        int r;

        log_info("Giving the job back to the manager, nothing of its core read"); /* (it kills us then) */
        r = proto_send(WORKER_CONTROL_FD, &msg, sizeof msg, &fd, 1);
        if (r < 0) {
                log_error_errno(r, "Failed to give the job back: %m");
                return error;
        }
        return JOB_GIVEN_BACK;
}

static int give_back(int fds[JOB_FDS], int error) {
        return give_back_fd(fds[JOB_FD_CONN], error);
}

/* COREDUMP_SIGNAL as text: a signal number, and its NUL */
#define SIGNAL_FIELD_MAX 8U

static uint32_t peak_rss_kib(void) {
        struct rusage ru;

        return getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > 0 ? (uint32_t) MIN(ru.ru_maxrss, (long) UINT32_MAX) : 0;
}

/* STORED: a core written and synced is the manager's to keep from here, whatever becomes of its
 * stack traces (libdw reads what the crashed process made). */
static int report_stored(const MsgJob *job, const MsgResult *res) {
        MsgResult stored = *res;

        if (!(job->flags & JOB_FLAG_STORE) || res->error < 0)
                return 0;
        stored.hdr.type = MSG_STORED;
        stored.peak_rss_kib = peak_rss_kib();
        return proto_send(WORKER_CONTROL_FD, &stored, sizeof stored, NULL, 0);
}

/* What the core's stack traces say, added to our record and sent to the manager with RESULT. The
 * signal, for the signature, as the entry will give it: the record's (pipe mode: the kernel's %s),
 * else the core's siginfo. */
static int analyse(CoreCapture *cap, const ModuleFiles *mods, const MsgResult *res, Record *rec) {
        _cleanup_(record_free) Record analysis = {};
        _cleanup_free_ char *exe = NULL;
        char sig[SIGNAL_FIELD_MAX] = "";
        RecordField f;
        int r, fd, signo = 0;

        if (record_find(rec->buf, rec->len, "COREDUMP_EXE", &f))
                exe = strndup((const char *) f.value, f.value_len);
        if (record_find(rec->buf, rec->len, "COREDUMP_SIGNAL", &f) && f.value_len < sizeof sig) {
                memcpy(sig, f.value, f.value_len);
                if (parse_int_range(sig, 1, SIGRTMAX, &signo) < 0)
                        signo = 0;
        } else if (res->has_siginfo && res->signo > 0 && res->signo < NSIG)
                signo = res->signo;
        r = analysis_build(cap, mods, exe, signo, &analysis);
        if (r < 0)
                log_warning_errno(r, "Failed to describe the stack traces: %m");
        fd = analysis_memfd(TAKE_FD(slots.analysis), &analysis);
        if (fd < 0)
                return fd;
        r = record_merge_analysis(rec, analysis.buf, analysis.len);
        if (r < 0)
                log_warning_errno(r, "Failed to add the stack traces to the entry: %m");
        return fd;
}

static int run_job(const MsgJob *job, int fds[JOB_FDS], ModuleFiles *mods) {
        _cleanup_(sink_freep) Sink *sink = NULL;
        _cleanup_close_ int journal_fd = -EBADF;
        MsgRecorded recorded = { .hdr = { PROTO_MAGIC, MSG_RECORDED } };
        _cleanup_(record_free) Record rec = {};
        _cleanup_close_ int analysis_fd = -EBADF;
        CoreCapture cap = {};
        MsgResult res;
        MsgCommit commit;
        bool journal_fit = false;
        int r;

        /* up to core_receive() nothing of the core is read: a failure gives the job back */
        if (job->flags & JOB_FLAG_RETURNED)
                log_debug("A worker before this one gave the job back");
        r = load_record(fds[JOB_FD_RECORD], &rec);
        if (r < 0)
                return give_back(fds, log_error_errno(r, "Invalid crash record from the manager: %m"));
        /* The manager accepted it non-blocking; this process only ever waits on it. */
        r = fd_set_nonblock(fds[JOB_FD_CONN], false);
        if (r < 0)
                return give_back(fds, log_error_errno(r, "Failed to make the connection blocking: %m"));
        if (job->flags & JOB_FLAG_STORE) {
                r = sink_new((Compression) job->compression, job->compress_level, fds[JOB_FD_OUT], &sink);
                if (r < 0)
                        return give_back(fds, log_error_errno(r, "Failed to set up %s compression: %m",
                                                              compression_to_string((Compression) job->compression)));
        }
        journal_fd = open_journal_core(job);
        maybe_misbehave(&rec, "core", fds[JOB_FD_OUT], NULL);
        r = fault_give_back(&rec, job);
        if (r >= 0)
                return give_back_fd(fds[r], log_error_errno(-EAGAIN, "Test fault: the job's start failed: %m"));
        take_module_files(mods); /* from here on this worker can no longer give the job back */
        details.rec = &rec;
        r = core_receive(fds[JOB_FD_CONN], sink, fds[JOB_FD_OUT], journal_fd, job,
                         &(ReceiveHooks) { .ask = ask_spool, .given_fd = slots.spool, .tick = details_tick,
                                           .received = details_wait }, &res,
                         &journal_fit, &cap);
        /* core_receive() closed the connection, which releases the crashed task; for a job handed
         * out while /proc was read, the manager's own copy holds the task until DETAILS comes */
        fds[JOB_FD_CONN] = -EBADF;
        if (r < 0)
                return log_error_errno(r, "Failed to receive the core: %m");
        r = details_wait(res.bytes_in); /* (a core compressed while received) */
        if (r < 0)
                return r;
        if (store_stop_to_string(res.store_stop) &&
            record_add_str(&rec, "COREDUMP_PROCESSING_ERROR", store_stop_to_string(res.store_stop)) < 0)
                log_warning("Failed to say in the entry why the core is truncated");
        r = report_stored(job, &res);
        if (r < 0)
                return log_error_errno(r, "Failed to report the stored core to the manager: %m");
        maybe_misbehave(&rec, "analysis", fds[JOB_FD_OUT], NULL);
        analysis_fd = analyse(&cap, mods, &res, &rec);
        core_capture_free(&cap);
        if (analysis_fd < 0)
                return log_error_errno(analysis_fd, "Failed to pass the stack traces on: %m");
        res.peak_rss_kib = peak_rss_kib();
        r = proto_send(WORKER_CONTROL_FD, &res, sizeof res, &analysis_fd, 1);
        if (r < 0)
                return log_error_errno(r, "Failed to report to the manager: %m");
        if (fault_result_twice(&rec))
                (void) proto_send(WORKER_CONTROL_FD, &res, sizeof res, &analysis_fd, 1);

        r = wait_msg(MSG_COMMIT, &commit, sizeof commit, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "No commit from the manager: %m");
        commit.facts.filename[sizeof commit.facts.filename - 1] = 0;
        commit.facts.thread_name[sizeof commit.facts.thread_name - 1] = 0;
        commit.facts.comm[sizeof commit.facts.comm - 1] = 0;
        commit.facts.processing_error[sizeof commit.facts.processing_error - 1] = 0;
        maybe_misbehave(&rec, "journal", fds[JOB_FD_OUT], mods);
        journal_send_use_memfd(TAKE_FD(slots.entry));
        recorded.error = write_entry(&rec, &commit.facts, journal_fd, journal_fit);
        return proto_send(WORKER_CONTROL_FD, &recorded, sizeof recorded, NULL, 0);
}

/* RLIMIT_AS for a core of journal_size bytes inline in the entry (0 if none); none under the
 * sanitizers, whose shadow memory needs terabytes of address space. */
static uint64_t address_space(uint64_t journal_size) {
#ifdef SANITIZED
        return 0;
#else
        return WORKER_AS_BASE + journal_size;
#endif
}

/* What the job may use: the uid its crash goes to, its address space, its descriptors, zstd's
 * threads. */
static SandboxParams job_sandbox(const MsgJob *job, size_t n_modules) {
        return (SandboxParams) {
                .uid = job->uid,
                .gid = job->gid,
                .address_space = address_space((job->flags & JOB_FLAG_JOURNAL_CORE) ? job->journal_size_max : 0),
                /* DETAILS brings the module files: as many as may come, until then */
                .nofile = SANDBOX_NOFILE(details.pending ? MODULES_MAX : n_modules),
                .threads = job->compression == COMPRESSION_ZSTD ? sink_zstd_threads() : 0,
        };
}

static int enter(const SandboxParams *p) {
        SandboxReport rep;
        int r;

        r = sandbox_enter(p, &rep);
        if (r < 0)
                return r;
        log_debug("Sandbox: uid %u, namespaces %s, empty root %s, Landlock ABI %d, seccomp on", (unsigned) p->uid,
                  rep.namespaces ? "yes" : "no", rep.empty_root ? "yes" : "no", rep.landlock_abi);
        return 0;
}

/* What a job keeps into its sandbox: the control socket, the connection, the output, the record,
 * the module files' queue (the files are taken out of it later, run_job()). */
static int enter_sandbox(const MsgJob *job, const int fds[JOB_FDS], const ModuleFiles *mods) {
        const int keep[] = { WORKER_CONTROL_FD, fds[JOB_FD_CONN], fds[JOB_FD_OUT], fds[JOB_FD_RECORD], mods->queue,
                             slots.analysis, slots.entry, slots.journal_core, slots.spool };
        SandboxParams p = job_sandbox(job, mods->n);

        p.keep_fds = keep;
        p.n_keep_fds = ELEMENTSOF(keep);
        return enter(&p);
}

/* The type of the manager's next message, once there is one. */
static int next_msg_type(uint32_t *ret) {
        struct pollfd p = { .fd = WORKER_CONTROL_FD, .events = POLLIN };
        int r;

        while ((r = poll(&p, 1, -1)) < 0 && errno == EINTR)
                ;
        return r < 0 ? negative_errno() : proto_peek_type(WORKER_CONTROL_FD, ret);
}

static int mapped_valid(const MsgMapped *m) {
        if (m->uid == 0 || m->uid == UID_INVALID || m->gid == GID_INVALID ||
            m->journal_size_max > UINT64_MAX - WORKER_AS_BASE)
                return -EBADMSG;
        return 0;
}

/* MAPPED, if the manager sends it before the job: the whole sandbox is entered now, as the user
 * it mapped, with the most any job may need (every module, zstd's threads, the largest inline
 * core), which the job lowers (sandbox_narrow()); then READY again, sandboxed. 1 if so, 0 if
 * the next message is something else, or negative errno. */
static int enter_sandbox_ahead(MsgMapped *ret) {
        const int keep[] = { WORKER_CONTROL_FD, slots.analysis, slots.entry, slots.journal_core, slots.spool };
        MsgReady ready = { .hdr = { PROTO_MAGIC, MSG_READY }, .pid = (uint32_t) getpid(), .flags = READY_FLAG_SANDBOXED };
        SandboxParams sp;
        uint32_t type;
        int r;

        r = next_msg_type(&type);
        if (r < 0 || type != MSG_MAPPED)
                return r == -EBADMSG ? 0 : r; /* (wait_msg() says what is wrong with it) */
        r = wait_msg(MSG_MAPPED, ret, sizeof *ret, NULL, 0);
        r = r ?: mapped_valid(ret);
        r = r ?: (fault_ahead() ? -EPERM : 0);
        if (r < 0)
                return r;
        sp = (SandboxParams) {
                .uid = ret->uid,
                .gid = ret->gid,
                .keep_fds = keep,
                .n_keep_fds = ELEMENTSOF(keep),
                .address_space = address_space(ret->journal_size_max),
                .nofile = SANDBOX_NOFILE(MODULES_MAX),
                .threads = sink_zstd_threads(),
        };
        r = enter(&sp);
        r = r ?: proto_send(WORKER_CONTROL_FD, &ready, sizeof ready, NULL, 0);
        if (r == -EPIPE)
                return -ECONNRESET; /* the manager retired this spare while it got ready (a reload) */
        return r < 0 ? r : 1;
}

static int narrow_sandbox(const MsgJob *job, const ModuleFiles *mods) {
        SandboxParams p = job_sandbox(job, mods->n);
        int r = sandbox_narrow(&p);

        if (r < 0)
                return log_error_errno(r, "Failed to lower the sandbox's limits to the job's: %m");
        return 0;
}

/* The job of a worker sandboxed ahead: its user's, and within what the sandbox allows. */
static int job_fits_ahead(const MsgJob *job, const MsgMapped *mapped) {
        if (job->uid != mapped->uid || job->gid != mapped->gid ||
            ((job->flags & JOB_FLAG_JOURNAL_CORE) && job->journal_size_max > mapped->journal_size_max))
                return -EBADMSG;
        return 0;
}

static void close_fds(int fds[JOB_FDS]) {
        for (size_t i = 0; i < JOB_FDS; i++)
                fds[i] = safe_close(fds[i]);
}

#define WORKER_COMM "coredump-worker"

static int worker_main(void) {
        static const int keep[] = { WORKER_CONTROL_FD };
        MsgReady ready = { .hdr = { PROTO_MAGIC, MSG_READY } };
        int fds[JOB_FDS] = { -EBADF, -EBADF, -EBADF, -EBADF };
        static ModuleFiles mods = MODULE_FILES_INIT;
        MsgMapped mapped;
        MsgJob job;
        int r, ahead;

        /* coredumpd execs us through /proc/self/fd/N (its pinned binary), which names the process
         * "N": the name ps, the journal's _COMM and the tests know */
        (void) prctl(PR_SET_NAME, WORKER_COMM, 0, 0, 0);
        log_setup("coredump-worker");
        r = die_with_manager();
        if (r < 0)
                return log_error_errno(r, "Not started by a live coredumpd: %m"), 2;
        r = close_all_fds_except(keep, ELEMENTSOF(keep));
        if (r < 0)
                return log_error_errno(r, "Failed to close stray fds: %m"), 3;
        /* before the filter that refuses memfd_create */
        r = make_slots();
        if (r < 0)
                return log_error_errno(r, "Failed to make the job's memfds: %m"), 3;
        /* counted while /sys is still there (the zygote's workers inherit its count) */
        sink_zstd_count_cpus();
        /* coredumpd maps the ids into them (READY_FLAG_USERNS): no helper process */
        r = sandbox_prepare(false);
        if (r < 0 && r != -EOPNOTSUPP)
                return log_error_errno(r, "Failed to prepare the namespaces: %m"), 3;
        if (r >= 0)
                ready.flags |= READY_FLAG_USERNS;
        r = sandbox_seccomp_prepare();
        if (r < 0)
                return log_error_errno(r, "Failed to compile the seccomp filter: %m"), 3;
        /* level 0: zstd's default, which is coredumpd's; a job with another level sets its own */
        if (sink_zstd_prepare(0) < 0)
                log_debug("Could not prepare a zstd context, the job will make its own");
        if (core_receive_prepare() < 0)
                log_debug("Could not prepare the read buffer, the job will map its own");

        ready.pid = (uint32_t) getpid();
        r = proto_send(WORKER_CONTROL_FD, &ready, sizeof ready, NULL, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to announce readiness: %m"), 1;

        ahead = enter_sandbox_ahead(&mapped);
        if (ahead == -ECONNRESET)
                return 0; /* the manager let us go without a job */
        if (ahead < 0)
                return log_error_errno(ahead, "Failed to enter the sandbox ahead of the job: %m"), 3;
        r = wait_msg(MSG_JOB, &job, sizeof job, fds, JOB_FDS);
        if (r == -ECONNRESET)
                return 0;
        if (r < 0 || job_valid(&job) < 0 || (ahead && job_fits_ahead(&job, &mapped) < 0)) {
                close_fds(fds);
                return log_error_errno(r < 0 ? r : -EBADMSG, "Invalid job from the manager: %m"), 1;
        }
        if (job.flags & JOB_FLAG_DETAILS)
                details = (typeof(details)) { .pending = true, .job = &job, .mods = &mods };
        /* from here until its first read of the core a worker that cannot go on gives the job back */
        r = limit_file_size(&job);
        if (r < 0)
                r = give_back(fds, log_error_errno(r, "Failed to limit the core's file size: %m"));
        if (r == 0 && (r = limit_slots(&job)) < 0)
                r = give_back(fds, log_error_errno(r, "Failed to bound the job's memfds: %m"));
        if (r == 0) {
                r = module_files_receive(job.n_modules, fds[JOB_FD_MODULES], &mods, wait_msg);
                fds[JOB_FD_MODULES] = safe_close(fds[JOB_FD_MODULES]);
                if (r < 0)
                        r = give_back(fds, log_error_errno(r, "Invalid module files from the manager: %m"));
        }
        /* Nothing of the crash is read before this. */
        if (r == 0 && (r = ahead ? narrow_sandbox(&job, &mods) : enter_sandbox(&job, fds, &mods)) < 0)
                r = give_back(fds, r);
        if (r == 0)
                r = run_job(&job, fds, &mods);
        close_fds(fds);
        /* The module files are left to the exit, which releases the address space before it
         * closes files: one whose close waits for a file system (FUSE beneath, a FLUSH never
         * answered) then holds no memory of the crash's, only this process. */
        return r < 0 ? 1 : 0; /* done, or given back (JOB_GIVEN_BACK) */
}

int main(int argc, char **argv) {
        int r;

        /* First thing: a crash in here must never be dumped into the daemon. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* zstd's threads share one malloc arena: each arena of its own reserves 64 MiB of the
         * address space RLIMIT_AS bounds */
        (void) mallopt(M_ARENA_MAX, 1);
        if (argc == 2 && strcmp(argv[1], "--zygote") == 0) {
                r = zygote_run();
                if (r <= 0)
                        return r < 0 ? 1 : 0;
                /* a new worker, forked for coredumpd: its command line says so (ps, pgrep -f) */
                if (strlen(argv[0]) == strlen(WORKER_COMM))
                        memcpy(argv[0], WORKER_COMM, strlen(WORKER_COMM));
                memset(argv[1], 0, strlen(argv[1]));
        } else if (argc != 1) {
                log_setup("coredump-worker");
                log_error("coredump-worker takes no arguments (or --zygote); coredumpd starts it");
                return 2;
        }
        r = worker_main();
#ifdef SANITIZED
        return r; /* the sanitizers' reports run at exit */
#else
        /* Everything is written and closed: the exit handlers (libdw's, libelf's, zstd's and
         * glibc's destructors) would only touch, and copy, pages shared with the zygote. */
        (void) fflush(NULL);
        _exit(r);
#endif
}
