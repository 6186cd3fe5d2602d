# (d) The container asks, but its collector is stopped: the host records the crash within its
# deadline, keeps the core, and says why it is not in the container; the container is asked
# again once its collector is back (its next crash is forwarded and listed there).
. /usr/local/lib/cds-vmtest/tests/lib.sh
N=systemd
ct_start $N ct-systemd || fail "the container did not boot"
ct_receive $N 1
ct_exec $N systemctl stop systemd-coredump.socket || fail "cannot stop the container's collector"
t0=$(cut -d. -f1 /proc/uptime)
pid=$(ct_crash $N) || fail "the crash in the container did not happen"
took=$(( $(cut -d. -f1 /proc/uptime) - t0 ))
wait_host_entry $N "$pid" || fail "no entry on the host for container PID $pid"
host_entry $N "$pid" | sed 's/^/  host: /'
echo "the crashed task was released after ${took} s"
# no collector listening is known at once: the task is not held until ForwardTimeoutSec= (5 min)
[ "$took" -lt 60 ] || fail "the crashed task was held ${took} s with no collector listening"
[ "$(host_entry $N "$pid" | field COREDUMP_FORWARD_ERROR)" = "the container has no collector listening on /run/systemd/coredump" ] ||
        fail "the host's entry does not say why"
host_entry $N "$pid" | grep -q '^COREDUMP_FILENAME=' || fail "the host did not keep the core"
# the collector back: the next crash goes to the container again
ct_exec $N systemctl start systemd-coredump.socket || fail "cannot start the container's collector again"
retry ct_exec $N test -S /run/systemd/coredump || fail "the container's collector does not listen again"
pid2=$(ct_crash $N) || fail "the second crash in the container did not happen"
retry ct_exec $N coredumpctl --no-pager -q list "$pid2" || fail "the container's coredumpctl does not list PID $pid2"
wait_host_entry $N "$pid2" || fail "no entry on the host for container PID $pid2"
[ "$(host_entry $N "$pid2" | field COREDUMP_FORWARDED_TO)" = cds-ct-$N.service ] ||
        fail "the crash after the collector came back was not forwarded"
echo "collector back: container PID $pid2 forwarded and listed there"
ct_stop $N
