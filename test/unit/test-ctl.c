/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredumpctl's pure parts: the export reader, formatting as systemd prints it, timestamps,
 * the JSON scanner, matches, stack signatures, stored names, escaping for terminals, whether an
 * entry names its own crash's core. */
#include <stdlib.h>
#include <time.h>

#include "control-proto.h"
#include "coredump-name.h"
#include "ctl-corefile.h"
#include "ctl-escape.h"
#include "utf8-util.h"
#include "ctl-format.h"
#include "ctl-group.h"
#include "json.h"
#include "uid-class.h"
#include "ctl-match.h"
#include "ctl-source.h"
#include "ctl-time.h"
#include "export-format.h"
#include "tests.h"
#include "vacuum.h"

static void test_export(void) {
        static const uint8_t text[] = "A=1\nBIN\n\x03\0\0\0\0\0\0\0x\ny\n__REALTIME_TIMESTAMP=5\n\nB=2\n\n";
        size_t len = sizeof text - 1, pos = 0;
        RecordField f;

        CHECK_EQ(export_next_field(text, len, &pos, &f), 1);
        CHECK(f.name_len == 1 && f.value_len == 1 && f.value[0] == '1');
        CHECK_EQ(export_next_field(text, len, &pos, &f), 1);
        CHECK(f.name_len == 3 && f.value_len == 3 && memcmp(f.value, "x\ny", 3) == 0);
        CHECK_EQ(export_next_field(text, len, &pos, &f), 1);
        CHECK(f.name_len == 20);
        CHECK_EQ(export_next_field(text, len, &pos, &f), 0); /* end of the first entry */
        CHECK_EQ(export_next_field(text, len, &pos, &f), 1);
        CHECK_EQ(export_next_field(text, len, &pos, &f), 0);
        CHECK_EQ(export_next_field(text, len, &pos, &f), 0);
        CHECK_EQ(pos, len);

        /* every cut of it and every byte flipped: an error or a field inside the buffer */
        for (size_t cut = 0; cut < len; cut++)
                for (unsigned flip = 0; flip < 2; flip++) {
                        uint8_t *b = malloc(cut + 1);
                        int r;
                        memcpy(b, text, cut);
                        if (flip && cut > 0)
                                b[cut / 2] ^= 0xff;
                        pos = 0;
                        while ((r = export_next_field(b, cut, &pos, &f)) >= 0 && pos < cut)
                                CHECK(f.value + f.value_len <= b + cut || r == 0);
                        CHECK(pos <= cut);
                        free(b);
                }
        /* a length pointing past the end, a bad name */
        pos = 0;
        CHECK_EQ(export_next_field((const uint8_t *) "X\n\xff\xff\xff\xff\xff\xff\xff\xff\n", 11, &pos, &f), -EBADMSG);
        pos = 0;
        CHECK_EQ(export_next_field((const uint8_t *) "a b=1\n", 6, &pos, &f), -EBADMSG);
}

static void test_bytes(void) {
        char b[FORMAT_BYTES_MAX];

        /* as systemd's format_bytes() prints them */
        CHECK_STREQ(format_bytes(b, sizeof b, 0), "0B");
        CHECK_STREQ(format_bytes(b, sizeof b, 1023), "1023B");
        CHECK_STREQ(format_bytes(b, sizeof b, 1024), "1.0K");
        CHECK_STREQ(format_bytes(b, sizeof b, 1536), "1.5K");
        CHECK_STREQ(format_bytes(b, sizeof b, 209715200), "200.0M");
        CHECK_STREQ(format_bytes(b, sizeof b, 1073741823), "1023.9M");
        CHECK_STREQ(format_bytes(b, sizeof b, 5ull << 30), "5.0G");
        CHECK_STREQ(format_bytes(b, sizeof b, UINT64_MAX - 1), "15.9E");
}

static void test_relative(void) {
        const uint64_t s = USEC_PER_SEC, now = 1000000 * s;
        char b[FORMAT_TIMESTAMP_MAX];

        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now, now), "now");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now - 3 * s, now), "3s ago");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now - 90 * s, now), "1min 30s ago");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now - 600 * s, now), "10min ago");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now - 3700 * s, now), "1h 1min ago");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now - 26 * 3600 * s, now), "1 day 2h ago");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now - 9 * 86400 * s, now), "1 week 2 days ago");
        CHECK_STREQ(format_timestamp_relative(b, sizeof b, now + 5 * s, now), "5s left");
}

