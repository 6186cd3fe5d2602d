# systemctl stop coredump-socket.socket restores the previous core_pattern.
. /usr/local/lib/cds-vmtest/tests/lib.sh
systemctl stop coredump-socket.socket coredump-socket.service || fail "stop failed"
pat=$(cat /proc/sys/kernel/core_pattern)
prev=$(cat $STATE/prev_pattern)
echo "core_pattern after stop: $pat"
[ "$pat" = "$prev" ] || fail "core_pattern is '$pat', expected the previous '$prev'"
