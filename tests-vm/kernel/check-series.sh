#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests-vm/kernel/check-series.sh
#
# Shows that every patch of kernel-patches/linux-6.12 builds on its own: applies the series one
# patch at a time to a tree of Debian's linux-source-6.12 (configured like build.sh does) and,
# after each, compiles with -Werror the objects of the C files it touches plus the users of
# what the series changes (pidfs, coredump, pid handling, AF_UNIX, sockets, fanotify, exec).
# Also runs scripts/checkpatch.pl on each patch and prints its findings (kernel-patches/README.md
# explains the ones kept). Exits non-zero on the first patch that does not build.
# Takes a few minutes (unpacking and `make prepare`); not part of the CI run, which builds the
# whole series (build.sh).
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SERIES_DIR=$TOP/kernel-patches/linux-6.12
WORK=$TOP/build-vm/kernel
SRC=$WORK/check-src
OBJ=$WORK/obj-check
CACHE=${CDS_VM_CACHE:-/var/cache/coredump-socket-vm}
USERS="fs/pidfs.o fs/coredump.o fs/exec.o kernel/fork.o kernel/pid.o kernel/exit.o kernel/signal.o
net/unix/af_unix.o net/core/sock.o net/core/scm.o fs/notify/fanotify/fanotify_user.o"

log() { echo "check-series: $*" >&2; }

# The .o files of the C files a patch touches.
touched_objects() {
        sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' "$1"
}

main() {
        local p n=0 objs
        export CCACHE_DIR=$CACHE/ccache CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1
        rm -rf "$SRC" "$OBJ"
        mkdir -p "$SRC" "$OBJ"
        log "unpacking linux-source-6.12"
        tar -C "$SRC" --strip-components=1 -xf /usr/src/linux-source-6.12.tar.xz
        make -C "$SRC" O="$OBJ" -s tinyconfig
        "$SRC"/scripts/kconfig/merge_config.sh -m -O "$OBJ" "$OBJ/.config" "$HERE/guest.config" >/dev/null
        make -C "$SRC" O="$OBJ" -s olddefconfig
        make -C "$SRC" O="$OBJ" -s -j"$(nproc)" CC="ccache gcc" prepare
        while read -r p; do
                n=$((n + 1))
                patch -d "$SRC" -p1 -s -N --no-backup-if-mismatch <"$SERIES_DIR/$p"
                objs=$(echo $(touched_objects "$SERIES_DIR/$p") $USERS | tr ' ' '\n' | sort -u | tr '\n' ' ')
                if ! make -C "$SRC" O="$OBJ" -s -j"$(nproc)" CC="ccache gcc" KCFLAGS=-Werror $objs >&2; then
                        log "patch $n ($p) does not build"
                        exit 1
                fi
                echo "patch $n builds: $p"
                "$SRC"/scripts/checkpatch.pl --no-tree -q "$SERIES_DIR/$p" 2>&1 | grep -E '^(ERROR|WARNING):' |
                        sed "s|^|  checkpatch: |" || true
        done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$SERIES_DIR/series")
        echo "check-series: all $n patches build"
}

main