static void test_parse_timestamp(void) {
        uint64_t now = 1796301477ull * USEC_PER_SEC, t;

        setenv("TZ", "UTC", 1);
        tzset();
        CHECK(parse_timestamp_at("now", now, &t) == 0 && t == now);
        CHECK(parse_timestamp_at("@1000", now, &t) == 0 && t == 1000 * USEC_PER_SEC);
        CHECK(parse_timestamp_at("-1h", now, &t) == 0 && t == now - 3600 * USEC_PER_SEC);
        CHECK(parse_timestamp_at("2 days ago", now, &t) == 0 && t == now - 2 * 86400 * USEC_PER_SEC);
        CHECK(parse_timestamp_at("2026-12-03", now, &t) == 0 && t == 1796256000ull * USEC_PER_SEC);
        CHECK(parse_timestamp_at("2026-12-03 12:37:57", now, &t) == 0 && t == 1796301477ull * USEC_PER_SEC);
        CHECK(parse_timestamp_at("12:37", now, &t) == 0 && t == 1796301420ull * USEC_PER_SEC);
        CHECK(parse_timestamp_at("today", now, &t) == 0 && t == 1796256000ull * USEC_PER_SEC);
        CHECK(parse_timestamp_at("yesterday", now, &t) == 0 && t == (1796256000ull - 86400) * USEC_PER_SEC);
        CHECK(parse_timestamp_at("next tuesday", now, &t) < 0);
        CHECK(parse_timestamp_at("2026-13-45", now, &t) < 0);
        CHECK(parse_timestamp_at("@", now, &t) < 0);
        CHECK(parse_timestamp_at("", now, &t) < 0);
}

typedef struct Seen {
        char keys[4][64], values[4][64];
        unsigned n;
} Seen;

static void collect(const char *key, const char *value, void *userdata) {
        Seen *s = userdata;

        if (s->n < 4) {
                snprintf(s->keys[s->n], 64, "%s", key);
                snprintf(s->values[s->n], 64, "%s", value ?: "(null)");
                s->n++;
        }
}

static void test_json(void) {
        static const char good[] = "{\"/usr/bin/a\":{\"name\":\"x\",\"deps\":[1,{\"k\":null}],\"buildId\":\"ab12\"},"
                                   " \"/lib/b.so\" : {\"buildId\" : \"cd\\\"34\"}, \"c\":{}, \"d\":[true]}";
        static const char *bad[] = { "", "{", "{\"a\"}", "{\"a\":{\"buildId\":\"x}}", "[1]", "{\"a\":{}} x",
                                     "{\"a\":{\"b\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}}" };
        Seen s = {};

        CHECK_EQ(json_object_scan(good, strlen(good), "buildId", collect, &s), 0);
        CHECK_EQ(s.n, 4);
        CHECK_STREQ(s.keys[0], "/usr/bin/a");
        CHECK_STREQ(s.values[0], "ab12");
        CHECK_STREQ(s.values[1], "cd\"34");
        CHECK_STREQ(s.values[2], "(null)");
        CHECK_STREQ(s.keys[3], "d");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Seen t = {};
                CHECK_EQ(json_object_scan(bad[i], strlen(bad[i]), "buildId", collect, &t), -EBADMSG);
        }
}

/* json_print_string(in) must print exactly want. */
static void check_json_print(const char *in, const char *want) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        CHECK(f);
        if (!f)
                return;
        json_print_string(f, in);
        fclose(f);
        CHECK_STREQ(out, want);
        free(out);
}

/* Control characters never leave json_print_string raw: C0, DEL and C1 (U+0080..U+009F, which a
 * terminal takes for CSI and friends) are \\u escapes; other UTF-8 stays as it is. Format
 * characters are escapes too: a right-to-left override, a tag (a surrogate pair); an overlong
 * form is no UTF-8. */
static void test_json_print(void) {
        check_json_print("a\x1b[2J\xc2\x9b" "1m\x7f\xc3\xa9\t\"", "\"a\\u001b[2J\\u009b1m\\u007f\xc3\xa9\\t\\\"\"");
        check_json_print("x\xe2\x80\xae" "y\xf3\xa0\x81\x81\xc0\xaf", "\"x\\u202ey\\udb40\\udc41\\ufffd\\ufffd\"");
}

