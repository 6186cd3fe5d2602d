#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest side of tests-vm/run --host-suite: builds this tree (copied to the same path as on the
# host) and runs its integration suite (meson test) on the guest's kernel, prints it as TAP
# between the markers tests-vm/run reads, every skip with its reason, and powers the machine off.
D=/usr/local/lib/cds-vmtest
TOP=$(cat $D/top)
ulimit -c unlimited
echo "@@CDS-PHASE 1 uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r) core_modes=$(cat /proc/sys/kernel/core_modes 2>/dev/null | tr '\n' ' ' || echo none)"
cd "$TOP" || exit 1
# out of this service's cgroup, into the root one, as the suite runs on a host without systemd:
# crashes inside cds-vmtest.service would all count against one service's rate limit
echo $$ > /sys/fs/cgroup/cgroup.procs || echo "host-suite: could not leave the service's cgroup"
# as tools/run-tests.sh builds it, and with the systemd tools it unpacked on the host
if ! { meson setup build -Dprefix=/usr -Dwerror=true && ninja -C build; } >/var/tmp/suite-build.log 2>&1; then
        echo "@@CDS-TAP-BEGIN"
        echo "not ok 1 - the tree does not build in the guest"
        tail -n 40 /var/tmp/suite-build.log | sed 's/^/# /'
        echo "1..1"
        echo "@@CDS-TAP-END"
        echo "@@CDS-DONE 1"
        systemctl poweroff --no-block
        exit 1
fi
cp -a $D/systemd-tools/. build/
# every package the suite uses is in the image: a case that would skip for a missing tool fails
export CDS_TESTS_COMPLETE=1
# under TCG the daemon is several times slower than on the host: bounds on time grow with it
export CDS_TIME_SCALE_MACHINE=5
# (its progress on the console as it goes: a run cut short by the host's timeout still shows it)
# shellcheck disable=SC2046
meson test -C build --no-rebuild --suite integration --timeout-multiplier "$(cat $D/timeout-multiplier)" \
        $(cat $D/tests) 2>&1 | sed -u 's/^/# /'
echo "@@CDS-TAP-BEGIN"
python3 - build/meson-logs/testlog.json <<'EOF'
import json, re, sys
n = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    n += 1
    out = t.get("stdout") or ""
    if t["result"] == "OK":
        print(f"ok {n} - {t['name']}")
    elif t["result"] == "SKIP":
        m = re.search(r"^(?:SKIP: |skipped: )(.*)$", out, re.M)
        print(f"ok {n} - {t['name']} # SKIP {m.group(1) if m else '(no reason given)'}")
    else:
        print(f"not ok {n} - {t['name']} ({t['result']})")
        for tail in (out + (t.get("stderr") or "")).splitlines()[-40:]:
            print(f"# {tail}")
print(f"1..{n}")
EOF
echo "@@CDS-TAP-END"
sync
echo "@@CDS-DONE 1"
systemctl poweroff --no-block
