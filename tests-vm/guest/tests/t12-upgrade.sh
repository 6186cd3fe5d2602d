# `apt install` of a rebuilt package with a higher version while a service crash-loops: the
# listening socket stays with systemd (never restarted; core_pattern ours all along), the
# service restarts on the new binaries, and every crash is stored (or counted by the rate
# limit): the crashes during the restart waited in the socket's backlog.
. /usr/local/lib/cds-vmtest/tests/lib.sh
EXE=$D/upgrade-looper
old=$(dpkg-query -W -f='${Version}' coredump-socket)
systemctl start coredump-socket.service || fail "service does not start"
old_pid=$(systemctl show -p MainPID --value coredump-socket.service)
sock_since=$(systemctl show -p ActiveEnterTimestampMonotonic --value coredump-socket.socket)
cursor=$(journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p')
rm -f $STATE/upgrade-done $STATE/restart-crashes $STATE/patterns.all
# every 50 ms: the pattern; and while the service is not active (the old daemon stopping, the
# new one starting), a crash from here, which must wait in the socket's backlog (at most
# RESTART_CRASHES of them)
RESTART_CRASHES=6
(
        n=0
        while [ ! -e $STATE/upgrade-done ]; do
                cat /proc/sys/kernel/core_pattern >> $STATE/patterns.all
                if [ $n -lt $RESTART_CRASHES ] && [ "$(systemctl show -p ActiveState --value coredump-socket.service)" != active ]; then
                        "$CRASHER" segv >/dev/null 2>&1 &
                        echo $! >> $STATE/restart-crashes
                        n=$((n + 1))
                fi
                sleep 0.05
        done
        wait
        sort -u $STATE/patterns.all > $STATE/patterns
) &
watcher=$!
systemctl start cds-upgrade-loop.service
sleep 3
apt_get install "$(deb upgrade)" || fail "apt-get install of the new version failed"
sleep 3
restarts=$(systemctl show -p NRestarts --value cds-upgrade-loop.service)
systemctl stop cds-upgrade-loop.service
touch $STATE/upgrade-done
wait $watcher
new=$(dpkg-query -W -f='${Version}' coredump-socket)
new_pid=$(systemctl show -p MainPID --value coredump-socket.service)
echo "upgraded $old -> $new; coredumpd PID $old_pid -> $new_pid; crash loop: $restarts restarts"
dpkg --compare-versions "$new" gt "$old" || fail "version $new is not newer than $old"
[ "$(systemctl show -p ActiveEnterTimestampMonotonic --value coredump-socket.socket)" = "$sock_since" ] ||
        fail "the socket was restarted"
systemctl is-active coredump-socket.socket || fail "socket not active"
echo "core_pattern during the upgrade:"; sed 's/^/  /' $STATE/patterns
[ "$(cat $STATE/patterns)" = "$(expected_pattern)" ] || fail "core_pattern changed during the upgrade"
[ "$new_pid" -gt 0 ] && [ "$new_pid" != "$old_pid" ] || fail "the service was not restarted"
exe=$(readlink /proc/$new_pid/exe)
echo "running: $exe"
[ "$exe" = /usr/libexec/coredump-socket/coredumpd ] || fail "the daemon runs '$exe', not the new binary"
[ "$restarts" -ge 6 ] || fail "the loop crashed only $restarts times"
# the crashes while the service restarted (the old daemon no longer accepting, the new one not
# yet): each stored
fired=$(cat $STATE/restart-crashes 2>/dev/null)
echo "crashes while the service was not active: $(echo $fired)"
[ -n "$fired" ] || fail "no crash happened while the service restarted: the test proves nothing"
for p in $fired; do
        wait_listed $p || fail "PID $p, crashed during the restart, was lost"
        $CTL list $p | grep -q " present " || fail "PID $p, crashed during the restart, has no core"
done
# every crash of the loop (systemd saw each dump): stored, or refused by the rate limit and
# counted in its summary
crashes=$(journalctl -q --after-cursor="$cursor" -u cds-upgrade-loop.service | grep -c "code=dumped")
i=0
while :; do
        listed=$($CTL -q --no-legend list $EXE 2>/dev/null | wc -l)
        [ "$listed" -ge "$crashes" ] || [ $i -ge 30 ] || { sleep 1; i=$((i + 1)); continue; }
        break
done
stored=$($CTL -q --no-legend list $EXE | grep -c " present ")
counted=0
if [ "$stored" -lt "$listed" ]; then # a refused crash: its summary comes when the window ends
        counted=$(wait_suppressed $EXE)
        counted=${counted:-0}
fi
echo "$crashes crashes of the loop: $stored stored, $counted counted, $listed listed"
[ $((stored + counted)) = "$crashes" ] || fail "$stored stored + $counted counted for $crashes crashes"
lost=$(journalctl -q --after-cursor="$cursor" -u coredump-socket.service -u coredump-socket.socket | grep -c -i -e "lost" -e "dropped")
[ "$lost" = 0 ] || { journalctl -q --after-cursor="$cursor" -u coredump-socket.service | grep -i -e lost -e dropped; fail "crashes lost"; }
