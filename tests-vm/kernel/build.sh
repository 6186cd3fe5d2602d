#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests-vm/kernel/build.sh [--unpatched] [--print-key]
#
# Builds Linux 6.12 LTS from Debian's linux-source-6.12 package with kernel-patches/linux-6.12
# applied (or without them: --unpatched) and the small guest config of this directory, and
# prints the path of a directory holding:
#   bzImage    the kernel tests-vm/run boots with --kernel=
#   headers/   its `make headers_install` output (for building the selftests against it)
#   build.log  the whole build output
# The result is cached under /var/cache/coredump-socket-vm/kbuild/KEY, KEY being a hash of the
# source package version, the series and its patches, guest.config and this script; compiler
# output is cached by ccache (/var/cache/coredump-socket-vm/ccache), so rebuilding after a
# change to one patch recompiles only what changed. Needs root only to install missing
# packages; progress goes to stderr, the directory to stdout.
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${CDS_VM_CACHE:-/var/cache/coredump-socket-vm}
SERIES_DIR=$TOP/kernel-patches/linux-6.12
CONFIG=$HERE/guest.config
WORK=${CDS_KERNEL_WORK:-$TOP/build-vm/kernel}
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
RECIPE=3        # bump when the steps below change in a way the key does not see
PACKAGES="linux-source-6.12 ccache flex bison bc libelf-dev libssl-dev cpio rsync"
JOBS=$(nproc)

PATCHED=1
PRINT_KEY=0
for a in "$@"; do
        case $a in
        --unpatched) PATCHED=0 ;;
        --print-key) PRINT_KEY=1 ;;
        *) echo "usage: $0 [--unpatched] [--print-key]" >&2; exit 2 ;;
        esac
done

log() { echo "kernel: $*" >&2; }

missing_packages() {
        local p out=
        for p in $PACKAGES; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out="$out $p"
        done
        echo "$out"
}

install_packages() {
        local need
        need=$(missing_packages)
        [ -z "$need" ] && return 0
        log "installing$need"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >&2
}

series_patches() {
        grep -v -e '^#' -e '^[[:space:]]*$' "$SERIES_DIR/series" | awk '{print $1}'
}

cache_key() {
        {
                echo "recipe $RECIPE patched $PATCHED"
                dpkg-query -W -f='${Version}\n' linux-source-6.12
                cat "$CONFIG" "$0"
                if [ "$PATCHED" = 1 ]; then
                        cat "$SERIES_DIR/series"
                        series_patches | while read -r p; do cat "$SERIES_DIR/$p"; done
                fi
        } | sha256sum | cut -c1-16
}

apply_series() {
        local src=$1 p
        series_patches | while read -r p; do
                log "applying $p"
                patch -d "$src" -p1 -s -N --no-backup-if-mismatch <"$SERIES_DIR/$p" >&2
        done
}

# A fixed source path and fixed build identity let ccache hit across runs and trees.
prepare_tree() {
        local src=$1
        rm -rf "$src"
        mkdir -p "$src"
        tar -C "$src" --strip-components=1 -xf "$SRC_TARBALL"
        [ "$PATCHED" = 1 ] && apply_series "$src"
        return 0
}

check_config() {
        local frag=$1 cfg=$2 k v got bad=0
        while IFS='=' read -r k v; do
                case $k in CONFIG_*) ;; *) continue ;; esac
                got=$(grep -E "^$k=" "$cfg" | cut -d= -f2- || true)
                [ -z "$got" ] && got=n
                if [ "$got" != "$v" ]; then
                        log "config $k wanted $v, got $got"
                        bad=1
                fi
        done <"$frag"
        return $bad
}

build() {
        local src=$1 out=$2 obj=$3
        export CCACHE_DIR=$CACHE/ccache CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1
        export KBUILD_BUILD_TIMESTAMP='2025-01-01' KBUILD_BUILD_USER=cds KBUILD_BUILD_HOST=tests-vm
        mkdir -p "$obj" "$CCACHE_DIR"
        make -C "$src" O="$obj" -s tinyconfig
        "$src"/scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$CONFIG" >/dev/null
        make -C "$src" O="$obj" -s olddefconfig
        check_config "$CONFIG" "$obj/.config" || { log "config fragment did not survive olddefconfig"; return 1; }
        make -C "$src" O="$obj" -j"$JOBS" CC="ccache gcc" bzImage
        make -C "$src" O="$obj" -s headers_install INSTALL_HDR_PATH="$out/headers.tmp"
        cp "$obj/arch/x86/boot/bzImage" "$out/bzImage.tmp"
        cp "$obj/.config" "$out/config"
}

main() {
        local key out src obj t0
        [ -d "$SERIES_DIR" ] || { echo "$SERIES_DIR: missing" >&2; exit 1; }
        install_packages
        key=$(cache_key)
        if [ "$PRINT_KEY" = 1 ]; then echo "$key"; return 0; fi
        out=$CACHE/kbuild/$key
        if [ -f "$out/bzImage" ] && [ -d "$out/headers" ]; then
                log "cached $out"
                echo "$out"
                return 0
        fi
        mkdir -p "$out" "$WORK"
        if [ "$PATCHED" = 1 ]; then src=$WORK/linux-6.12; obj=$WORK/obj-patched
        else src=$WORK/linux-6.12-unpatched; obj=$WORK/obj-unpatched; fi
        t0=$(date +%s)
        log "building ($([ "$PATCHED" = 1 ] && echo "with the series" || echo unpatched)) into $out"
        prepare_tree "$src"
        rm -rf "$out/headers.tmp"
        if ! build "$src" "$out" "$obj" >"$out/build.log" 2>&1; then
                tail -40 "$out/build.log" >&2
                log "build failed, log: $out/build.log"
                exit 1
        fi
        grep -E '^[^ ]+:[0-9]+:[0-9]+: warning:' "$out/build.log" >&2 || true
        rm -rf "$out/headers"
        mv "$out/headers.tmp" "$out/headers"
        mv "$out/bzImage.tmp" "$out/bzImage"
        log "built in $(( $(date +%s) - t0 )) s; ccache: $(CCACHE_DIR=$CACHE/ccache ccache -s 2>/dev/null | grep -iE 'hits|hit rate' | head -2 | tr -s ' ' | tr '\n' ';')"
        echo "$out"
}

main
