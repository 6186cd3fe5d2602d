/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The core stream: the kernel's connection read into the sink (and the journal memfd) within the
 * job's limits, then closed to release the task. Worker (sandboxed): only the job's fds. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/vfs.h>

#include "build-config.h"
#include "capture.h"
#include "elf-stream.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "receive.h"
#include "spool.h"

/* ProcessSizeMax= bounds what is processed (the stack traces), ExternalSizeMax= what is stored
 * and JournalSizeMax= what goes into the journal; the core is read as far as the largest of
 * those that applies (systemd's rule), each use taking only its own share. The manager lowers
 * the last two to the process's RLIMIT_CORE; unlike systemd, that does not stop the reading
 * short of ProcessSizeMax=, since the stacks the traces need come last in a core. */
static uint64_t read_limit(const MsgJob *job) {
        uint64_t limit = job->process_size_max;

        if (job->flags & JOB_FLAG_STORE)
                limit = MAX(limit, job->external_size_max);
        if (job->flags & JOB_FLAG_JOURNAL_CORE)
                limit = MAX(limit, job->journal_size_max);
        return limit;
}

uint64_t job_file_size_limit(const MsgJob *job) {
        uint64_t max = WORKER_FSIZE_FLOOR;

        if (job->flags & JOB_FLAG_STORE)
                max = MAX(max, job->store_size_max);
        if (job->flags & JOB_FLAG_JOURNAL_CORE) /* the entry's memfd holds the core too */
                max = job->journal_size_max > UINT64_MAX - max ? UINT64_MAX : max + job->journal_size_max;
        return max;
}

/* The part of a chunk at offset got that the stored file takes (ExternalSizeMax=). */
static size_t store_share(const MsgJob *job, uint64_t got, size_t n, bool *cut) {
        if (got >= job->external_size_max) {
                *cut = true;
                return 0;
        }
        if ((uint64_t) n > job->external_size_max - got) {
                *cut = true;
                return (size_t) (job->external_size_max - got);
        }
        return n;
}

/* The stored file's room: the job's cap, and the file system's free space above KeepFree=,
 * asked again (fstatfs on the output) each time the file grew by STORE_SPACE_CHECK_BYTES. */
typedef struct StoreRoom {
        int fd;
        uint64_t cap, keep_free;
        bool checked;
        uint64_t checked_end; /* the file's length when the file system was last asked */
        uint64_t free_room;   /* what it had above KeepFree= then */
} StoreRoom;

static void room_check_free(StoreRoom *room, uint64_t end) {
        struct statfs sf;
        uint64_t avail;

        room->checked = true;
        room->checked_end = end;
        if (fstatfs(room->fd, &sf) < 0) {
                room->free_room = 0; /* cannot tell: store no more */
                return;
        }
        avail = (uint64_t) sf.f_bavail * (uint64_t) sf.f_bsize;
        room->free_room = avail > room->keep_free ? avail - room->keep_free : 0;
}

/* Whether n more bytes may go into the sink, the file still complete within its room; if not,
 * why (StoreStop). */
static StoreStop room_allows(StoreRoom *room, const Sink *sink, uint64_t n) {
        uint64_t need = sink_bound(sink, n);

        if (need > room->cap)
                return STORE_STOP_ROOM;
        if (!room->checked || sink->end - room->checked_end >= STORE_SPACE_CHECK_BYTES)
                room_check_free(room, sink->end);
        if (need > room->checked_end && need - room->checked_end > room->free_room)
                return STORE_STOP_FREE;
        return STORE_STOP_NONE;
}

/* The largest piece (halving from STORE_PIECE_MAX down to STORE_PIECE_MIN) that still fits the
 * room: close to its end, smaller pieces go on filling it. 0 and *stop set if none fits. */
static size_t fitting_piece(StoreRoom *room, Sink *sink, size_t left, uint32_t *stop) {
        size_t piece = MIN(left, (size_t) STORE_PIECE_MAX);
        bool flushed = false;

        for (;;) {
                *stop = room_allows(room, sink, piece);
                if (*stop == STORE_STOP_NONE)
                        return piece;
                /* near the end of the room: what the sink holds back counts as if incompressible;
                 * out with it, then the bound is what the file is */
                if (!flushed && sink_flush(sink) >= 0) {
                        flushed = true;
                        continue;
                }
                if (piece <= STORE_PIECE_MIN)
                        return 0;
                piece /= 2;
        }
}

