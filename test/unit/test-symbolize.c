/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl's re-symbolization: the parsers of the worker's frame and module lines (pure), and
 * that a message without modules to look up stays as stored. Memory only. */
#include <stdlib.h>
#include <string.h>

#include "ctl-symbolize.h"
#include "tests.h"

static bool frame(const char *line, SymFrame *f) {
        return symbolize_parse_frame(line, strlen(line), f);
}

static void check_span(const char *line, size_t off, size_t len, const char *want) {
        CHECK(len == strlen(want) && memcmp(line + off, want, len) == 0);
}

static void test_frames(void) {
        const char *l0 = "#0  0x000055d87eff6155 n/a (dbgi-crash + 0x1155)";
        const char *l12 = "#12 0x00007f748b211305 __libc_start_main (libc.so.6 + 0x27305)";
        const char *odd = "#3  0x0000000000001000 f (my (odd) + 0x mod + 0xff)";
        SymFrame f;

        CHECK(frame(l0, &f));
        CHECK_EQ(f.index, 0);
        check_span(l0, f.name_off, f.name_len, "n/a");
        check_span(l0, f.module_off, f.module_len, "dbgi-crash");
        CHECK_EQ(f.offset, 0x1155);
        CHECK(frame(l12, &f));
        CHECK_EQ(f.index, 12);
        check_span(l12, f.name_off, f.name_len, "__libc_start_main");
        check_span(l12, f.module_off, f.module_len, "libc.so.6");
        CHECK_EQ(f.offset, 0x27305);
        /* the name ends at the first space, the module at the last " + 0x" */
        CHECK(frame(odd, &f));
        check_span(odd, f.name_off, f.name_len, "f");
        check_span(odd, f.module_off, f.module_len, "my (odd) + 0x mod");
        CHECK_EQ(f.offset, 0xff);
        CHECK(frame("#0  0xffffffffffffffff x (m + 0xffffffffffffffff)", &f) && f.offset == UINT64_MAX);

        CHECK(!frame("", &f));
        CHECK(!frame("#", &f));
        CHECK(!frame("Stack trace of thread 1:", &f));
        CHECK(!frame("#0  0x000055d87eff6155 n/a (dbgi-crash + 0x1155", &f));     /* no ")" */
        CHECK(!frame("#0  0x000055d87eff6155 (dbgi-crash + 0x1155)", &f));        /* no name */
        CHECK(!frame("#0  0x000055d87eff6155 n/a ( + 0x1155)", &f));              /* no module */
        CHECK(!frame("#0  0x000055d87eff6155 n/a (m + 0x)", &f));                 /* no offset */
        CHECK(!frame("#0  0x000055d87eff6155 n/a (m + 0x11g5)", &f));             /* not hex */
        CHECK(!frame("#0  0x000055d87eff6155 n/a (m + 0x10000000000000000)", &f)); /* > 64 bits */
        CHECK(!frame("#0  0x00000000000000000 n/a (m + 0x1)", &f));               /* address > 64 bits */
        CHECK(!frame("#x  0x0000000000000000 n/a (m + 0x1)", &f));
        CHECK(!frame("#1234567890 0x0000000000000000 n/a (m + 0x1)", &f)); /* too many digits */
        CHECK(!frame("#0 0000000000000000 n/a (m + 0x1)", &f));
        CHECK(!frame("#0  0x0000000000000000n/a (m + 0x1)", &f));
        CHECK(!frame(" #0  0x0000000000000000 n/a (m + 0x1)", &f));
        CHECK(!frame("#0  0x0000000000000000 a b (m + 0x1)", &f));
}

static bool module(const char *line, SymModuleLine *m) {
        return symbolize_parse_module(line, strlen(line), m);
}

static void test_modules(void) {
        const char *l = "Module /usr/lib/libc.so.6 with build-id 93ac61ec5a8eb1396f9fbd350e3169a558528a40";
        const char *spaced = "Module /opt/a with build-id b/x with build-id 00ff";
        char long_id[sizeof "Module /x with build-id " + 2 * SYMBOLIZE_BUILD_ID_MAX + 2];
        SymModuleLine m;

        CHECK(module(l, &m));
        check_span(l, m.path_off, m.path_len, "/usr/lib/libc.so.6");
        check_span(l, m.id_off, m.id_len, "93ac61ec5a8eb1396f9fbd350e3169a558528a40");
        CHECK(module(spaced, &m));
        check_span(spaced, m.path_off, m.path_len, "/opt/a with build-id b/x");
        check_span(spaced, m.id_off, m.id_len, "00ff");

        CHECK(!module("Module /usr/lib/x.so from deb x-1.0", &m));
        CHECK(!module("Module /usr/lib/x.so without build-id.", &m));
        CHECK(!module("Module x.so with build-id 00ff", &m)); /* not a path */
        CHECK(!module("Module /x with build-id 0ff", &m));    /* odd length */
        CHECK(!module("Module /x with build-id 00FF", &m));   /* the worker prints lower case */
        CHECK(!module("Module /x with build-id ", &m));
        CHECK(!module("Module /x with build-id 00ff ", &m));
        CHECK(!module("Process 1 (x) of user 0 dumped core.", &m));
        snprintf(long_id, sizeof long_id, "Module /x with build-id %0*d", (int) (2 * SYMBOLIZE_BUILD_ID_MAX), 0);
        CHECK(module(long_id, &m));
        snprintf(long_id, sizeof long_id, "Module /x with build-id %0*d", (int) (2 * SYMBOLIZE_BUILD_ID_MAX + 2), 0);
        CHECK(!module(long_id, &m));
}

/* Nothing to look up: the stored message stands, and the note says why (no server is asked). */
static void test_nothing_to_look_up(void) {
        static const char message[] = "Process 1 (x) of user 0 dumped core.\n\nModule /x without build-id.\n\n"
                                      "Stack trace of thread 1:\n#0  0x0000000000401000 n/a (x + 0x1000)\n";
        char note[SYMBOLIZE_NOTE_MAX] = "";
        char *text = (char *) "unset";
        int r;

        r = symbolize_message(message, NULL, NULL, &text, note, sizeof note);
        CHECK(r == 0 || r == -EOPNOTSUPP);
        CHECK(text == NULL);
        CHECK(note[0] != 0);
        /* a package JSON that is not valid adds no module */
        r = symbolize_message(message, "{\"/x\":", NULL, &text, note, sizeof note);
        CHECK((r == 0 || r == -EOPNOTSUPP) && text == NULL);
}

int main(void) {
        test_frames();
        test_modules();
        test_nothing_to_look_up();
        TESTS_DONE();
}
