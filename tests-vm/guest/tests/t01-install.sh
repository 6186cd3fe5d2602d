# `apt install ./coredump-socket_*.deb` over Debian's systemd-coredump, as users meet the
# package: the conflict on core-dump-handler removes systemd-coredump, the socket is enabled and
# started, core_pattern registered, the kernel's values before the installation saved, and a
# crash right after the installation is stored.
. /usr/local/lib/cds-vmtest/tests/lib.sh
prev=$(cat /proc/sys/kernel/core_pattern)
prev_limit=$(cat /proc/sys/kernel/core_pipe_limit)
echo "before: core_pattern '$prev', core_pipe_limit $prev_limit"
installed systemd-coredump || fail "systemd-coredump is not installed to begin with"
case "$prev" in
"|/lib/systemd/systemd-coredump "*) ;;
*) fail "systemd-coredump's pattern was not in place before the installation" ;;
esac
# a crash stored by systemd-coredump before: our coredumpctl lists it afterwards
old_pid=$(crash segv)
retry coredumpctl --no-pager -q list $old_pid || fail "systemd-coredump did not record PID $old_pid"
# what would be on disk after a purge if nothing were left behind (t14 compares)
snapshot > $STATE/files-before
apt_get install "$(deb)" || fail "apt-get install failed"
installed coredump-socket || fail "coredump-socket is not installed"
installed systemd-coredump && fail "systemd-coredump is still installed beside it"
pat=$(cat /proc/sys/kernel/core_pattern)
echo "after: core_pattern '$pat', core_pipe_limit $(cat /proc/sys/kernel/core_pipe_limit)"
[ "$pat" = "$(expected_pattern)" ] || fail "core_pattern is '$pat'"
systemctl is-active coredump-socket.socket || fail "socket not active"
systemctl is-enabled coredump-socket.socket || fail "socket not enabled"
getent passwd coredump-socket || fail "no worker user"
[ "$(cat /proc/sys/fs/suid_dumpable)" = 2 ] || fail "fs.suid_dumpable is $(cat /proc/sys/fs/suid_dumpable), not 2"
# systemd-coredump's prerm gave the kernel back 'core' before our preinst looked; its
# core_pipe_limit stayed
saved=$(cat $SAVED/core_pattern)
saved_limit=$(cat $SAVED/core_pipe_limit)
echo "saved: core_pattern '$saved', core_pipe_limit $saved_limit"
[ "$saved" = core ] || fail "saved core_pattern '$saved'"
[ "$saved_limit" = "$prev_limit" ] || fail "saved core_pipe_limit $saved_limit, was $prev_limit"
printf '%s\n' "$saved" > $STATE/saved_pattern
printf '%s\n' "$saved_limit" > $STATE/saved_limit
# a process still under Debian's soft core limit of 0 (a shell from before the install): listed,
# no core, the record says why
pid=$(ulimit -c 0; crash segv)
wait_listed $pid || fail "a crash under RLIMIT_CORE=0 after the installation was not recorded"
$CTL info $pid | grep "RLIMIT_CORE=0" || fail "the record of PID $pid does not say why it has no core"
pid=$(crash segv)
wait_listed $pid || fail "the first crash after the installation was not recorded"
$CTL list $pid
$CTL list $pid | grep -q " present " || fail "core not present"
$CTL list $old_pid | grep -q " present " || fail "systemd-coredump's earlier crash is not listed with its core"
$CTL list $old_pid
