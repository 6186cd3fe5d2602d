/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump.conf: the settings, their defaults and bounds, and where they are read from.
 * Reads configuration files and directories only; no other I/O. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef enum Storage {
        STORAGE_NONE,
        STORAGE_EXTERNAL,
        STORAGE_JOURNAL,
} Storage;

typedef enum Compression {
        COMPRESSION_NONE,
        COMPRESSION_ZSTD,
        COMPRESSION_LZ4,
} Compression;

typedef enum CaptureMode {
        MODE_AUTO,   /* the socket where the kernel has it, else the pipe */
        MODE_SOCKET,
        MODE_PIPE,
} CaptureMode;

/* Bounds on the values a configuration may ask for. */
#define SPARE_WORKERS_MAX 32U
#define PARALLEL_CRASHES_MAX 256U
/* Crashes handled beside the MaxParallel= cores in flight: those being refused, and those only
 * recorded (refused ones waiting for a worker to write their record). */
#define CRASHES_REFUSING_MAX 64U
#define CRASH_TIMEOUT_MIN_USEC (1 * USEC_PER_SEC)
#define CRASH_TIMEOUT_MAX_USEC (24 * 3600 * USEC_PER_SEC)
#define CONFIG_LINE_MAX 4096
/* Distinct drop-in file names over all drop-in directories (a masked one counts too). */
#define CONFIG_DROPINS_MAX 256
/* Directories searched for the main file and for drop-ins: /etc, /run, /usr/lib. */
#define CONFIG_SEARCH_DIRS_MAX 3
/* Files one load applies: a main file and the drop-ins. */
#define CONFIG_FILES_MAX (1 + CONFIG_DROPINS_MAX)
#define USER_NAME_MAX 32
#define RATE_LIMIT_BURST_MAX 100000U
#define RATE_LIMIT_INTERVAL_MAX_USEC (7 * 24 * 3600 * USEC_PER_SEC)
#define MAX_AGE_MAX_USEC (UINT64_C(100) * 365 * 24 * 3600 * USEC_PER_SEC)
/* MaxParallelPerUser=: unset (the default rule), or no per-user cap ("infinity"). */
#define PARALLEL_PER_USER_DEFAULT 0U
#define PARALLEL_PER_USER_INFINITY UINT_MAX
/* The default rule: a quarter of MaxParallel= (rounded down, at least one) per user. */
#define PARALLEL_PER_USER_SHARE 4U
/* ForwardTimeoutSec=: bounds and default (systemd-coredump@.service's RuntimeMaxSec=). */
#define FORWARD_TIMEOUT_MIN_USEC (1 * USEC_PER_SEC)
#define FORWARD_TIMEOUT_MAX_USEC (3600 * USEC_PER_SEC)
#define FORWARD_TIMEOUT_DEFAULT_USEC (5 * 60 * USEC_PER_SEC)
/* WorkerStallTimeoutSec=: bounds, and "infinity" (no watchdog). */
#define WORKER_STALL_MIN_USEC (1 * USEC_PER_SEC)
#define WORKER_STALL_MAX_USEC (3600 * USEC_PER_SEC)
#define WORKER_STALL_INFINITY UINT64_MAX
/* SpoolMax=: UINT64_MAX is the default rule, a 1/SPOOL_DEFAULT_SHARE of physical memory; a value
 * is capped at 1/SPOOL_CAP_SHARE of it (a spool beyond would push the machine into swap or the
 * OOM killer exactly when something is already crashing). */
#define SPOOL_DEFAULT_SHARE 16U
#define SPOOL_CAP_SHARE 4U

