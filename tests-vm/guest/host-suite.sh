#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest side of tests-vm/run --host-suite: runs this tree's integration suite (meson test,
# the host's build copied to the same path) on the guest's kernel, prints it as TAP between the
# markers tests-vm/run reads, every skip with its reason, and powers the machine off.
D=/usr/local/lib/cds-vmtest
TOP=$(cat $D/top)
ulimit -c unlimited
echo "@@CDS-PHASE 1 uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r) core_modes=$(cat /proc/sys/kernel/core_modes 2>/dev/null || echo none)"
cd "$TOP" || exit 1
# every package the suite uses is in the image: a case that would skip for a missing tool fails
export CDS_TESTS_COMPLETE=1
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
