/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 against FIPS 180-4's vectors, and COREDUMP_SIGNATURE's definition: the same crash at
 * other addresses gives the same value, a different crash another. Pure: no I/O. */
#include <stdio.h>
#include <string.h>

#include "crash-signature.h"
#include "macro.h"
#include "sha256.h"
#include "tests.h"

static void hex_digest(const void *data, size_t len, size_t chunk, char out[2 * SHA256_DIGEST_SIZE + 1]) {
        uint8_t d[SHA256_DIGEST_SIZE];
        Sha256 s;

        sha256_init(&s);
        for (size_t o = 0; o < len; o += chunk)
                sha256_update(&s, (const char *) data + o, MIN(chunk, len - o));
        sha256_final(&s, d);
        for (size_t i = 0; i < sizeof d; i++)
                sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256(void) {
        static char thousand[1000];
        char out[2 * SHA256_DIGEST_SIZE + 1];
        const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

        hex_digest("abc", 3, 3, out);
        CHECK_STREQ(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        hex_digest(two_blocks, strlen(two_blocks), 7, out);
        CHECK_STREQ(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        memset(thousand, 'a', sizeof thousand);
        hex_digest(thousand, sizeof thousand, 64, out);
        CHECK_STREQ(out, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
        hex_digest("", 0, 1, out);
        CHECK_STREQ(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

#define ID1 "1111111111111111111111111111111111111111"
#define ID2 "2222222222222222222222222222222222222222"

/* One crash as the worker writes it; base is where ASLR put the program. */
static void trace(char *buf, size_t size, const char *base, unsigned long long frame2_off, const char *extra) {
        snprintf(buf, size,
                 "Process 42 (crasher) of user 0 dumped core.\n\n"
                 "Module /usr/bin/crasher with build-id " ID1 "\n"
                 "Module /usr/lib/x86_64-linux-gnu/libc.so.6 from deb glibc-2.36\n"
                 "Module /opt/lib/libnoid.so without build-id.\n"
                 "\n"
                 "Stack trace of thread 42:\n"
                 "#0  0x%s1139 inner (crasher + 0x1139)\n"
                 "#1  0x%s1150 n/a (crasher + 0x1150)\n"
                 "#2  0x00007f3a%llx __libc_start_call_main (libc.so.6 + 0x%llx)\n"
                 "#3  0x0000000000000000 n/a (n/a + 0x0)\n"
                 "#4  0x00007f00aa000042 weird(int) (x) (libnoid.so + 0x42)\n"
                 "#5  0x%s9999 %s (crasher + 0x9999)\n"
                 "\n"
                 "Stack trace of thread 43:\n"
                 "#0  0x00007f0000001234 n/a (libc.so.6 + 0x1234)\n",
                 base, base, 0x1000000ULL + frame2_off, frame2_off, base, extra);
}

static const char *json = "{\"/usr/bin/crasher\":{\"buildId\":\"" ID1 "\"},"
                          "\"/usr/lib/x86_64-linux-gnu/libc.so.6\":{\"buildId\":\"" ID2 "\",\"type\":\"deb\"}}";

static void test_signature(void) {
        char buf[4096], a[CRASH_SIGNATURE_SIZE], b[CRASH_SIGNATURE_SIZE];

        /* pinned: the definition in coredumpd(8), hashed by another implementation (Python's
         * hashlib) over the canonical text */
        trace(buf, sizeof buf, "000055d0c0de", 0x2724a, "main");
        CHECK_EQ(crash_signature(buf, json, "/usr/bin/crasher", 11, a), 0);
        CHECK_STREQ(a, "18d5b7e27099bb18097030dd9b56e84c");

        /* another address layout, another PID, a sixth frame that differs: the same crash */
        trace(buf, sizeof buf, "0000563412ab", 0x2724a, "other_caller");
        CHECK_EQ(crash_signature(buf, json, "/usr/bin/crasher", 11, b), 0);
        CHECK_STREQ(a, b);
        /* the executable named by its path inside a container: matched by file name */
        CHECK_EQ(crash_signature(buf, json, "/var/lib/machines/ct/usr/bin/crasher", 11, b), 0);
        CHECK_STREQ(a, b);

        /* another signal, another offset, another libc build: another signature */
        CHECK_EQ(crash_signature(buf, json, "/usr/bin/crasher", 6, b), 0);
        CHECK(strcmp(a, b) != 0);
        trace(buf, sizeof buf, "000055d0c0de", 0x2724b, "main");
        CHECK_EQ(crash_signature(buf, json, "/usr/bin/crasher", 11, b), 0);
        CHECK(strcmp(a, b) != 0);
        trace(buf, sizeof buf, "000055d0c0de", 0x2724a, "main");
        CHECK_EQ(crash_signature(buf, "{\"/usr/lib/x86_64-linux-gnu/libc.so.6\":{\"buildId\":\"" ID1 "\"}}",
                                 "/usr/bin/crasher", 11, b), 0);
        CHECK(strcmp(a, b) != 0);
        /* without the package JSON libc is known by its file name only */
        CHECK_EQ(crash_signature(buf, NULL, "/usr/bin/crasher", 11, b), 0);
        CHECK(strcmp(a, b) != 0);

        /* systemd-coredump's JSON: buildId after the package's fields, the key escaped as JSON
         * escapes it; the same module, the same value */
        CHECK_EQ(crash_signature(buf, "{\"/usr/bin/crasher\":{\"type\":\"deb\",\"buildId\":\"" ID1 "\"},"
                                      "\"\\/usr\\/lib\\/x86_64-linux-gnu\\/libc.so.6\":{\"type\":\"deb\",\"name\":\"glibc\","
                                      "\"buildId\":\"" ID2 "\"}}",
                                 "/usr/bin/crasher", 11, b), 0);
        CHECK_STREQ(a, b);

        /* a name cannot add lines to the text hashed; the thread's header counts only at a
         * line's start */
        CHECK_EQ(crash_signature("Stack trace of thread 1:\n#0  0x1 f (a + 0x1)\n", NULL, "/x\nsignal 6", 11, a), 0);
        CHECK_EQ(crash_signature("Stack trace of thread 1:\n#0  0x1 f (a + 0x1)\n", NULL, "/x?signal 6", 11, b), 0);
        CHECK_STREQ(a, b);
        CHECK_EQ(crash_signature("Module /opt/Stack trace of thread 9:/x.so with build-id " ID1 "\n\n"
                                 "Stack trace of thread 1:\n#0  0x1 f (x.so + 0x1)\n", NULL, NULL, 11, a), 0);

        /* nothing to sign */
        CHECK_EQ(crash_signature("Stack trace of thread 1:\n\n", NULL, "/x", 11, b), -ENODATA);
        CHECK_EQ(crash_signature("No stack trace: the core was too large.", NULL, "/x", 11, b), -ENODATA);
        CHECK_EQ(crash_signature(NULL, NULL, NULL, 0, b), -ENODATA);
        /* hostile text: no crash, no overrun */
        CHECK_EQ(crash_signature("Stack trace of thread 1:\n#0 (\n#1  + 0x)\n#2 0x1 a (b + 0xzz)\n", NULL, NULL, 0, b),
                 -ENODATA);
        CHECK_EQ(crash_signature("Module \nModule  with build-id \nStack trace of thread 1:\n#0  0x1 f ( + 0x1)\n",
                                 NULL, "", 0, b), 0);
}

int main(void) {
        test_sha256();
        test_signature();
        TESTS_DONE();
}
