#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest side of tests-vm/run: runs the tests of this boot's phase (boot 1: after a fresh
# install; boot 2: after the reboot), prints TAP between markers on the serial console, prints
# the journal if anything failed, and powers the machine off.
D=/usr/local/lib/cds-vmtest
STATE=/var/lib/cds-vmtest
mkdir -p $STATE
phase=$(cat $STATE/phase 2>/dev/null || echo 1)
echo "@@CDS-PHASE $phase uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
echo "@@CDS-TAP-BEGIN"
failed=0
n=0
for t in $(cat $D/phase$phase.list); do
        n=$((n + 1))
        out=$(CDS_VM_VERBOSE=$(cat $D/verbose 2>/dev/null) timeout 300 sh $D/tests/$t.sh 2>&1)
        rc=$?
        echo "$out" | sed 's/^/# /'
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
