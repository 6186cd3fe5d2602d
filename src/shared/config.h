/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
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
#define CONFIG_DROPINS_MAX 128
#define USER_NAME_MAX 32
#define RATE_LIMIT_BURST_MAX 100000U
#define RATE_LIMIT_INTERVAL_MAX_USEC (7 * 24 * 3600 * USEC_PER_SEC)
#define MAX_AGE_MAX_USEC (UINT64_C(100) * 365 * 24 * 3600 * USEC_PER_SEC)

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
        /* per executable and per service: at most burst cores in interval (0 = no limit) */
        uint64_t rate_limit_interval_usec;
        unsigned rate_limit_burst;
        CaptureMode mode;
} Config;

void config_init_defaults(Config *c);
/* Loads main file (missing is fine) and drop-in dir (*.conf, sorted) on top of defaults.
 * Every problem is logged with file:line; returns -EINVAL if any value was invalid. */
int config_load(Config *c, const char *main_file, const char *dropin_dir);
/* Parses one "key=value" line of the [Coredump] section (exported for tests). */
int config_parse_line(Config *c, const char *file, unsigned line, char *text, bool *in_section);

const char *storage_to_string(Storage s);
const char *mode_to_string(CaptureMode m);
const char *compression_to_string(Compression c);
/* File name suffix for stored cores: ".zst", ".lz4" or "". */
const char *compression_suffix(Compression c);
