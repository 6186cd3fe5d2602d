# Crashes queued while the service restarts are all recorded.
. /usr/local/lib/cds-vmtest/tests/lib.sh
pids=""
for i in 1 2 3 4 5; do
        "$CRASHER" segv >/dev/null 2>&1 &
        pids="$pids $!"
done
systemctl restart coredump-socket.service &
for i in 6 7 8; do
        "$CRASHER" abort >/dev/null 2>&1 &
        pids="$pids $!"
done
wait
echo "crashed: $pids"
for p in $pids; do
        wait_listed $p || fail "crash $p lost across the restart"
done
systemctl is-active coredump-socket.service || fail "service not active after the restart"
