# (b) A container (Debian bookworm) with coredump-socket inside, installed there with apt from
# the same package: the unit there skips core_pattern (the host's), listens on
# /run/systemd/coredump and takes the forwarded crash, checked against the pidfd; its own
# coredumpctl lists it with the container's PID, its record says COREDUMP_FORWARDED=1.
. /usr/local/lib/cds-vmtest/tests/lib.sh
N=ours
R=$MACHINES/ct-ours
if [ ! -e "$R/usr/libexec/coredump-socket/coredumpd" ]; then
        systemd-nspawn -q -D "$R" --bind-ro="$D/debs:/debs" --pipe sh -c \
                'DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Use-Pty=0 install /debs/coredump-socket_[0-9]*_*.deb' \
                > /tmp/ct-apt.log 2>&1 || { sed 's/^/  apt: /' /tmp/ct-apt.log; fail "cannot install the package in the container"; }
        grep -E '^(Setting up|Removing) ' /tmp/ct-apt.log | sed 's/^/  apt: /'
fi
ct_start $N ct-ours || fail "the container did not boot"
ct_receive $N 1
retry ct_exec $N test -S /run/systemd/coredump || fail "coredump-socket.socket is not listening on /run/systemd/coredump"
ct_exec $N systemctl is-active coredump-socket.socket | sed 's/^/  coredump-socket.socket: /'
ct_exec $N journalctl -q -b -u coredump-socket.socket --no-pager | grep -i 'container' | sed 's/^/  container: /'
pid=$(ct_crash $N) || fail "the crash in the container did not happen"
echo "crash in the container: PID $pid there"
retry ct_exec $N coredumpctl --no-pager -q list "$pid" || fail "the container's coredumpctl does not list PID $pid"
ct_exec $N coredumpctl --no-pager list "$pid" | sed 's/^/  container: /'
rec=$(grep -l -a "^COREDUMP_PID=$pid\$" "$R"/var/lib/coredump-socket/record.*.export 2>/dev/null | head -n1)
[ -n "$rec" ] || fail "no record in the container for PID $pid"
grep -a -E '^COREDUMP_(PID|UID|FORWARDED|BY_PIDFD|UNIT|EXE|FILENAME|PROCESSING_ERROR|TRUNCATED)=' "$rec" | sed 's/^/  container record: /'
grep -a -q '^COREDUMP_FILENAME=' "$rec" || {
        ct_exec $N journalctl -b --no-pager -q -u coredump-socket.service | tail -n 10 | sed 's/^/  container journal: /'
        fail "the container did not store the core"
}
grep -a -q '^COREDUMP_FORWARDED=1$' "$rec" || fail "the container's record lacks COREDUMP_FORWARDED=1"
# the host pins the crash by a pidfd in socket mode, and in pipe mode where the pattern has %F
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in
@* | *%F*) grep -a -q '^COREDUMP_BY_PIDFD=1$' "$rec" || fail "no COREDUMP_BY_PIDFD=1, though the host has a pidfd ($pattern)" ;;
*) grep -a -q '^COREDUMP_BY_PIDFD=1$' "$rec" || echo "  (no pidfd: the host runs pipe mode without %F)" ;;
esac
wait_host_entry $N "$pid" || fail "no entry on the host for container PID $pid"
host_entry $N "$pid" | grep -E '^COREDUMP_(PID|FORWARD[A-Z_]*|FILENAME)=' | sed 's/^/  host: /'
[ "$(host_entry $N "$pid" | field COREDUMP_FORWARDED_TO)" = cds-ct-$N.service ] || fail "the host's entry does not say it was forwarded"
ct_stop $N
