# After the reboot: the socket is active before the services start, and a crash during early
# boot is recorded.
. /usr/local/lib/cds-vmtest/tests/lib.sh
systemctl is-active coredump-socket.socket || fail "socket not active after the reboot"
pat=$(cat /proc/sys/kernel/core_pattern)
[ "$pat" = "$(expected_pattern)" ] || fail "core_pattern after the reboot is '$pat'"
# the package's sysctl.d file, since systemd-coredump's went with it
[ "$(cat /proc/sys/fs/suid_dumpable)" = 2 ] || fail "fs.suid_dumpable after the reboot is $(cat /proc/sys/fs/suid_dumpable)"
sock=$(systemctl show -p ActiveEnterTimestampMonotonic --value coredump-socket.socket)
early=$(systemctl show -p ExecMainStartTimestampMonotonic --value cds-early-crash.service)
tests=$(systemctl show -p ExecMainStartTimestampMonotonic --value cds-vmtest.service)
echo "socket active at ${sock}us, early crash service started at ${early}us, tests at ${tests}us"
[ "$sock" -gt 0 ] && [ "$sock" -lt "$early" ] && [ "$sock" -lt "$tests" ] || fail "socket not active before the services"
# every service multi-user.target pulls in started after the socket
late=$(systemctl show -p Wants --value multi-user.target | tr ' ' '\n' | grep '\.service$' | while read u; do
        t=$(systemctl show -p ExecMainStartTimestampMonotonic --value "$u" 2>/dev/null)
        [ -n "$t" ] && [ "$t" -gt 0 ] && [ "$t" -lt "$sock" ] && echo "$u"
done)
[ -z "$late" ] || fail "services started before the socket: $late"
wait_listed COREDUMP_UNIT=cds-early-crash.service || fail "the early boot crash was not recorded"
$CTL info COREDUMP_UNIT=cds-early-crash.service | grep -E "^ *(PID|Unit|Signal|Storage):"
