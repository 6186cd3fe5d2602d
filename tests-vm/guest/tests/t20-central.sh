# SPDX-License-Identifier: LGPL-2.1-or-later
# Central listing, the guest's side: bug B (abort, its core stored on this machine) and bug A
# (a segfault in cds_crash_inner, Storage=journal: the core inside the entry) crash here, then
# systemd-journal-upload sends this machine's journal as it is to systemd-journal-remote on the
# host (qemu forwards 10.0.2.100:19532 to it; nothing else is reachable). The host crashes bug A
# too, ships its record, and checks the central journal with coredumpctl -D (tests-vm/run,
# tests-vm/central-host.py).
. /usr/local/lib/cds-vmtest/tests/lib.sh
[ -f $D/central.env ] || fail "no $D/central.env: tests-vm/run sets it up on the stock 7.x kernel only"
. $D/central.env
CRASHER=$CENTRAL_CRASHER # the same file as the host's, at the same path
conf=/etc/coredump-socket/coredump.conf.d/50-t20-central.conf
ifc=""
cleanup() {
        rm -f "$conf"
        systemctl try-reload-or-restart coredump-socket.service
        if [ -n "$ifc" ]; then
                ip addr flush dev "$ifc"
                ip link set "$ifc" down
        fi
}
trap cleanup EXIT

# the network card udev loaded virtio_net for: a static address in qemu's user network
nic() { for n in /sys/class/net/*; do [ "${n##*/}" = lo ] || { echo "${n##*/}"; return 0; }; done; return 1; }
retry nic || fail "no network interface (virtio_net not loaded?)"
ifc=$(nic)
ip link set "$ifc" up || fail "ip link set $ifc up"
ip addr add 10.0.2.15/24 dev "$ifc" || fail "ip addr add on $ifc"
echo "network: $ifc $(ip -brief addr show dev "$ifc" | awk '{ print $3 }')"

# bug B, stored as a file here (the default Storage=external)
pidb=$(crash abort)
wait_listed "$pidb" || fail "bug B (PID $pidb) not listed"
# bug A, its core inside the journal entry
mkdir -p "${conf%/*}"
printf '[Coredump]\nStorage=journal\n' > "$conf"
systemctl try-reload-or-restart coredump-socket.service || fail "reload"
pida=$(crash deep)
wait_listed "$pida" || fail "bug A (PID $pida) not listed"
wait_journal "$pida" || fail "bug A (PID $pida) is not in the journal"
$CTL list "$CRASHER"
$CTL info "$pida" | grep -q '^ *Storage: journal' || {
        $CTL info "$pida" | head -n 20
        fail "bug A's core is not in the journal"
}
echo "central-guest: bugA=$pida bugB=$pidb"

# the whole journal of this machine, once (no --follow), as systemd-journal-upload.service would
journalctl --sync
t0=$(date +%s)
timeout 120 /lib/systemd/systemd-journal-upload --follow=no --url="$CENTRAL_URL" > /tmp/upload.log 2>&1
rc=$?
tail -n 3 /tmp/upload.log | sed 's/^/  upload: /'
echo "systemd-journal-upload: exit $rc after $(( $(date +%s) - t0 )) s, $(journalctl -q --no-pager -o export | grep -a -c '^__CURSOR=') entries here"
[ $rc = 0 ] || fail "systemd-journal-upload failed (exit $rc)"
