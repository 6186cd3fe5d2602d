/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredump.conf and its drop-ins: lines are cut at newlines (and at CONFIG_LINE_MAX, as the file
 * reader does) and parsed in order, section state carried over. */
#include <string.h>

#include "config.h"
#include "fuzz.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char line[CONFIG_LINE_MAX];
        bool in_section = false;
        unsigned n = 0;
        Config c;

        log_set_max_level(LOG_CRIT);
        config_init_defaults(&c);
        for (size_t o = 0; o < size;) {
                const uint8_t *nl = memchr(data + o, '\n', size - o);
                size_t len = nl ? (size_t) (nl - (data + o)) : size - o;
                size_t take = len < sizeof line - 1 ? len : sizeof line - 1;

                memcpy(line, data + o, take);
                line[take] = 0;
                (void) config_parse_line(&c, "fuzz.conf", ++n, line, &in_section);
                o += len + 1;
        }
        /* whatever was accepted must be within the bounds */
        if (c.spare_workers > SPARE_WORKERS_MAX || c.max_parallel < 1 || c.max_parallel > PARALLEL_CRASHES_MAX ||
            c.timeout_usec < CRASH_TIMEOUT_MIN_USEC || c.timeout_usec > CRASH_TIMEOUT_MAX_USEC ||
            c.rate_limit_burst > RATE_LIMIT_BURST_MAX || c.rate_limit_interval_usec > RATE_LIMIT_INTERVAL_MAX_USEC ||
            c.directory[0] != '/' || memchr(c.directory, 0, sizeof c.directory) == NULL)
                __builtin_trap();
        return 0;
}
