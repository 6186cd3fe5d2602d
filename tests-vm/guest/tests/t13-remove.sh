# `apt remove` after a reboot: core_pattern and core_pipe_limit return to the values saved
# before the installation (the pipe limit differs from this boot's, so the saved file is what
# is restored); the stored cores stay. Then systemd-coredump, installed again, takes
# core_pattern and stores a crash.
. /usr/local/lib/cds-vmtest/tests/lib.sh
[ "$(cat /proc/sys/kernel/core_pattern)" = "$(expected_pattern)" ] || fail "not registered before the removal"
dpkg -L coredump-socket > $STATE/dpkg-L
cores_before=$(ls /var/lib/coredump-socket | grep -c '^core\.')
echo "before: core_pipe_limit $(cat /proc/sys/kernel/core_pipe_limit), $cores_before cores stored"
[ "$(cat $SAVED/core_pattern)" = "$(cat $STATE/saved_pattern)" ] || fail "the saved pattern changed since the installation"
apt_get remove coredump-socket || fail "apt-get remove failed"
installed coredump-socket && fail "still installed"
pat=$(cat /proc/sys/kernel/core_pattern)
limit=$(cat /proc/sys/kernel/core_pipe_limit)
echo "after: core_pattern '$pat', core_pipe_limit $limit"
[ "$pat" = "$(cat $STATE/saved_pattern)" ] || fail "core_pattern '$pat', saved '$(cat $STATE/saved_pattern)'"
[ "$limit" = "$(cat $STATE/saved_limit)" ] || fail "core_pipe_limit $limit, saved $(cat $STATE/saved_limit)"
systemctl is-active -q coredump-socket.socket && fail "the socket is still active"
systemctl is-active -q coredump-socket.service && fail "the service is still active"
[ ! -e $SAVED ] || fail "$SAVED is left after the removal"
cores_after=$(ls /var/lib/coredump-socket | grep -c '^core\.')
[ "$cores_after" = "$cores_before" ] || fail "remove deleted cores: $cores_before before, $cores_after after"
# another core-dump-handler installed afterwards wins
apt_get install $D/debs/systemd/systemd-coredump_*.deb || fail "systemd-coredump does not install again"
pat=$(cat /proc/sys/kernel/core_pattern)
echo "systemd-coredump: core_pattern '$pat'"
case "$pat" in
"|/lib/systemd/systemd-coredump "*) ;;
*) fail "systemd-coredump's pattern did not win" ;;
esac
pid=$(crash segv)
retry coredumpctl --no-pager -q list $pid || fail "systemd-coredump did not record PID $pid"
coredumpctl --no-pager list $pid
coredumpctl --no-pager list $pid | grep -q " present " || fail "systemd-coredump stored no core"
