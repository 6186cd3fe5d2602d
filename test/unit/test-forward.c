/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of forwarding into a container: the unit path of a cgroup, the fields in the
 * container's terms, systemd's datagram protocol over a socketpair (cut fields, descriptors,
 * what a receiver refuses). Touches only its own socketpairs and pipes. */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "fd-util.h"
#include "forward-proto.h"
#include "forward.h"
#include "tests.h"

static void test_unit_path(void) {
        char buf[256];

        CHECK_EQ(cgroup_unit_path("/machine.slice/systemd-nspawn@ct.service/payload", buf, sizeof buf), 0);
        CHECK_STREQ(buf, "/machine.slice/systemd-nspawn@ct.service");
        CHECK_EQ(cgroup_unit_path("/machine.slice/libpod-abc.scope/container", buf, sizeof buf), 0);
        CHECK_STREQ(buf, "/machine.slice/libpod-abc.scope");
        CHECK_EQ(cgroup_unit_path("/a.slice/a-b.slice/x.service", buf, sizeof buf), 0);
        CHECK_STREQ(buf, "/a.slice/a-b.slice/x.service");
        CHECK_EQ(cgroup_unit_path("/machine.slice", buf, sizeof buf), -ENXIO); /* only slices */
        CHECK_EQ(cgroup_unit_path("/", buf, sizeof buf), -ENXIO);
        CHECK_EQ(cgroup_unit_path("/machine.slice/lxc.payload.c1", buf, sizeof buf), -ENXIO); /* not a unit */
        CHECK_EQ(cgroup_unit_path("/machine.slice/systemd-nspawn@ct.service", buf, 8), -ENOBUFS);
}

static const char *value(const Record *r, const char *name, char *buf, size_t size) {
        RecordField f;

        if (!record_find(r->buf, r->len, name, &f))
                return NULL;
        snprintf(buf, size, "%.*s", (int) f.value_len, (const char *) f.value);
        return buf;
}

