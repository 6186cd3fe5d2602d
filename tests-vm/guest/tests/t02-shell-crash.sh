# A crash of a program run from a shell: stored, listed by our coredumpctl and by systemd's.
. /usr/local/lib/cds-vmtest/tests/lib.sh
pid=$(crash segv)
echo "crashed PID $pid"
wait_listed $pid || fail "our coredumpctl does not list PID $pid"
wait_journal $pid || fail "systemd's coredumpctl does not list PID $pid"
$CTL list $pid
$CTL list $pid | grep -q " present " || fail "core not present"
$SCTL list $pid | grep -q " present " || fail "systemd's coredumpctl does not see the core"
$CTL info $pid | grep -q "Stack trace of thread $pid:" || fail "no stack trace in info"
$CTL info $pid | sed -n '/Stack trace/,$p'
if [ -n "${CDS_VM_VERBOSE:-}" ]; then
        journalctl -b -u coredump-socket.service --no-pager | tail -n 40
fi
$CTL info $pid | grep -q "#0  0x[0-9a-f]* main (crasher + 0x" || fail "main is not named in the trace"
# the daemon runs in its unit's private mount namespace: a host crash is still no container's
journalctl -q -o export COREDUMP_PID=$pid | grep -q '^COREDUMP_CONTAINER_CMDLINE=' &&
        fail "a host crash is recorded as a container's"
true