/* A person's uid: not a system user, nobody or a DynamicUser= uid (store.c and ctl-journal.c). */
static void test_uid_class(void) {
        CHECK(!uid_is_personal(0));
        CHECK(!uid_is_personal(999));
        CHECK(uid_is_personal(1000));
        CHECK(uid_is_personal(61183));
        CHECK(!uid_is_personal(61184));
        CHECK(!uid_is_personal(65519));
        CHECK(uid_is_personal(65520));
        CHECK(!uid_is_personal(65534));
        CHECK(uid_is_personal(65536));
        CHECK(!uid_is_personal((uid_t) -1));
}

static void test_matches(void) {
        char *args[] = { "COREDUMP_COMM=a", "COREDUMP_COMM=b", "42", "/usr/bin/x" };
        MatchSet m = {};
        Entry e = {};

        CHECK_EQ(match_set_parse(&m, args, 4), 0);
        CHECK_STREQ(m.items[2].field, "COREDUMP_PID");
        CHECK_STREQ(m.items[3].field, "COREDUMP_EXE");
        record_add_str(&e.fields, "COREDUMP_COMM", "b");
        record_add_str(&e.fields, "COREDUMP_PID", "42");
        CHECK(!match_set_test(&m, &e)); /* no COREDUMP_EXE */
        record_add_str(&e.fields, "COREDUMP_EXE", "/usr/bin/x");
        CHECK(match_set_test(&m, &e)); /* COMM a OR b, AND PID, AND EXE */
        match_set_free(&m);
        {
                char *word[] = { "sshd" }, *zero[] = { "0" }, *rel[] = { "bin/x" };
                CHECK_EQ(match_set_parse(&m, word, 1), 0);
                CHECK_STREQ(m.items[0].field, "COREDUMP_COMM");
                match_set_free(&m);
                CHECK_EQ(match_set_parse(&m, zero, 1), 0);
                CHECK_STREQ(m.items[0].field, "COREDUMP_COMM"); /* 0 is no PID */
                match_set_free(&m);
                CHECK_EQ(match_set_parse(&m, rel, 1), 0);
                CHECK(m.items[0].value[0] == '/');
                match_set_free(&m);
        }
        entry_free(&e);
}

static void test_signature(void) {
        char b[SIGNATURE_MAX];

        stack_signature("Process 1 (x) of user 0 dumped core.\n\nStack trace of thread 7:\n"
                        "#0  0x0000000000401000 inner (x + 0x1000)\n#1  0x0000000000401100 n/a (x + 0x1100)\n"
                        "#2  0x0000000000401200 middle (x + 0x1200)\n#3  0x0000000000401300 outer (x + 0x1300)\n"
                        "#4  0x0000000000401400 main (x + 0x1400)\n\nStack trace of thread 8:\n#0  0x1 other (x)\n",
                        b, sizeof b);
        CHECK_STREQ(b, "inner < middle < outer");
        stack_signature("Process 1 (x) of user 0 dumped core.", b, sizeof b);
        CHECK_STREQ(b, "");
        stack_signature(NULL, b, sizeof b);
        CHECK_STREQ(b, "");
        stack_signature("Stack trace of thread 1:\n#0 ", b, sizeof b);
        CHECK_STREQ(b, "");
}

static void test_names(void) {
        uid_t uid;
        uint64_t usec;

        CHECK_EQ(vacuum_parse_name("core.sshd.1000.0123456789abcdef0123456789abcdef.42.1796301477361187.zst", &uid, &usec), 0);
        CHECK(uid == 1000 && usec == 1796301477361187ull);
        CHECK_EQ(vacuum_parse_name("core.a\\x2eb.0.b.1.2", &uid, &usec), 0);
        CHECK(vacuum_parse_name("core.x.y.b.1.2", &uid, &usec) < 0);
        CHECK(vacuum_parse_name("record.x.0.b.1.2.export", &uid, &usec) < 0);
        CHECK(control_name_valid("core.sshd.0.b.1.2.zst"));
        CHECK(control_name_valid("record.sshd.0.b.1.2.export"));
        CHECK(!control_name_valid("core."));
        CHECK(!control_name_valid("../core.x"));
        CHECK(!control_name_valid("core.x/y"));
        CHECK(!control_name_valid("record.x"));
        CHECK(!control_name_valid("core.a b"));
        CHECK(!control_name_valid("other"));
}

static void check_escape(const char *in, EscapeFlags flags, const char *want) {
        char *got = escape_text(in, flags);

        CHECK(got);
        CHECK_STREQ(got, want);
        CHECK(escape_needed(in, flags) == (strcmp(in, want) != 0));
        free(got);
}

