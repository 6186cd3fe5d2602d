#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests-vm/kernel/check-series.sh [--arch=ARCH[,ARCH...]] [--users] [--no-checkpatch]
#
# Shows that every patch of kernel-patches/linux-6.12 builds on its own, on every architecture
# whose headers it touches differently: applies the series one patch at a time to a tree of
# Debian's linux-source-6.12 and, after each, compiles with -Werror the objects of the C files
# the patch touches and of the users of the headers it touches (HEADER_USERS), for x86_64
# (configured like build.sh does, plus USERS: every user of what the series changes, pidfs,
# coredump, pid handling, exec, AF_UNIX, sockets, fanotify) and, with Debian's cross
# compilers, for arm64, mips, alpha and parisc (tinyconfig plus check.config).
# alpha and parisc define SOCK_NONBLOCK themselves and mips its own socket types, which is
# where SOCK_COREDUMP once failed to build.
#   --arch=LIST     only these (default: x86_64,arm64,mips,alpha,parisc)
#   --users         also compile the users on the cross architectures (x86_64 always does)
#   --no-checkpatch skip scripts/checkpatch.pl
# Applies without fuzz, as quilt in debian/patches would. Also runs scripts/checkpatch.pl on
# each patch and prints its findings (kernel-patches/README.md explains the ones kept). Prints
# "patch N builds: ARCH(objects compiled)...: NAME" per patch and exits non-zero on the first
# patch that does not build on some architecture.
# Compiler output is cached by ccache like build.sh's, and the verdict by the hash of all its
# inputs (series, tree, compilers, configs, this script): the same inputs print the stored
# output again; CDS_CHECK_FRESH=1 checks anyway. Part of tools/run-tests.sh.
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
. "$TOP/tools/deps.sh" # install_packages
SERIES_DIR=${CDS_SERIES_DIR:-$TOP/kernel-patches/linux-6.12}
WORK=${CDS_KERNEL_WORK:-$TOP/build-vm/kernel}
SRC=$WORK/check-src
CACHE=${CDS_VM_CACHE:-/var/cache/coredump-socket-vm}
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
ALL_ARCHES="x86_64 arm64 mips alpha parisc"
USERS="fs/pidfs.o fs/coredump.o fs/exec.o kernel/fork.o kernel/pid.o kernel/exit.o kernel/signal.o
kernel/ptrace.o net/socket.o net/unix/af_unix.o net/core/sock.o net/core/scm.o
fs/notify/fanotify/fanotify_user.o"
# What to compile, on every architecture, when a patch changes a header: its users that the
# series cares about. A header not listed here fails the check until it is added.
declare -A HEADER_USERS=(
        [include/linux/net.h]="net/socket.o net/unix/af_unix.o fs/coredump.o"
        [arch/mips/include/asm/socket.h]="net/socket.o net/unix/af_unix.o fs/coredump.o"
        [include/net/scm.h]="net/core/scm.o net/unix/af_unix.o net/netlink/af_netlink.o"
        [include/uapi/linux/pidfd.h]="fs/pidfs.o kernel/fork.o kernel/pid.o net/core/sock.o fs/coredump.o"
        [include/linux/pidfs.h]="fs/pidfs.o kernel/fork.o kernel/exit.o kernel/pid.o fs/coredump.o net/unix/af_unix.o"
        [include/linux/pid.h]="kernel/pid.o kernel/fork.o kernel/exit.o fs/pidfs.o"
        [include/linux/sched.h]="kernel/exit.o kernel/fork.o kernel/ptrace.o fs/pidfs.o"
        [include/uapi/linux/coredump.h]="fs/coredump.o"
)
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
                CC="ccache ${cross}gcc" HOSTCC="ccache gcc" -s -j"${KJOBS:-$JOBS}" "$@"
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
                KJOBS=1 configure "$arch" >"$WORK/configure-$arch.log" 2>&1 &
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

# The .o files of the C files a patch touches, and of the users of the headers it touches.
touched_objects() {
        local h
        sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' "$1"
        for h in $(sed -n 's|^+++ b/\(.*\.h\)$|\1|p' "$1"); do
                if [ -z "${HEADER_USERS[$h]:-}" ]; then
                        log "no users known for $h: add it to HEADER_USERS"
                        return 1
                fi
                echo "${HEADER_USERS[$h]}"
        done
}

# Compiles what a patch needs on ARCH; prints how many objects. Called in a condition, where
# set -e does not apply: every step checks its status.
build_patch() { # ARCH PATCH
        local arch=$1 objs
        objs=$(touched_objects "$2") || return 1
        if [ "$arch" = x86_64 ] || [ "$CROSS_USERS" = 1 ]; then objs="$objs $USERS"; fi
        objs=$(echo $objs | tr ' ' '\n' | sort -u | tr '\n' ' ')
        if [ -z "${objs// /}" ]; then
                log "$(basename "$2") touches nothing to compile"
                return 1
        fi
        kmake "$arch" KCFLAGS=-Werror $objs >&2 || return 1
        echo $objs | wc -w
}

# The inputs of a verdict: the series, the tree, the compilers, the configs, this script.
verdict_key() {
        local p
        {
                dpkg-query -W -f='${Package} ${Version}\n' $PACKAGES
                echo "$ARCHES $CROSS_USERS $CHECKPATCH"
                cat "$0" "$HERE/check.config" "$HERE/guest.config" "$SERIES_DIR/series"
                while read -r p; do cat "$SERIES_DIR/$p"; done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$SERIES_DIR/series")
        } | sha256sum | cut -c1-16
}

check() {
        local p n=0 arch t0 failed built count
        export CCACHE_DIR=$CACHE/ccache CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1
        t0=$(date +%s)
        rm -rf "$SRC"
        mkdir -p "$SRC"
        log "unpacking linux-source-6.12"
        tar -C "$SRC" --strip-components=1 -xf "$SRC_TARBALL"
        configure_all
        while read -r p; do
                n=$((n + 1))
                # without fuzz, as quilt and dpkg-source apply debian/patches
                patch -d "$SRC" -p1 -s -N -F0 --no-backup-if-mismatch <"$SERIES_DIR/$p"
                failed=
                built=
                for arch in $ARCHES; do
                        if count=$(build_patch "$arch" "$SERIES_DIR/$p"); then
                                built="$built $arch($count)"
                        else
                                failed="$failed $arch"
                        fi
                done
                if [ -n "$failed" ]; then
                        echo "patch $n does not build on$failed: $p"
                        exit 1
                fi
                echo "patch $n builds:$built: $p"
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

# A verdict is kept by the hash of everything it depends on, like build.sh's kernels: the same
# inputs print the stored output again (CDS_CHECK_FRESH=1 checks anyway).
main() {
        local arch key verdict
        install_packages $PACKAGES >&2
        for arch in $ARCHES; do cross_compile "$arch" >/dev/null; done
        key=$(verdict_key)
        verdict=$CACHE/check-series/$key
        if [ -f "$verdict" ] && [ "${CDS_CHECK_FRESH:-0}" != 1 ]; then
                log "the verdict of $(date -r "$verdict" '+%F %T') for the same inputs ($verdict)"
                cat "$verdict"
                return 0
        fi
        mkdir -p "$CACHE/check-series"
        check | tee "$verdict.tmp"
        mv "$verdict.tmp" "$verdict"
}

main