/* Stores the share of a chunk, piece by piece while they fit; *stop says why storing ended (the
 * stream goes on, for the stack traces), r a write error (the core cannot be kept). */
static int store_chunk(Sink *sink, StoreRoom *room, const uint8_t *buf, size_t share, uint32_t *stop) {
        *stop = STORE_STOP_NONE;
        while (share > 0) {
                size_t piece = fitting_piece(room, sink, share, stop);
                int r;

                if (piece == 0)
                        return 0;
                r = sink_write(sink, buf, piece);
                if (r < 0)
                        return r;
                buf += piece;
                share -= piece;
        }
        return 0;
}

static CoreState final_state(const ElfStream *elf, uint64_t got, bool cut) {
        if (cut)
                return CORE_TRUNCATED_LIMIT;
        if (elf->state != ELF_STREAM_KNOWN)
                return CORE_UNKNOWN_END;
        return got < elf->expected_size ? CORE_TRUNCATED_EOF : CORE_COMPLETE;
}

static void copy_notes(const ElfStream *elf, MsgResult *res) {
        const CoreNotes *n = &elf->core_notes;

        if (!elf->notes_done || !elf->notes_ok)
                return;
        res->has_siginfo = n->has_siginfo;
        res->signo = n->signo;
        res->code = n->code;
        res->has_prstatus = n->has_prstatus;
        res->tid = n->tid;
        res->n_threads = n->n_threads;
        res->has_psinfo = n->has_psinfo;
        memcpy(res->fname, n->fname, sizeof res->fname);
}

void core_capture_free(CoreCapture *c) {
        free(c->core);
        c->core = NULL;
        c->len = 0;
}

/* Once the notes are in: plan what to keep, unless the core is too large to process. */
static void maybe_plan(ElfStream *elf, Capture *cap, const MsgJob *job, CoreCapture *out) {
        if (cap->planned || !elf->notes_done)
                return;
        cap->planned = true;
        if (!HAVE_LIBDW) { /* nothing would unwind what is kept: keep nothing */
                snprintf(out->why_not, sizeof out->why_not, "built without elfutils (libdw)");
                return;
        }
        if (elf->expected_size > job->process_size_max) {
                snprintf(out->why_not, sizeof out->why_not,
                         "the core (%llu bytes) is larger than ProcessSizeMax= (%llu bytes)",
                         (unsigned long long) elf->expected_size, (unsigned long long) job->process_size_max);
                return;
        }
        if (capture_plan(cap, elf) < 0)
                snprintf(out->why_not, sizeof out->why_not, "%s", cap->why_not ?: "nothing to unwind");
}

static void finish_capture(ElfStream *elf, Capture *cap, CoreCapture *out) {
        if (!out->why_not[0] && !cap->planned)
                snprintf(out->why_not, sizeof out->why_not, "%s",
                         elf->state == ELF_STREAM_INVALID ? elf->why : "the core ended before its notes");
        if (!out->why_not[0] && capture_build_core(cap, elf, &out->core, &out->len) < 0)
                snprintf(out->why_not, sizeof out->why_not, "out of memory");
        capture_free(cap);
        elf_stream_free_kept(elf);
}

/* The stored file's side of the stream: the share of each piece of it the file takes, in order,
 * while it is received or when the spool is replayed. */
typedef struct StoreCtx {
        Sink *sink;
        const MsgJob *job;
        StoreRoom room;
        bool cut;      /* nothing more is stored: past ExternalSizeMax=, or out of room */
        uint32_t stop; /* StoreStop */
        int error;     /* a write failed: the core cannot be kept */
} StoreCtx;

static int store_feed(void *userdata, const uint8_t *p, size_t n, uint64_t offset) {
        StoreCtx *st = userdata;
        size_t share;

        if (!st->sink || st->error < 0 || st->cut)
                return 0;
        share = store_share(st->job, offset, n, &st->cut);
        st->error = store_chunk(st->sink, &st->room, p, share, &st->stop);
        /* no more room: what is stored is complete and stays; the rest is read on */
        st->cut = st->cut || st->stop != STORE_STOP_NONE;
        return st->error;
}

