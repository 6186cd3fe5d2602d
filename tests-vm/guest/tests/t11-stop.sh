# systemctl stop coredump-socket.socket gives back the core_pattern it found when it started
# (at this boot: the kernel's default, as no sysctl.d file sets one since systemd-coredump went);
# starting it again registers the socket again.
. /usr/local/lib/cds-vmtest/tests/lib.sh
found=$(cat /run/coredump-socket/core_pattern.saved) || fail "the socket saved no pattern"
echo "core_pattern when the socket started: $found"
systemctl stop coredump-socket.socket coredump-socket.service || fail "stop failed"
pat=$(cat /proc/sys/kernel/core_pattern)
echo "core_pattern after stop: $pat"
[ "$pat" = "$found" ] || fail "core_pattern is '$pat', expected '$found'"
[ "$pat" = core ] || fail "core_pattern at boot was '$pat', not the kernel's default"
systemctl start coredump-socket.socket || fail "start failed"
[ "$(cat /proc/sys/kernel/core_pattern)" = "$(expected_pattern)" ] || fail "not registered again"
