#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# coverage.sh [CORPUS_ROOT]: line and branch coverage of what each fuzz target parses, from
# replaying a corpus (CORPUS_ROOT/fuzz-X, e.g. kept by a long fuzzing run; default: the
# committed seeds) through a clang source-based coverage build (build-fuzzcov).
#     sh test/fuzz/run-fuzzer.sh ... -max_total_time=600 with a kept corpus, then
#     sh test/fuzz/coverage.sh /path/to/corpora
set -eu
cd "$(dirname "$0")/../.."
root=${1:-test/fuzz}
flags="-fprofile-instr-generate -fcoverage-mapping"
[ -f build-fuzzcov/build.ninja ] || CC=clang meson setup build-fuzzcov -Dintegration-tests=false \
        -Dc_args="$flags" -Dc_link_args="$flags" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
files() {
        case $1 in
        fuzz-core) echo src/worker/elf-stream.c src/worker/core-notes.c ;;
        fuzz-config) echo src/shared/config.c src/shared/parse-util.c ;;
        fuzz-request) echo src/manager/handshake.c ;;
        fuzz-worker-msg) echo src/shared/proto.c src/shared/record-fields.c src/shared/record.c ;;
        fuzz-export) echo src/shared/export-format.c src/coredumpctl/ctl-records.c src/coredumpctl/ctl-entry.c ;;
        esac
}
for t in fuzz-core fuzz-config fuzz-request fuzz-worker-msg fuzz-export; do
        ninja -C build-fuzzcov "test/$t" >/dev/null
        LLVM_PROFILE_FILE="$out/$t.profraw" "build-fuzzcov/test/$t" "$root/$t" >/dev/null
        llvm-profdata merge -o "$out/$t.profdata" "$out/$t.profraw"
        echo "== $t ($(ls "$root/$t" | wc -l) inputs)"
        # the parser's own files: lines and branches covered
        llvm-cov report "build-fuzzcov/test/$t" -instr-profile="$out/$t.profdata" |
                awk -v want=" $(files $t) " '{ f = $1; sub(/^(\.\.\/)+/, "", f) }
                        index(want, " " f " ") { printf "  %-28s lines %5s%% of %4d   branches %5s%% of %4d\n", f, substr($10, 1, length($10) - 1), $8, substr($13, 1, length($13) - 1), $11 }'
done
