#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The service unit's exposure as systemd-analyze security --offline=yes scores it must stay at or
# below what the same analyzer gives systemd's own socket-mode collector, systemd-coredumpd.service
# of systemd 262: 3.9 with Debian 12's systemd-analyze 252, 3.7 with sid's 262 (measured on
# 2026-12-06 from sid's systemd-coredump 262.1 package). Reads the unit file only.
# $1: the built coredump-socket.service.
set -eu
unit=$1
if ! command -v systemd-analyze >/dev/null 2>&1; then
        echo "skipped: no systemd-analyze (package systemd)"
        exit 77
fi
# what this analyzer gives systemd-coredumpd.service: measured with 252 and 262; others are held
# to the lower of the two
version=$(systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
case "$version" in
252) reference=3.9 ;;
*) reference=3.7 ;;
esac
echo "systemd-analyze $version: systemd-coredumpd.service scores $reference"
out=$(systemd-analyze security --offline=yes --no-pager "$unit" 2>&1) || {
        echo "$out"
        echo "systemd-analyze failed on $unit"
        exit 1
}
echo "$out" | grep -E '✗|Overall'
score=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || { echo "no overall exposure level in the output"; exit 1; }
if awk -v s="$score" -v r="$reference" 'BEGIN { exit !(s <= r) }'; then
        echo "exposure $score, systemd-coredumpd.service's $reference: as hardened or more"
else
        echo "exposure $score is above systemd-coredumpd.service's $reference"
        exit 1
fi