typedef enum SpoolMode {
        SPOOL_UNDECIDED, /* not known yet how large the core is */
        SPOOL_ON,        /* granted: the rest goes into the spool until the connection ends */
        SPOOL_OFF,       /* compressed while received */
} SpoolMode;

/* Once the ELF headers say how large the core is (the chunk that brought them is not stored
 * yet): room asked for what is left of the stored part, and the spool opened at the chunk's
 * offset with what was granted. */
static SpoolMode spool_decide(const ElfStream *elf, const StoreCtx *st, uint64_t got, const ReceiveHooks *hooks,
                              Spool *spool) {
        uint64_t end, want, granted = 0;
        int fd = -EBADF;

        if (!st->sink || !hooks->ask || st->job->spool_max == 0 || st->cut || st->error < 0 ||
            elf->state == ELF_STREAM_INVALID)
                return SPOOL_OFF;
        if (elf->state != ELF_STREAM_KNOWN)
                return got < SPOOL_DECIDE_BY ? SPOOL_UNDECIDED : SPOOL_OFF;
        end = MIN(elf->expected_size, st->job->external_size_max);
        if (end <= got || end - got < SPOOL_WANT_MIN)
                return SPOOL_OFF;
        /* only what is to be stored is spooled; a memfd, it holds no more than the worker's file
         * size limit (a core larger than that spills: the limit is never raised for the spool).
         * What fits the room that came with the job is not asked for. */
        want = MIN(MIN(end - got, st->job->spool_max), job_file_size_limit(st->job));
        if (want <= st->job->spool_given && hooks->given_fd >= 0) {
                granted = want;
                fd = fcntl(hooks->given_fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return SPOOL_OFF;
        } else if (hooks->ask(want, &granted, &fd) < 0)
                return SPOOL_OFF;
        if (granted == 0) {
                safe_close(fd);
                return SPOOL_OFF;
        }
        /* the memfd's seals hold it to what was granted, whatever becomes of this process */
        if (spool_open(spool, fd, got, MIN(MIN(granted, st->job->spool_max), job_file_size_limit(st->job))) < 0) {
                log_debug("Could not open the spool, compressing while receiving");
                return SPOOL_OFF;
        }
        return SPOOL_ON;
}

/* Of a chunk at offset got, what the spool keeps: the part below ExternalSizeMax= (the rest is
 * read for the stack traces only). */
static size_t spool_share(const MsgJob *job, uint64_t got, size_t n) {
        return got >= job->external_size_max ? 0 : (size_t) MIN((uint64_t) n, job->external_size_max - got);
}

/* The spool is full (or failed): what it holds goes to the sink now, the rest as it comes. */
static int spool_spill(Spool *spool, StoreCtx *st) {
        _cleanup_free_ uint8_t *buf = malloc(CORE_READ_CHUNK);
        int r;

        if (!buf) {
                spool_close(spool);
                return st->error = -ENOMEM;
        }
        log_debug("The core outgrew its spool (%llu bytes): compressing the rest while receiving",
                  (unsigned long long) spool->granted);
        r = spool_replay(spool, buf, CORE_READ_CHUNK, store_feed, st);
        spool_close(spool);
        if (r < 0 && st->error == 0)
                st->error = r; /* what it held is not all stored: the core cannot be kept */
        return r;
}

static uint8_t *prepared_buf;

static uint8_t *read_buffer_map(bool populate) {
        void *p = mmap(NULL, CORE_READ_CHUNK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

static void read_buffer_unmap(uint8_t **buf) {
        if (*buf)
                (void) munmap(*buf, CORE_READ_CHUNK);
}

int core_receive_prepare(void) {
        if (!prepared_buf)
                prepared_buf = read_buffer_map(true);
        return prepared_buf ? 0 : -ENOMEM;
}

int core_receive(int conn, Sink *sink, int out_fd, int journal_fd, const MsgJob *job, const ReceiveHooks *hooks,
                 MsgResult *res, bool *ret_journal_fit, CoreCapture *ret_capture) {
        _cleanup_(read_buffer_unmap) uint8_t *buf = TAKE_PTR(prepared_buf) ?: read_buffer_map(false);
        _cleanup_free_ Capture *cap = calloc(1, sizeof *cap);
        uint64_t limit = read_limit(job), got = 0, spooled = 0;
        bool cut = false, hinted = false, journal_fit = journal_fd >= 0;
        StoreCtx st = { .sink = sink, .job = job,
                        .room = { .fd = out_fd, .cap = job->store_size_max, .keep_free = job->keep_free } };
        SpoolMode mode = SPOOL_UNDECIDED;
        Spool spool = {};
        ElfStream elf;
        int r;

        *ret_capture = (CoreCapture) {};
        if (!buf || !cap)
                return -ENOMEM;
        elf_stream_init(&elf);
        elf.keep = true;

        for (;;) {
                ssize_t n = read(conn, buf, CORE_READ_CHUNK);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        /* ECONNRESET and friends: the kernel gave up on this dump. */
                        log_debug_errno(negative_errno(), "Reading the core stopped: %m");
                        break;
                }
                if (n == 0)
                        break;
                if ((uint64_t) n > limit - got) {
                        n = (ssize_t) (limit - got);
                        cut = true;
                }
                elf_stream_feed(&elf, buf, (size_t) n, got);
                if (sink && !hinted && elf.state == ELF_STREAM_KNOWN) { /* before the first byte stored, or ignored */
                        sink_size_hint(sink, MIN(elf.expected_size, job->external_size_max));
                        hinted = true;
                }
                maybe_plan(&elf, cap, job, ret_capture);
                capture_feed(cap, buf, (size_t) n, got);
                if (journal_fit && (got + (uint64_t) n > job->journal_size_max ||
                                    loop_write(journal_fd, buf, (size_t) n) < 0))
                        journal_fit = false;
                if (mode == SPOOL_UNDECIDED)
                        mode = spool_decide(&elf, &st, got, hooks, &spool);
                if (mode == SPOOL_ON && spool_add(&spool, buf, spool_share(job, got, (size_t) n)) < 0) {
                        mode = SPOOL_OFF;
                        (void) spool_spill(&spool, &st);
                }
                if (mode != SPOOL_ON)
                        (void) store_feed(&st, buf, (size_t) n, got);
                if (st.error < 0)
                        cut = true; /* out of space or I/O error: stop taking the core, it cannot be kept */
                got += (uint64_t) n;
                if (cut)
                        break;
                if (hooks->tick)
                        hooks->tick();
        }
        /* Past a limit or a failed write the rest is not wanted: make the kernel stop sending. */
        if (cut)
                (void) shutdown(conn, SHUT_RD);
        safe_close(conn); /* with the manager's copy already closed, this releases the task */
        log_debug("Task released after %llu bytes of its core, %s", (unsigned long long) got,
                  mode == SPOOL_ON ? "spooled: compressing them now" : "compressed while they came");

        if (mode == SPOOL_ON && hooks->received && st.error == 0 && (r = hooks->received(got)) < 0)
                st.error = r; /* not compressed: the core cannot be kept */
        if (mode == SPOOL_ON) {
                spooled = spool.used;
                r = st.error < 0 ? 0 : spool_replay(&spool, buf, CORE_READ_CHUNK, store_feed, &st);
                spool_close(&spool);
                if (r < 0 && st.error == 0)
                        st.error = r;
        }
        /* the spool kept no more than the stored part: a stream past it was cut all the same */
        if (got > job->external_size_max)
                st.cut = true;
        r = st.error;
        if (sink && r == 0)
                r = sink_finish(sink);
        if (sink && r == 0 && fsync(out_fd) < 0)
                r = negative_errno();

        *res = (MsgResult) {
                .hdr = { PROTO_MAGIC, MSG_RESULT },
                .error = r,
                .state = final_state(&elf, got, (cut || (sink && st.cut)) && r == 0),
                .bytes_in = got,
                .bytes_out = sink ? sink->bytes_out : 0,
                .expected = elf.state == ELF_STREAM_KNOWN ? elf.expected_size : 0,
                .store_stop = st.stop,
                .spooled = spooled,
        };
        copy_notes(&elf, res);
        finish_capture(&elf, cap, ret_capture);
        elf_stream_done(&elf);
        *ret_journal_fit = journal_fit;
        return 0;
}
