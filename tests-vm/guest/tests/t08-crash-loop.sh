# A crash-looping service under systemd: once RateLimitBurst= cores of it are taken in the
# window, its dumps are refused before the kernel writes them; the first refused crash is
# listed (no core, the reason in its record), the others are counted in one summary entry in
# the journal when the window ends; stored + counted = every crash.
. /usr/local/lib/cds-vmtest/tests/lib.sh
conf=/etc/coredump-socket/coredump.conf.d/50-t08-loop.conf
mkdir -p "${conf%/*}"
printf '[Coredump]\nRateLimitBurst=3\nRateLimitIntervalSec=40s\n' > "$conf"
trap 'rm -f "$conf"; systemctl try-reload-or-restart coredump-socket.service' EXIT
systemctl try-reload-or-restart coredump-socket.service || fail "reload"
sleep 1
systemctl start cds-crash-loop.service
sleep 12
restarts=$(systemctl show -p NRestarts --value cds-crash-loop.service) # reset by the stop
systemctl stop cds-crash-loop.service
echo "crash loop: $restarts restarts in 12 s"
[ "$restarts" -ge 6 ] || fail "the loop crashed only $restarts times"
n=$(wait_suppressed $D/looper)
[ -n "$n" ] || fail "no summary of the refused crashes in the journal"
journalctl -q -o cat MESSAGE_ID=$SUPPRESSED_ID COREDUMP_EXE=$D/looper
listed=$($CTL -q --no-legend list $D/looper)
echo "$listed"
stored=$(echo "$listed" | grep -c " present ")
[ "$stored" = 3 ] || fail "$stored cores stored, RateLimitBurst=3"
[ "$(echo "$listed" | wc -l)" = 4 ] || fail "expected 3 stored and 1 refused crash listed"
$CTL info $D/looper | grep -q "rate limit: more than RateLimitBurst=3 cores of executable $D/looper" ||
        fail "the refused crash's record does not say why"
# every crash: the first start plus each restart (one more may come before the stop; the last
# start may have been stopped before it crashed)
total=$((stored + n))
[ $total -ge $restarts ] && [ $total -le $((restarts + 2)) ] || fail "$stored stored + $n counted for $restarts restarts"
