#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest side of tests-vm/run: runs the tests of this boot's phase (boot 1: after a fresh
# install; boot 2: after the reboot), prints TAP between markers on the serial console, prints
# the journal if anything failed, and powers the machine off.
D=/usr/local/lib/cds-vmtest
STATE=/var/lib/cds-vmtest
# This service started at boot, before t01 installed the package and with it DefaultLimitCORE
# (system.conf.d): like a shell opened before the install, its soft core limit is Debian's 0,
# and the README tells users to raise it. Services started after the install get it from PID 1
# (t03); a crash under the old limit gets a record saying so (t01).
ulimit -c unlimited
mkdir -p $STATE
phase=$(cat $STATE/phase 2>/dev/null || echo 1)
echo "@@CDS-PHASE $phase uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
echo "@@CDS-TAP-BEGIN"
failed=0
n=0
for t in $(cat $D/phase$phase.list); do
        n=$((n + 1))
        t0=$(cut -d. -f1 /proc/uptime)
        out=$(CDS_VM_VERBOSE=$(cat $D/verbose 2>/dev/null) timeout 300 sh $D/tests/$t.sh 2>&1)
        rc=$?
        echo "$out" | sed 's/^/# /'
        echo "# ($t: $(( $(cut -d. -f1 /proc/uptime) - t0 )) s)"
        if [ $rc = 0 ]; then
                echo "ok $n - $t"
        else
                echo "not ok $n - $t (exit $rc)"
                failed=1
        fi
done
echo "1..$n"
echo "@@CDS-TAP-END"
if [ $failed = 1 ]; then
        echo "@@CDS-JOURNAL-BEGIN"
        journalctl -b --no-pager -o short-monotonic | tail -n 300
        echo "@@CDS-JOURNAL-END"
fi
echo $((phase + 1)) > $STATE/phase
sync
echo "@@CDS-DONE $phase"
systemctl poweroff --no-block
