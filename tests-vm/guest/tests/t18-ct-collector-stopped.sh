# (d) The container asks, but its collector is stopped: the host records the crash within its
# deadline, keeps the core, and says why it is not in the container; the container is asked
# again once its collector is back.
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
[ "$(host_entry $N "$pid" | field COREDUMP_FORWARD_ERROR)" = "the container has no collector listening on /run/systemd/coredump" ] ||
        fail "the host's entry does not say why"
host_entry $N "$pid" | grep -q '^COREDUMP_FILENAME=' || fail "the host did not keep the core"
ct_exec $N systemctl start systemd-coredump.socket
ct_stop $N
