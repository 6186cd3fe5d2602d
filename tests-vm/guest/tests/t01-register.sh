# systemctl enable --now coredump-socket.socket registers the socket in core_pattern.
. /usr/local/lib/cds-vmtest/tests/lib.sh
prev=$(cat /proc/sys/kernel/core_pattern)
echo "core_pattern before: $prev"
printf '%s\n' "$prev" > $STATE/prev_pattern
systemctl enable --now coredump-socket.socket || fail "systemctl enable --now failed"
pat=$(cat /proc/sys/kernel/core_pattern)
echo "core_pattern after: $pat"
[ "$pat" = "$(expected_pattern)" ] || fail "core_pattern is '$pat'"
systemctl is-active coredump-socket.socket || fail "socket not active"
systemctl is-enabled coredump-socket.socket || fail "socket not enabled"