static void test_fields(void) {
        ForwardTarget t = { .pid = 12, .uid = 0, .gid = 0,
                            .cgroup_root = "/machine.slice/systemd-nspawn@ct.service/payload" };
        Record host = {}, out = {};
        char b[256];

        CHECK_EQ(record_add_str(&host, "COREDUMP_PID", "4242"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_UID", "100000"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_GID", "100000"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_TIMESTAMP", "1796421570741767"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_HOSTNAME", "the-host"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_PROC_STATUS", "Pid:\t4242\n"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_BY_PIDFD", "1"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_COMM", "crasher"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_CGROUP",
                                "/machine.slice/systemd-nspawn@ct.service/payload/system.slice/crash.service"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_UNIT", "systemd-nspawn@ct.service"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_CONTAINER_CMDLINE", "systemd-nspawn -D /srv/ct"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_OPEN_FDS", "0:/srv/ct/dev/null\n"), 0);
        CHECK_EQ(record_add_str(&host, "COREDUMP_PROC_CGROUP", "0::/machine.slice/..."), 0);
        CHECK_EQ(record_add_str(&host, "_CDS_TASK_COMM", "4242 crasher"), 0);

        CHECK_EQ(forward_fields(host.buf, host.len, &t, 11, "ct", true, &out), 0);
        CHECK_STREQ(value(&out, "COREDUMP_HOSTNAME", b, sizeof b), "ct");
        CHECK(!value(&out, "COREDUMP_PROC_STATUS", b, sizeof b));
        CHECK_STREQ(value(&out, "COREDUMP_PID", b, sizeof b), "12");
        CHECK_STREQ(value(&out, "COREDUMP_UID", b, sizeof b), "0");
        CHECK_STREQ(value(&out, "COREDUMP_GID", b, sizeof b), "0");
        CHECK_STREQ(value(&out, "COREDUMP_BY_PIDFD", b, sizeof b), "1");
        CHECK_STREQ(value(&out, "COREDUMP_SIGNAL", b, sizeof b), "11");
        CHECK_STREQ(value(&out, "COREDUMP_SIGNAL_NAME", b, sizeof b), "SIGSEGV");
        CHECK_STREQ(value(&out, "COREDUMP_CGROUP", b, sizeof b), "/system.slice/crash.service");
        CHECK_STREQ(value(&out, "COREDUMP_UNIT", b, sizeof b), "crash.service");
        CHECK_STREQ(value(&out, "COREDUMP_SLICE", b, sizeof b), "system.slice");
        CHECK_STREQ(value(&out, "COREDUMP_RLIMIT", b, sizeof b), "18446744073709551615"); /* required: none known */
        CHECK_STREQ(value(&out, "COREDUMP_FORWARDED", b, sizeof b), "1");
        CHECK_STREQ(value(&out, "MESSAGE_ID", b, sizeof b), "fc2e22bc6ee647b6b90729ab34a250b1");
        CHECK(!value(&out, "COREDUMP_CONTAINER_CMDLINE", b, sizeof b));
        CHECK(!value(&out, "COREDUMP_OPEN_FDS", b, sizeof b));
        CHECK(!value(&out, "COREDUMP_PROC_CGROUP", b, sizeof b));
        CHECK(!value(&out, "_CDS_TASK_COMM", b, sizeof b));
        record_free(&out);

        /* no pidfd: no claim of one; a cgroup outside the container's: no cgroup fields at all */
        snprintf(t.cgroup_root, sizeof t.cgroup_root, "/machine.slice/other.service/payload");
        CHECK_EQ(forward_fields(host.buf, host.len, &t, 0, NULL, false, &out), 0);
        CHECK_STREQ(value(&out, "COREDUMP_HOSTNAME", b, sizeof b), "");
        CHECK(!value(&out, "COREDUMP_BY_PIDFD", b, sizeof b));
        CHECK(!value(&out, "COREDUMP_CGROUP", b, sizeof b));
        CHECK(!value(&out, "COREDUMP_UNIT", b, sizeof b));
        CHECK_STREQ(value(&out, "COREDUMP_SIGNAL", b, sizeof b), "0");
        record_free(&out);
        record_free(&host);
}

static void test_protocol(void) {
        int sv[2], p[2];
        char big[300 << 10];
        ForwardItem it;

        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
        memset(big, 'x', sizeof big);
        CHECK_EQ(forward_send_field(sv[0], "COREDUMP_PID", 12, "12", 2), 0);
        /* larger than a datagram may be: halved until it fits, "..." marks the cut */
        CHECK_EQ(forward_send_field(sv[0], "COREDUMP_PROC_MAPS", 18, big, sizeof big), 0);
        CHECK_EQ(forward_send_fd(sv[0], p[0]), 0);
        safe_close(sv[0]);

        CHECK_EQ(forward_recv_item(sv[1], 0, &it), 0);
        CHECK(it.data && it.len == strlen("COREDUMP_PID=12") && memcmp(it.data, "COREDUMP_PID=12", it.len) == 0);
        free(it.data);
        CHECK_EQ(forward_recv_item(sv[1], 0, &it), 0);
        CHECK(it.data && it.len < sizeof big && it.len > 1024 && memcmp((char *) it.data + it.len - 3, "...", 3) == 0);
        free(it.data);
        CHECK_EQ(forward_recv_item(sv[1], 0, &it), 0);
        CHECK(!it.data && it.fd >= 0 && !it.end);
        safe_close(it.fd);
        CHECK_EQ(forward_recv_item(sv[1], 0, &it), 0);
        CHECK(it.end && it.fd < 0);
        safe_close(sv[1]);

        /* a field carrying a descriptor, or two descriptors at once: refused, both closed */
        CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        {
                int two[2] = { p[0], p[1] };
                union {
                        struct cmsghdr align;
                        char buf[CMSG_SPACE(sizeof two)];
                } control = {};
                struct iovec iov = { .iov_base = (void *) "A=1", .iov_len = 3 };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                                     .msg_controllen = CMSG_SPACE(sizeof(int)) };
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &p[0], sizeof(int));
                CHECK(sendmsg(sv[0], &mh, 0) == 3);
                iov.iov_len = 0;
                mh.msg_controllen = CMSG_SPACE(sizeof two);
                cm->cmsg_len = CMSG_LEN(sizeof two);
                memcpy(CMSG_DATA(cm), two, sizeof two);
                CHECK(sendmsg(sv[0], &mh, 0) == 0);
        }
        CHECK_EQ(forward_recv_item(sv[1], MSG_DONTWAIT, &it), -EBADMSG);
        CHECK_EQ(forward_recv_item(sv[1], MSG_DONTWAIT, &it), -EBADMSG);
        CHECK_EQ(forward_recv_item(sv[1], MSG_DONTWAIT, &it), -EAGAIN);
        safe_close(sv[0]);
        safe_close(sv[1]);
        safe_close(p[0]);
        safe_close(p[1]);
}

int main(void) {
        test_unit_path();
        test_fields();
        test_protocol();
        TESTS_DONE();
}
