# (a) A systemd-nspawn container (-U) running Debian trixie's systemd-coredump (257), whose unit asks
# for its crashes (CoredumpReceive=yes: the cgroup xattr PID 1 sets; this guest's PID 1 is
# bookworm's 252, older than the setting, so the test sets it as PID 1 does): a crash inside is
# listed by the container's own coredumpctl with the container's PID, its core dumps as an ELF
# core; the host keeps its record, saying where it went, and no core (KeepForwarded=no).
. /usr/local/lib/cds-vmtest/tests/lib.sh
N=systemd
ct_start $N ct-systemd || fail "the container did not boot"
echo "container PID 1 is $(ct_leader $N) on the host; $(ct_exec $N systemctl --version | head -n1)"
getfattr -d -m '^(trusted|user)\.' "$(ct_cgroup $N)" 2>/dev/null | grep -v '^#' | sed '/^$/d;s/^/  xattr /'
ct_receive $N 1
retry ct_exec $N test -S /run/systemd/coredump || fail "systemd-coredump.socket is not listening in the container"
pid=$(ct_crash $N) || fail "the crash in the container did not happen"
echo "crash in the container: PID $pid there"
if ! retry ct_exec $N coredumpctl --no-pager -q list "$pid"; then
        ct_exec $N journalctl -b --no-pager -q | grep -i coredump | tail -n 20 | sed 's/^/  container journal: /'
        journalctl -b --no-pager -q | grep -E 'coredump-forward|forwarded|coredumpd\[' | tail -n 10 | sed 's/^/  host journal: /'
        fail "the container's coredumpctl does not list PID $pid"
fi
ct_exec $N coredumpctl --no-pager info "$pid" | grep -E '^ *(PID|UID|Signal|Storage|Command Line|Executable):' | sed 's/^/  container: /'
ct_exec $N coredumpctl --no-pager info "$pid" | grep -qE "^ *PID: $pid " || fail "the container's entry is not PID $pid"
ct_exec $N coredumpctl --no-pager dump "$pid" -o /cds/core >/dev/null 2>&1 || fail "the container's coredumpctl cannot dump it"
eu-readelf -h "$(ct_dir $N)/core" | grep -q 'CORE (Core file)' || fail "the container's core is not an ELF core"
echo "container's core: $(stat -c %s "$(ct_dir $N)/core") bytes, $(eu-readelf -n "$(ct_dir $N)/core" | grep -c PRSTATUS) threads"
rm -f "$(ct_dir $N)/core"
wait_host_entry $N "$pid" || fail "no entry on the host for container PID $pid"
host_entry $N "$pid" | sed 's/^/  host: /'
[ "$(host_entry $N "$pid" | field COREDUMP_FORWARDED_TO)" = cds-ct-$N.service ] || fail "the host's entry does not say it was forwarded"
host_entry $N "$pid" | grep -q '^COREDUMP_FILENAME=' && fail "the host kept the core (KeepForwarded=no)"
true
