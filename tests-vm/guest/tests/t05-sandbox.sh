# The service's sandbox is in force: systemd-analyze's exposure score, the manager's and the
# forward launcher's capabilities, and a worker's status while it processes a core; each worker
# is started on its own (no zygote by default).
. /usr/local/lib/cds-vmtest/tests/lib.sh
# at most what the same analyzer (252 here) gives systemd 262's systemd-coredumpd.service: 3.9
score=$(systemd-analyze security --no-pager coredump-socket.service | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "exposure $score"
awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.9) }' || fail "exposure $score above systemd-coredumpd.service's 3.9"
main=$(systemctl show -p MainPID --value coredump-socket.service)
[ "$main" -gt 0 ] || fail "coredumpd not running"
grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp|Seccomp_filters):" /proc/$main/status
# the unit's filters (systemd installs one per directive) and coredumpd's own on top, which it
# says it installed (the count alone cannot tell it from systemd's)
mfilters=$(awk '/^Seccomp_filters:/{print $2}' /proc/$main/status)
journalctl -u coredump-socket.service --no-pager | grep -q "Syscall filter installed" ||
        fail "coredumpd did not install its own syscall filter under the unit"
[ "$(awk '/^CapEff/{print $2}' /proc/$main/status)" = 00000000000801e4 ] || fail "manager capabilities"
# CAP_SYS_ADMIN is the forward launcher's alone, not in the manager's permitted or bounding set
[ "$(awk '/^CapPrm/{print $2}' /proc/$main/status)" = 00000000000801e4 ] || fail "manager permitted capabilities"
[ "$(awk '/^CapBnd/{print $2}' /proc/$main/status)" = 00000000000801e4 ] || fail "manager bounding set"
launcher=$(pgrep -P "$main" -x cd-fwd-launcher) || fail "no forward launcher under the unit"
[ "$(awk '/^CapEff/{print $2}' /proc/$launcher/status)" = 00000000002001c4 ] || fail "launcher capabilities"
"$CRASHER" mem 300 random >/dev/null 2>&1 &
cp=$!
# a worker that took the job: it runs as the worker user (spare ones are still root, waiting),
# wherever it is in the tree; its parent is read while it runs
wuid=$(id -u coredump-socket)
found=""
wppid=""
i=0
while [ $i -lt 600 ] && [ -z "$found" ]; do
        for w in $(pgrep -u "$wuid"); do
                [ "$(awk '/^Uid:/{print $2}' /proc/$w/status 2>/dev/null)" = "$wuid" ] || continue
                wppid=$(awk '/^PPid:/{print $2}' /proc/$w/status 2>/dev/null) && [ -n "$wppid" ] && found=$w
        done
        sleep 0.05
        i=$((i + 1))
done
[ -n "$found" ] || fail "no sandboxed worker seen while a core streamed"
echo "worker $found, parent $wppid (the manager: $main)"
grep -E "^(Uid|CapEff|CapBnd|NoNewPrivs|Seccomp|Seccomp_filters):" /proc/$found/status
[ "$(awk '/^NoNewPrivs/{print $2}' /proc/$found/status)" = 1 ] || fail "worker without NoNewPrivs"
[ "$(awk '/^CapEff/{print $2}' /proc/$found/status)" = 0000000000000000 ] || fail "worker has capabilities"
[ "$(awk '/^CapBnd/{print $2}' /proc/$found/status)" = 0000000000000000 ] || fail "worker bounding set"
# its own filter on top of the unit's and the manager's
[ "$(awk '/^Seccomp_filters:/{print $2}' /proc/$found/status)" -gt "$mfilters" ] || fail "worker without its seccomp filter"
wait $cp
wait_listed $cp || fail "the large crash $cp was not recorded"
# each worker its own exec by default (WorkerZygote=no): no zygote, the worker the manager's child
if pgrep -P "$main" -x coredump-zygote; then
        fail "a worker zygote runs, though WorkerZygote= is not set"
fi
[ "$wppid" = "$main" ] || fail "worker $found not the manager's child: its parent was $wppid"
if journalctl -u coredump-socket.service --no-pager | grep -E "zygote (could not fork|did not|exited|was killed|named)"; then
        fail "the zygote failed under the unit"
fi
