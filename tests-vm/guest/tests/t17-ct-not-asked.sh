# (c) The same container without CoredumpReceive=: the host records the crash with its core, the
# container's collector sees nothing.
. /usr/local/lib/cds-vmtest/tests/lib.sh
N=systemd
ct_start $N ct-systemd || fail "the container did not boot"
ct_receive $N 0
# the container's own coredumpctl, which must run: it exits 1 with nothing to list, and that is
# the only failure taken as "none"
ct_count() {
        out=$(ct_exec $N coredumpctl --no-pager -q --no-legend list 2>/tmp/t17.err)
        rc=$?
        [ $rc = 0 ] || { [ $rc = 1 ] && [ -z "$out" ]; } ||
                { echo "coredumpctl in the container: exit $rc: $out $(cat /tmp/t17.err)" >&2; return 1; }
        [ -z "$out" ] && echo 0 || echo "$out" | wc -l
}
before=$(ct_count) || fail "coredumpctl does not run in the container"
pid=$(ct_crash $N) || fail "the crash in the container did not happen"
wait_host_entry $N "$pid" || fail "no entry on the host for container PID $pid"
host_entry $N "$pid" | sed 's/^/  host: /'
host_entry $N "$pid" | grep -q '^COREDUMP_FILENAME=' || fail "the host has no core"
# the host writes its entry once a forward has ended: this one says none was tried, and the
# container's list has nothing new
host_entry $N "$pid" | grep -q '^COREDUMP_FORWARD' && fail "the host tried to forward it"
after=$(ct_count) || fail "coredumpctl does not run in the container"
echo "the container's coredumpctl lists $before crashes before, $after after"
[ "$after" = "$before" ] || fail "the container got a crash it did not ask for"
