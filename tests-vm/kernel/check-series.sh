#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests-vm/kernel/check-series.sh [--arch=ARCH[,ARCH...]] [--users] [--no-checkpatch]
#
# Shows that every patch of kernel-patches/linux-6.12 builds on its own, on every architecture
# whose headers it touches differently: applies the series one patch at a time to a tree of
# Debian's linux-source-6.12 and, after each, compiles with -Werror the objects of the C files
# the patch touches, for x86_64 (configured like build.sh does, plus the users of what the
# series changes: pidfs, coredump, pid handling, exec, AF_UNIX, sockets, fanotify) and, with
# Debian's cross compilers, for arm64, mips, alpha and parisc (tinyconfig plus check.config).
# alpha and parisc define SOCK_NONBLOCK themselves and mips its own socket types, which is
# where SOCK_COREDUMP once failed to build.
#   --arch=LIST     only these (default: x86_64,arm64,mips,alpha,parisc)
#   --users         also compile the users on the cross architectures (x86_64 always does)
#   --no-checkpatch skip scripts/checkpatch.pl
# Also runs scripts/checkpatch.pl on each patch and prints its findings
# (kernel-patches/README.md explains the ones kept). Prints "patch N builds: ARCHES: NAME" per
# patch and exits non-zero on the first patch that does not build on some architecture.
# Compiler output is cached by ccache like build.sh's. Part of tools/run-tests.sh.
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
SERIES_DIR=${CDS_SERIES_DIR:-$TOP/kernel-patches/linux-6.12}
WORK=${CDS_KERNEL_WORK:-$TOP/build-vm/kernel}
SRC=$WORK/check-src
CACHE=${CDS_VM_CACHE:-/var/cache/coredump-socket-vm}
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
ALL_ARCHES="x86_64 arm64 mips alpha parisc"
USERS="fs/pidfs.o fs/coredump.o fs/exec.o kernel/fork.o kernel/pid.o kernel/exit.o kernel/signal.o
kernel/ptrace.o net/unix/af_unix.o net/core/sock.o net/core/scm.o fs/notify/fanotify/fanotify_user.o"
PACKAGES="linux-source-6.12 ccache flex bison bc libelf-dev libssl-dev gcc-aarch64-linux-gnu
gcc-mips-linux-gnu gcc-alpha-linux-gnu gcc-hppa-linux-gnu"
JOBS=$(nproc)

ARCHES=$ALL_ARCHES
CROSS_USERS=0
CHECKPATCH=1
for a in "$@"; do
        case $a in
        --arch=*) ARCHES=$(echo "${a#--arch=}" | tr ',' ' ') ;;
        --users) CROSS_USERS=1 ;;
        --no-checkpatch) CHECKPATCH=0 ;;
        *) echo "usage: $0 [--arch=ARCH[,ARCH...]] [--users] [--no-checkpatch]" >&2; exit 2 ;;
        esac
done

log() { echo "check-series: $*" >&2; }

install_packages() {
        local p need=
        for p in $PACKAGES; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need="$need $p"
        done
        [ -z "$need" ] && return 0
        log "installing$need"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >&2
}

# The kernel's ARCH= and CROSS_COMPILE= for one of ALL_ARCHES.
cross_compile() {
        case $1 in
        x86_64) echo "" ;;
        arm64) echo aarch64-linux-gnu- ;;
        mips) echo mips-linux-gnu- ;;
        alpha) echo alpha-linux-gnu- ;;
        parisc) echo hppa-linux-gnu- ;;
        *) log "unknown architecture $1 (known: $ALL_ARCHES)"; return 1 ;;
        esac
}

kmake() { # ARCH make-arguments...
        local arch=$1 cross
        shift
        cross=$(cross_compile "$arch")
        make -C "$SRC" O="$WORK/obj-check-$arch" ARCH="$arch" CROSS_COMPILE="$cross" \
                CC="ccache ${cross}gcc" HOSTCC="ccache gcc" -s -j"$JOBS" "$@"
}

# tinyconfig plus the fragment; every line of the fragment must have survived.
configure() { # ARCH
        local arch=$1 obj=$WORK/obj-check-$1 fragment=$HERE/check.config line
        [ "$arch" = x86_64 ] && fragment=$HERE/guest.config
        rm -rf "$obj"
        mkdir -p "$obj"
        kmake "$arch" tinyconfig
        ARCH=$arch "$SRC"/scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$fragment" >/dev/null
        kmake "$arch" olddefconfig
        while read -r line; do
                case $line in
                CONFIG_*=n) grep -qx "# ${line%=n} is not set" "$obj/.config" || { log "$arch: $line did not survive"; return 1; } ;;
                CONFIG_*) grep -qxF "$line" "$obj/.config" || { log "$arch: $line did not survive"; return 1; } ;;
                esac
        done <"$fragment"
        kmake "$arch" prepare
}

# Configures every architecture at once: much of it (kconfig, host tools) is serial.
configure_all() {
        local arch pid failed=
        declare -A pids
        for arch in $ARCHES; do
                log "configuring $arch"
                configure "$arch" >"$WORK/configure-$arch.log" 2>&1 &
                pids[$arch]=$!
        done
        for arch in $ARCHES; do
                pid=${pids[$arch]}
                if ! wait "$pid"; then
                        cat "$WORK/configure-$arch.log" >&2
                        failed="$failed $arch"
                fi
        done
        if [ -n "$failed" ]; then
                log "configuring failed for$failed"
                return 1
        fi
}

# The .o files of the C files a patch touches.
touched_objects() {
        sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' "$1"
}

build_patch() { # ARCH PATCH
        local arch=$1 objs
        objs=$(touched_objects "$2")
        if [ "$arch" = x86_64 ] || [ "$CROSS_USERS" = 1 ]; then objs="$objs $USERS"; fi
        objs=$(echo $objs | tr ' ' '\n' | sort -u | tr '\n' ' ')
        [ -n "${objs// /}" ] || return 0
        kmake "$arch" KCFLAGS=-Werror $objs >&2
}

main() {
        local p n=0 arch t0 failed
        install_packages
        for arch in $ARCHES; do cross_compile "$arch" >/dev/null; done
        export CCACHE_DIR=$CACHE/ccache CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1
        t0=$(date +%s)
        rm -rf "$SRC"
        mkdir -p "$SRC"
        log "unpacking linux-source-6.12"
        tar -C "$SRC" --strip-components=1 -xf "$SRC_TARBALL"
        configure_all
        while read -r p; do
                n=$((n + 1))
                patch -d "$SRC" -p1 -s -N --no-backup-if-mismatch <"$SERIES_DIR/$p"
                failed=
                for arch in $ARCHES; do
                        build_patch "$arch" "$SERIES_DIR/$p" || failed="$failed $arch"
                done
                if [ -n "$failed" ]; then
                        echo "patch $n does not build on$failed: $p"
                        exit 1
                fi
                echo "patch $n builds: $ARCHES: $p"
                if [ "$CHECKPATCH" = 1 ]; then
                        # no git history here: checkpatch cannot look the upstream ids up
                        # (kernel-patches/README.md says how they were checked)
                        "$SRC"/scripts/checkpatch.pl --no-tree -q --ignore UNKNOWN_COMMIT_ID \
                                "$SERIES_DIR/$p" 2>&1 |
                                grep -E '^(ERROR|WARNING|CHECK):' | sed "s|^|  checkpatch: |" || true
                fi
        done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$SERIES_DIR/series")
        echo "check-series: all $n patches build on $ARCHES ($(( $(date +%s) - t0 )) s)"
}

main
