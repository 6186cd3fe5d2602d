#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests-vm/kernel/debian-package.sh [--config=cloud-amd64|guest] [--print-key]
#
# Builds kernel-patches/linux-6.12 as a distribution ships it: a linux-image .deb of Linux 6.12
# from Debian's own patched tree (the linux-source-6.12 package) with the series applied by quilt,
# as debian/patches would apply it, built the way the Debian Kernel Handbook describes a custom
# kernel from Debian kernel source ("Building a custom kernel from Debian kernel source":
# Debian's config, then `make bindeb-pkg`). With --config=cloud-amd64 (the default) the config is
# Debian's own for the cloud-amd64 flavour of the same version (linux-config-6.12), with the
# handbook's changes for a local build: no module signing with Debian's keys, no debug info.
# --config=guest takes this directory's small guest.config instead (minutes, not an hour).
#
# Debian's packaging itself (debian/rules, debian/bin/test-patches) needs the linux source
# package's debian/ directory, which this machine's package mirror does not serve (its
# .debian.tar.xz answers 404): the handbook's way is the one that runs here.
#
# Prints the path of a directory holding:
#   linux-image-*.deb   the package (and linux-headers-*.deb, linux-libc-dev_*.deb)
#   vmlinuz             the kernel image taken out of the package (what tests-vm/run and
#                       selftests.sh boot with --kernel=)
#   build.log           the whole build output, and its time
# Cached under /var/cache/coredump-socket-vm/debpkg/KEY (KEY: the source and config package
# versions, the series, the config choice and this script); compiler output by ccache.
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
. "$TOP/tools/deps.sh" # install_packages
CACHE=${CDS_VM_CACHE:-/var/cache/coredump-socket-vm}
SERIES_DIR=$TOP/kernel-patches/linux-6.12
WORK=${CDS_KERNEL_WORK:-$TOP/build-vm/debpkg}
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
DEBIAN_CONFIG=/usr/src/linux-config-6.12/config.amd64_none_cloud-amd64.xz
LOCALVERSION=-cds1 # the package is linux-image-6.12.N-cds1, beside Debian's own kernels (the
                   # config's own CONFIG_LOCALVERSION is emptied)
RECIPE=1
PACKAGES="linux-source-6.12 linux-config-6.12 ccache quilt flex bison bc kmod cpio rsync libelf-dev libssl-dev debhelper dpkg-dev"
JOBS=$(nproc)

CONFIG=cloud-amd64
PRINT_KEY=0
for a in "$@"; do
        case $a in
        --config=cloud-amd64 | --config=guest) CONFIG=${a#--config=} ;;
        --print-key) PRINT_KEY=1 ;;
        *) echo "usage: $0 [--config=cloud-amd64|guest] [--print-key]" >&2; exit 2 ;;
        esac
done

log() { echo "debian-package: $*" >&2; }

cache_key() {
        {
                echo "recipe $RECIPE config $CONFIG"
                dpkg-query -W -f='${Version}\n' linux-source-6.12 linux-config-6.12
                cat "$0" "$SERIES_DIR/series" "$SERIES_DIR"/*.patch
                [ "$CONFIG" = cloud-amd64 ] || cat "$HERE/guest.config"
        } | sha256sum | cut -c1-16
}

# Debian's tree with the series pushed by quilt, as dpkg-source does with debian/patches (no
# fuzz; no ~/.quiltrc).
prepare_tree() {
        local src=$1
        rm -rf "$src"
        mkdir -p "$src"
        tar -C "$src" --strip-components=1 -xf "$SRC_TARBALL" || return 1
        (cd "$src" && QUILT_PATCHES="$SERIES_DIR" QUILT_PC=.pc quilt --quiltrc=/dev/null push -a -q --fuzz=0)
}

# The handbook's local-build changes to Debian's config: no signing with Debian's keys (not
# ours), no debug info (hours and gigabytes, not needed to boot and test). Each step checked:
# errexit does not hold inside a function called as a condition.
configure() {
        local src=$1
        if [ "$CONFIG" = cloud-amd64 ]; then
                xzcat "$DEBIAN_CONFIG" >"$src/.config" || return 1
                "$src"/scripts/config --file "$src/.config" \
                        --disable MODULE_SIG --disable MODULE_SIG_ALL --set-str MODULE_SIG_KEY "" \
                        --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
                        --disable DEBUG_INFO_DWARF5 --disable DEBUG_INFO_DWARF4 \
                        --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --disable DEBUG_INFO_BTF \
                        --enable DEBUG_INFO_NONE || return 1
        else
                make -C "$src" -s tinyconfig || return 1
                "$src"/scripts/kconfig/merge_config.sh -m -O "$src" "$src/.config" "$HERE/guest.config" >/dev/null ||
                        return 1
        fi
        "$src"/scripts/config --file "$src/.config" --set-str LOCALVERSION "" || return 1
        make -C "$src" -s olddefconfig LOCALVERSION="$LOCALVERSION"
}

build() {
        local src=$1
        export CCACHE_DIR=$CACHE/ccache-debpkg CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1
        export KBUILD_BUILD_TIMESTAMP='2025-01-01' KBUILD_BUILD_USER=cds KBUILD_BUILD_HOST=debian-package
        export DEBEMAIL="maintainers@users.noreply.a-seed-025fb2a2.example" DEBFULLNAME="coredump-socket developers"
        mkdir -p "$CCACHE_DIR" || return 1
        prepare_tree "$src" || return 1
        configure "$src" || return 1
        make -C "$src" -j"$JOBS" CC="ccache gcc" LOCALVERSION="$LOCALVERSION" \
                KDEB_PKGVERSION="$(make -C "$src" -s kernelversion)-1+cds1" bindeb-pkg
}

main() {
        local key out src t0 deb
        install_packages $PACKAGES >&2
        key=$(cache_key)
        if [ "$PRINT_KEY" = 1 ]; then echo "$key"; return 0; fi
        out=$CACHE/debpkg/$key
        if [ -f "$out/vmlinuz" ]; then
                log "cached $out"
                echo "$out"
                return 0
        fi
        mkdir -p "$out" "$WORK"
        src=$WORK/linux-6.12
        t0=$(date +%s)
        log "building a linux-image package ($CONFIG config) into $out"
        rm -f "$WORK"/*.deb "$WORK"/linux-upstream_*
        if ! build "$src" >"$out/build.log" 2>&1; then
                tail -40 "$out/build.log" >&2
                log "build failed, log: $out/build.log"
                exit 1
        fi
        rm -f "$out"/*.deb "$WORK"/linux-image-*-dbg_*.deb "$WORK"/linux-upstream_*
        # linux-headers only where modules are (not with the guest config)
        mv "$WORK"/linux-image-*.deb "$WORK"/linux-libc-dev_*.deb "$out"/
        if compgen -G "$WORK/linux-headers-*.deb" >/dev/null; then mv "$WORK"/linux-headers-*.deb "$out"/; fi
        deb=$(ls "$out"/linux-image-*.deb | head -n1)
        rm -rf "$out/x"
        dpkg-deb -x "$deb" "$out/x"
        cp "$out"/x/boot/vmlinuz-* "$out/vmlinuz.tmp"
        rm -rf "$out/x"
        mv "$out/vmlinuz.tmp" "$out/vmlinuz"
        echo "built in $(( $(date +%s) - t0 )) s on $JOBS CPUs" >>"$out/build.log"
        log "built $(basename "$deb") in $(( $(date +%s) - t0 )) s on $JOBS CPUs"
        echo "$out"
}

main
