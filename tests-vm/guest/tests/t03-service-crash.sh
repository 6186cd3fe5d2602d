# A crash of a systemd service: Unit= in info (ours and systemd's), and gdb prints the
# crashing function.
. /usr/local/lib/cds-vmtest/tests/lib.sh
systemctl start cds-crashing.service
i=0
while [ $i -lt 100 ] && ! systemctl is-failed -q cds-crashing.service; do sleep 0.2; i=$((i + 1)); done
pid=$(systemctl show -p ExecMainPID --value cds-crashing.service)
echo "service PID $pid, result $(systemctl show -p Result --value cds-crashing.service)"
[ "$(systemctl show -p Result --value cds-crashing.service)" = core-dump ] || fail "the service did not dump core"
wait_listed $pid || fail "our coredumpctl does not list PID $pid"
wait_journal $pid || fail "systemd's coredumpctl does not list PID $pid"
$CTL info $pid | grep -E "^ *(Unit|Signal|Storage):"
$CTL info $pid | grep -q "Unit: cds-crashing.service" || fail "our info lacks Unit="
$SCTL info $pid | grep -q "Unit: cds-crashing.service" || fail "systemd's info lacks Unit="
bt=$($CTL gdb $pid -A '-batch -ex bt' 2>&1)
echo "$bt" | grep "^#" | head -5
echo "$bt" | grep -q "cds_crash_inner" || fail "gdb's backtrace lacks cds_crash_inner"
$CTL list COREDUMP_UNIT=cds-crashing.service | grep -q "$pid" || fail "no match on COREDUMP_UNIT"
