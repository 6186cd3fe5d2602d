# A real system service with many libraries crashing under systemd (systemd-udevd: more than a
# dozen mapped files, which once cost every such core): exactly one core, one journal entry, and
# a trace of the crashing thread that agrees with eu-stack on the stored core. Then container
# facts with the daemon in its unit's private mount namespace: a crash in a mount namespace of
# its own names the first ancestor outside it (COREDUMP_CONTAINER_CMDLINE).
. /usr/local/lib/cds-vmtest/tests/lib.sh
TOP_FRAMES=5
# started at boot, before the package installed DefaultLimitCORE=infinity: restarted, as a
# service is after the install, it runs with the unlimited core limit (no core with Debian's 0)
systemctl restart systemd-udevd.service || fail "cannot restart systemd-udevd"
main=$(systemctl show -p MainPID --value systemd-udevd.service)
[ "${main:-0}" -gt 0 ] || fail "systemd-udevd is not running"
grep "^Max core file size" /proc/$main/limits
[ "$(awk '/^Max core file size/ { print $5 }' /proc/$main/limits)" = unlimited ] ||
        fail "systemd-udevd restarted after the install has no unlimited core limit"
sleep 1 # its workers and libraries loaded
maps=$(awk '$6 ~ /^\// { print $6 }' /proc/$main/maps | sort -u | wc -l)
threads=$(ls /proc/$main/task | wc -l)
echo "systemd-udevd PID $main: $maps mapped files, $threads threads"
[ "$maps" -gt 12 ] || fail "systemd-udevd maps only $maps files"
kill -SEGV "$main"
wait_listed $main || fail "our coredumpctl does not list PID $main"
wait_journal $main || fail "systemd's coredumpctl does not list PID $main"
n=$($CTL -q --no-legend list $main | wc -l)
[ "$n" = 1 ] || fail "$n entries for PID $main"
$CTL list $main | grep -q " present " || fail "core not present"
$CTL info $main | grep -q "Unit: systemd-udevd.service" || fail "info lacks Unit=systemd-udevd.service"
core=$(mktemp /var/tmp/udevd-core.XXXXXX)
trap 'rm -f "$core"' EXIT
$CTL dump $main -o "$core" >/dev/null 2>&1 || fail "coredumpctl dump failed"
prstatus=$(eu-readelf -n "$core" | grep -c "PRSTATUS")
echo "stored core: $(stat -c %s "$core") bytes, $prstatus NT_PRSTATUS notes"
[ "$prstatus" = "$threads" ] || fail "$prstatus NT_PRSTATUS notes, the process had $threads threads"
# function names of the crashing thread's top frames; unnamed ones as "?"
ours=$($CTL info $main | sed -n "/Stack trace of thread $main:/,/^ *\$/p" | grep -E '^ *#[0-9]' | head -n $TOP_FRAMES |
       awk '{ print ($3 == "n/a" ? "?" : $3) }')
theirs=$(eu-stack --core="$core" 2>/dev/null | sed -n "/^TID $main:/,/^TID /p" | grep -E '^#[0-9]' | head -n $TOP_FRAMES |
         awk '{ print (NF >= 3 ? $3 : "?") }')
echo "ours:    $(echo $ours)"
echo "eu-stack: $(echo $theirs)"
[ -n "$ours" ] || fail "no stack trace of thread $main"
[ "$ours" = "$theirs" ] || fail "the crashing thread's frames differ from eu-stack's"
retry systemctl is-active -q systemd-udevd.service || fail "systemd-udevd did not come back"

# a crash in a mount namespace of its own is a container's (t02: a host crash is not)
inner=$(unshare --mount --propagation private --fork sh -c "echo \$\$; exec $CRASHER segv >/dev/null 2>&1" 2>/dev/null)
wait_listed $inner || fail "the crash in a mount namespace of its own (PID $inner) is not listed"
container=$(journalctl -q -o export COREDUMP_PID=$inner | grep -a '^COREDUMP_CONTAINER_CMDLINE=')
echo "container crash PID $inner: $container"
[ -n "$container" ] || fail "the crash in a mount namespace of its own (PID $inner) has no COREDUMP_CONTAINER_CMDLINE"