typedef struct Config {
        Storage storage;
        Compression compress;
        int compress_level;
        bool compress_level_set;
        uint64_t process_size_max;
        uint64_t external_size_max; /* independent of ProcessSizeMax, same default */
        uint64_t journal_size_max;
        uint64_t max_use;  /* UINT64_MAX = default rule (10% of the file system) */
        uint64_t keep_free; /* UINT64_MAX = default rule (15% of the file system) */
        uint64_t max_age_usec; /* cores older than this are vacuumed; UINT64_MAX = no limit */
        bool enter_namespace;
        /* ours */
        char directory[PATH_MAX];
        char worker_user[USER_NAME_MAX + 1];
        unsigned spare_workers;
        unsigned max_parallel;
        uint64_t timeout_usec; /* per crash, from accept to release of the task */
        bool keep_forwarded;   /* a crash forwarded into its container keeps its core on the host too */
        bool worker_zygote;    /* workers forked by one zygote (sharing its layout and secrets), not exec'd each */
        uint64_t forward_timeout_usec; /* the container's collector has this long to take a crash */
        /* crashes of one uid (but root) handled at once; PARALLEL_PER_USER_DEFAULT or _INFINITY */
        unsigned max_parallel_per_user;
        /* a busy worker that does not run for this long is killed (WORKER_STALL_INFINITY: never) */
        uint64_t worker_stall_usec;
        /* all cores held in memory at once (uncompressed, zero pages left out) so that their
         * tasks go before their compression; UINT64_MAX = the default rule, 0 = never */
        uint64_t spool_max;
        /* per executable and per service: at most burst cores in interval (0 = no limit) */
        uint64_t rate_limit_interval_usec;
        unsigned rate_limit_burst;
        CaptureMode mode;
} Config;

/* Where a load looks, each list highest precedence first and ended early by NULL (systemd's
 * rules). The main file is the first of main_files that exists (/dev/null, or a symlink to it,
 * masks it and the ones after). The drop-ins are the *.conf files in dropin_dirs: a name in an
 * earlier directory hides that name in later ones, a /dev/null one masks it, and the survivors
 * are applied after the main file in lexical order of their names, whatever their directory. */
typedef struct ConfigSearch {
        const char *main_files[CONFIG_SEARCH_DIRS_MAX];
        const char *dropin_dirs[CONFIG_SEARCH_DIRS_MAX];
} ConfigSearch;

void config_init_defaults(Config *c);
/* The built-in CONFIG_FILE and CONFIG_DROPIN_DIR stand for the whole search (/etc, /run,
 * /usr/lib); any other path (--config=, --config-dir=) is searched alone; NULL searches nothing. */
void config_search_init(ConfigSearch *ret, const char *main_file, const char *dropin_dir);
/* Applies the files of the search on top of the defaults. Every problem is logged, with file:line
 * where there is one. Returns -EINVAL if any value was invalid, -E2BIG past CONFIG_DROPINS_MAX
 * drop-ins, another negative errno if a file or directory could not be read. On success,
 * ret_files (if not NULL) gets the paths applied, in order, NULL-terminated: free with
 * config_files_free(). */
int config_load_search(Config *c, const ConfigSearch *s, char ***ret_files);
/* config_load_search() of config_search_init(main_file, dropin_dir). */
int config_load(Config *c, const char *main_file, const char *dropin_dir);
void config_files_free(char **files);
static inline void config_files_freep(char ***files) {
        config_files_free(*files);
}
/* Parses one "key=value" line of the [Coredump] section (exported for tests). "Key=" with
 * nothing after the '=' puts the key back to its built-in default. */
int config_parse_line(Config *c, const char *file, unsigned line, char *text, bool *in_section);
/* The name of the i-th key, NULL past the last (for tests that cover every key). */
const char *config_key_name(size_t i);

/* SpoolMax= in effect on a machine with this much physical memory (bytes). */
uint64_t config_spool_max(const Config *c, uint64_t physical);
/* MaxParallelPerUser= in effect: the value set, or the default rule; UINT_MAX for no cap. */
unsigned config_max_parallel_per_user(const Config *c);

const char *storage_to_string(Storage s);
const char *mode_to_string(CaptureMode m);
const char *compression_to_string(Compression c);
/* File name suffix for stored cores: ".zst", ".lz4" or "". */
const char *compression_suffix(Compression c);