static void test_escape(void) {
        check_escape("/usr/bin/crasher", ESCAPE_DEFAULT, "/usr/bin/crasher");
        check_escape("a\\x1b b", ESCAPE_DEFAULT, "a\\x1b b"); /* backslashes stay: paths print as they are */
        check_escape("x\x1b[2Jy", ESCAPE_DEFAULT, "x\\x1b[2Jy");
        check_escape("\x1b]52;c;AAAA\x07", ESCAPE_DEFAULT, "\\x1b]52;c;AAAA\\x07");
        check_escape("del\x7f", ESCAPE_DEFAULT, "del\\x7f");
        check_escape("a\nb\tc\rd", ESCAPE_DEFAULT, "a\\x0ab\\x09c\\x0dd");
        check_escape("a\nb\tc\rd", ESCAPE_KEEP_LINES, "a\nb\tc\\x0dd");
        /* C1 CSI as UTF-8 (U+009B) and as a lone byte; valid UTF-8 stays */
        check_escape("\xc2\x9b" "2J", ESCAPE_DEFAULT, "\\xc2\\x9b2J");
        check_escape("\x9b" "2J", ESCAPE_DEFAULT, "\\x9b2J");
        check_escape("caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac \xf0\x9f\x98\x80", ESCAPE_DEFAULT,
                     "caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac \xf0\x9f\x98\x80");
        /* overlong, surrogate, cut short at the end */
        check_escape("\xc0\xaf", ESCAPE_DEFAULT, "\\xc0\\xaf");
        check_escape("\xed\xa0\x80", ESCAPE_DEFAULT, "\\xed\\xa0\\x80");
        check_escape("ab\xe2\x82", ESCAPE_DEFAULT, "ab\\xe2\\x82");
        check_escape("", ESCAPE_DEFAULT, "");
        /* format characters: a right-to-left override (U+202E) and isolate (U+2067), a zero width
         * space (U+200B), a byte order mark (U+FEFF), a soft hyphen (U+00AD), a line separator
         * (U+2028), a tag (U+E0041); the characters beside them (U+2010 hyphen, U+2070 superscript
         * zero, U+FEFE) stay */
        check_escape("a\xe2\x80\xae" "b", ESCAPE_DEFAULT, "a\\xe2\\x80\\xaeb");
        check_escape("\xe2\x81\xa7" "x\xe2\x80\x8b" "y", ESCAPE_DEFAULT, "\\xe2\\x81\\xa7x\\xe2\\x80\\x8by");
        check_escape("\xef\xbb\xbf\xc2\xad\xe2\x80\xa8", ESCAPE_KEEP_LINES,
                     "\\xef\\xbb\\xbf\\xc2\\xad\\xe2\\x80\\xa8");
        check_escape("\xf3\xa0\x81\x81", ESCAPE_DEFAULT, "\\xf3\\xa0\\x81\\x81");
        check_escape("\xe2\x80\x90\xe2\x81\xb0\xef\xbb\xbe", ESCAPE_DEFAULT, "\xe2\x80\x90\xe2\x81\xb0\xef\xbb\xbe");
}

/* Every format character of the table and none beside its ranges, against the code points python3's
 * unicodedata classifies as Cf, Zl or Zp (spot checks at each range's edges). */
static void test_format_chars(void) {
        static const uint32_t format[] = { 0xad, 0x600, 0x605, 0x61c, 0x200b, 0x200f, 0x2028, 0x202e,
                                           0x2066, 0x2069, 0x206f, 0xfeff, 0xfffb, 0x1343f, 0xe0001, 0xe007f };
        static const uint32_t other[] = { 0x20, 0xac, 0xae, 0x5ff, 0x606, 0x200a, 0x2010, 0x2027, 0x202f,
                                          0x2065, 0x2070, 0xfefe, 0xff00, 0xfffc, 0xe0000, 0xe0080, 0x10ffff };

        for (size_t i = 0; i < ELEMENTSOF(format); i++)
                CHECK(unichar_is_format(format[i]));
        for (size_t i = 0; i < ELEMENTSOF(other); i++)
                CHECK(!unichar_is_format(other[i]));
        CHECK_EQ(utf8_seq_len((const unsigned char *) "\xe2\x80\xae"), 3);
        CHECK(utf8_decode((const unsigned char *) "\xe2\x80\xae", 3) == 0x202e);
        CHECK(utf8_decode((const unsigned char *) "\xf3\xa0\x81\x81", 4) == 0xe0041);
        CHECK(utf8_decode((const unsigned char *) "\xc2\xad", 2) == 0xad);
}

