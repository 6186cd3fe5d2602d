#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-fuzzer.sh FUZZER CORPUS RUNS [libFuzzer options...]: RUNS executions of a libFuzzer target
# starting from the committed corpus (read only: new inputs go to a scratch directory, removed
# afterwards; a finding is written to the scratch directory's crash-* and printed). Prints the
# final coverage line; exits non-zero on a finding.
set -eu
fuzzer=$1 corpus=$2 runs=$3
shift 3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/new"
# -rss_limit_mb: a target's memory is bounded; -timeout: no input may take a second
status=0
"$fuzzer" "$scratch/new" "$corpus" -runs="$runs" -max_len=131072 -rss_limit_mb=1024 -timeout=10 \
        -artifact_prefix="$scratch/" -print_final_stats=1 "$@" >"$scratch/log" 2>&1 || status=$?
grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::peak_rss_mb)' "$scratch/log" || true
if [ "$status" -ne 0 ]; then
        tail -n 60 "$scratch/log"
        for f in "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* "$scratch"/oom-*; do
                [ -e "$f" ] || continue
                echo "finding: $f (base64 follows; add it to $corpus to keep it as a regression)"
                base64 "$f"
        done
fi
exit "$status"