static void test_name_parse(void) {
        CoredumpName n;

        CHECK_EQ(coredump_name_parse("core.sshd.1000.0123456789abcdef0123456789abcdef.42.1796301477361187.zst", &n), 0);
        CHECK(n.uid == 1000 && n.pid == 42 && n.usec == 1796301477361187ull);
        CHECK_STREQ(n.boot_id, "0123456789abcdef0123456789abcdef");
        CHECK_EQ(coredump_name_parse("core.a\\x2eb.0.0123456789abcdef0123456789abcdef.1.2", &n), 0);
        CHECK(n.uid == 0);
        CHECK(coredump_name_parse("core.x.0.0123456789abcdef0123456789abcdef.1.2.gz", &n) < 0);
        CHECK(coredump_name_parse("core.x.0.0123456789abcdef0123456789abcdef.1.2.zst.x", &n) < 0);
        CHECK(coredump_name_parse("core.x.0.0123456789ABCDEF0123456789abcdef.1.2", &n) < 0);
        CHECK(coredump_name_parse("core.x.0.0123456789abcdef.1.2", &n) < 0);
        CHECK(coredump_name_parse("core..0.0123456789abcdef0123456789abcdef.1.2", &n) < 0);
        CHECK(coredump_name_parse("core.x.-1.0123456789abcdef0123456789abcdef.1.2", &n) < 0);
        CHECK(coredump_name_parse("core.x.4294967295.0123456789abcdef0123456789abcdef.1.2", &n) < 0);
        CHECK(coredump_name_parse("core.x.0.0123456789abcdef0123456789abcdef.1.", &n) < 0);
        CHECK(coredump_name_parse("record.x.0.0123456789abcdef0123456789abcdef.1.2.export", &n) < 0);
        CHECK(coredump_name_parse("core.precious", &n) < 0);
}

/* An entry with these fields (export text), indexed as the sources do. */
static void entry_of(Entry *e, const char *fields) {
        *e = (Entry) {};
        CHECK_EQ(entry_from_export(e, (const uint8_t *) fields, strlen(fields), COLLECT_FULL, NULL), 0);
        entry_index(e);
}

static void test_corefile_of_entry(void) {
        static const char *const core = "/var/lib/coredump-socket/core.crasher.1001.0123456789abcdef0123456789abcdef.77.5000.zst";
        Entry e;

        entry_of(&e, "MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1\nCOREDUMP_PID=77\nCOREDUMP_UID=1001\n"
                     "COREDUMP_TIMESTAMP=5000\n_BOOT_ID=0123456789abcdef0123456789abcdef\n");
        CHECK(corefile_of_entry(&e, core));
        CHECK(!corefile_of_entry(&e, "/var/lib/coredump-socket/core.crasher.0.0123456789abcdef0123456789abcdef.77.5000.zst"));
        CHECK(!corefile_of_entry(&e, "/var/lib/coredump-socket/core.crasher.1001.0123456789abcdef0123456789abcdef.78.5000.zst"));
        CHECK(!corefile_of_entry(&e, "/var/lib/coredump-socket/core.crasher.1001.0123456789abcdef0123456789abcdef.77.5001.zst"));
        CHECK(!corefile_of_entry(&e, "/var/lib/coredump-socket/core.crasher.1001.ffffffffffffffffffffffffffffffff.77.5000.zst"));
        CHECK(!corefile_of_entry(&e, "/var/lib/coredump-socket/record.crasher.1001.0123456789abcdef0123456789abcdef.77.5000.export"));
        CHECK(!corefile_of_entry(&e, "/etc/shadow"));
        entry_free(&e);
        /* an entry without COREDUMP_UID names no core of its own */
        entry_of(&e, "MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1\nCOREDUMP_PID=77\nCOREDUMP_TIMESTAMP=5000\n");
        CHECK(!corefile_of_entry(&e, core));
        entry_free(&e);
}

int main(void) {
        test_export();
        test_bytes();
        test_relative();
        test_parse_timestamp();
        test_json();
        test_json_print();
        test_uid_class();
        test_matches();
        test_signature();
        test_names();
        test_escape();
        test_format_chars();
        test_name_parse();
        test_corefile_of_entry();
        TESTS_DONE();
}
