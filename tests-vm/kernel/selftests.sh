#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests-vm/kernel/selftests.sh [--unpatched] [--kernel=BZIMAGE] [--headers=DIR] [--expect=pass|fail]
#                              [--all] [TEST...]
#
# Runs the kernel's own coredump and pidfd selftests of Linux 7.3 (from Debian's
# linux-source-7.3 package) as root in a minimal initramfs VM booted under qemu, on Linux 6.12
# with kernel-patches/linux-6.12 (default), on unpatched 6.12 (--unpatched) or on any bzImage
# (--kernel=). The selftests are always compiled against the uapi headers of the patched 6.12
# (build.sh; --headers= takes another headers_install tree), so the same binaries run on every
# kernel.
#
# TEST is DIR/NAME under tools/testing/selftests; the default is the set the coredump socket
# ABI is proven by: coredump/stackdump_test, coredump/coredump_socket_test,
# coredump/coredump_socket_protocol_test, pidfd/pidfd_info_test and net/af_unix/scm_pidfd
# (SO_PEERPIDFD and SCM_PIDFD, also of an already reaped peer), and this project's
# cds/pidfd_coredump_zombie (PIDFD_INFO_COREDUMP of zombies, patch 18). --all adds every other pidfd
# selftest (informational: several test features 6.12 does not have, like pidfs file handles).
#
# Prints each selftest's TAP output, one line "selftest NAME: pass|fail|skip (exit N)" per
# binary, a summary line and "selftests: as expected" or "selftests: NOT as expected".
# --expect=pass (default) exits 1 unless every default test passed;
# --expect=fail exits 1 if any test that needs the series passed (used to show that the unpatched
# kernel lacks the ABI; stackdump_test tests pipe helpers and passes there too).
# Console logs stay in build-vm/selftests/.
set -euo pipefail
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${CDS_VM_CACHE:-/var/cache/coredump-socket-vm}
WORK=$TOP/build-vm/selftests
ST_TARBALL=/usr/src/linux-source-7.3.tar.xz
ST_PACKAGE=linux-source-7.3
BOOT_TIMEOUT=${CDS_ST_TIMEOUT:-900}
GUEST_MEMORY_MIB=3072 # the socket tests write ~1 GiB cores (128 untouched thread stacks) to tmpfs
DEFAULT_TESTS="coredump/stackdump_test coredump/coredump_socket_test coredump/coredump_socket_protocol_test pidfd/pidfd_info_test net/af_unix/scm_pidfd cds/pidfd_coredump_zombie"
# what the series is needed for (stackdump_test tests pipe helpers, which 6.12 already has)
NEEDS_SERIES="coredump/coredump_socket_test coredump/coredump_socket_protocol_test pidfd/pidfd_info_test net/af_unix/scm_pidfd cds/pidfd_coredump_zombie"
MORE_TESTS="pidfd/pidfd_test pidfd/pidfd_open_test pidfd/pidfd_poll_test pidfd/pidfd_wait pidfd/pidfd_fdinfo_test pidfd/pidfd_getfd_test pidfd/pidfd_setns_test pidfd/pidfd_file_handle_test pidfd/pidfd_bind_mount pidfd/pidfd_xattr_test pidfd/pidfd_setattr_test pidfd/pidfd_autoreap_test"

UNPATCHED=0
KERNEL=
HEADERS=
EXPECT=pass
TESTS=
for a in "$@"; do
        case $a in
        --unpatched) UNPATCHED=1 ;;
        --kernel=*) KERNEL=$(realpath "${a#--kernel=}") ;;
        --headers=*) HEADERS=$(realpath "${a#--headers=}") ;;
        --expect=pass|--expect=fail) EXPECT=${a#--expect=} ;;
        --all) TESTS="$DEFAULT_TESTS $MORE_TESTS" ;;
        -*) echo "usage: $0 [--unpatched] [--kernel=BZIMAGE] [--headers=DIR] [--expect=pass|fail] [--all] [TEST...]" >&2; exit 2 ;;
        *) TESTS="$TESTS $a" ;;
        esac
done
TESTS=${TESTS:-$DEFAULT_TESTS}

log() { echo "selftests: $*" >&2; }

install_packages() {
        local p need=
        for p in $ST_PACKAGE busybox-static qemu-system-x86 cpio; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need="$need $p"
        done
        [ -z "$need" ] && return 0
        log "installing$need"
        # linux-source-7.3 comes from trixie-backports, added pinned low (nothing is upgraded from it)
        sh "$TOP/tests-vm/setup-sources.sh" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >&2
}

# The selftests of 7.3, built against HEADERS; cached by the source version and the headers.
build_selftests() {
        local headers=$1 key out src t0
        key=$( { dpkg-query -W -f='${Version}\n' $ST_PACKAGE; find "$headers" -type f -print0 | sort -z | xargs -0 cat; cat "$0" "$HERE/pidfd_coredump_zombie.c"; } | sha256sum | cut -c1-16)
        out=$CACHE/selftests/$key
        if [ -x "$out/pidfd/pidfd_info_test" ] && [ -x "$out/coredump/coredump_socket_test" ] &&
                [ -x "$out/net/af_unix/scm_pidfd" ] && [ -x "$out/cds/pidfd_coredump_zombie" ]; then
                echo "$out"
                return 0
        fi
        t0=$(date +%s)
        src=$WORK/linux-7.3
        rm -rf "$src" "$out.tmp"
        mkdir -p "$src" "$out.tmp"
        tar -C "$src" --strip-components=1 -xf "$ST_TARBALL" linux-source-7.3/tools linux-source-7.3/scripts linux-source-7.3/Makefile
        # bookworm's glibc does not pull in offsetof() where coredump_test_helpers.c uses it
        CFLAGS="-include stddef.h" make -s -C "$src/tools/testing/selftests" TARGETS="coredump pidfd" \
                KHDR_INCLUDES="-isystem $headers/include" O="$WORK/out" >&2
        mkdir -p "$out.tmp/coredump" "$out.tmp/pidfd" "$out.tmp/net/af_unix" "$out.tmp/cds"
        cp "$WORK"/out/kselftest/coredump/* "$src/tools/testing/selftests/coredump/stackdump" "$out.tmp/coredump/"
        cp "$WORK"/out/kselftest/pidfd/* "$out.tmp/pidfd/"
        # only scm_pidfd of net/af_unix: the directory's Makefile also builds BPF programs (clang)
        gcc -Wall -include stddef.h -isystem "$headers/include" -I"$src/tools/testing/selftests" \
                -o "$out.tmp/net/af_unix/scm_pidfd" "$src/tools/testing/selftests/net/af_unix/scm_pidfd.c" >&2
        gcc -Wall -Wextra -Werror -O2 -pthread -isystem "$headers/include" \
                -o "$out.tmp/cds/pidfd_coredump_zombie" "$HERE/pidfd_coredump_zombie.c" >&2
        rm -rf "$out"
        mv "$out.tmp" "$out"
        log "selftests built in $(( $(date +%s) - t0 )) s"
        echo "$out"
}

copy_with_libs() {
        local bin=$1 root=$2 lib
        for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' || true); do
                mkdir -p "$root$(dirname "$lib")"
                cp -L -n "$lib" "$root$lib"
        done
}

make_initramfs() {
        local st=$1 img=$2 root t
        root=$WORK/initramfs
        rm -rf "$root"
        mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,st,etc}
        cp /bin/busybox "$root/bin/busybox"
        for t in sh mount mkdir cat awk mktemp basename mv rm sed poweroff sleep ls tr head uname; do
                ln -s busybox "$root/bin/$t"
        done
        cp -a "$st"/coredump "$st"/pidfd "$st"/net "$st"/cds "$root/st/"
        for t in "$root"/st/*/* "$root"/st/net/*/*; do [ -f "$t" ] && copy_with_libs "$t" "$root"; done
        echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
        cat >"$root/init" <<EOF
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo "@@ST-BEGIN kernel=\$(uname -r) core_modes=\$(cat /proc/sys/kernel/core_modes 2>/dev/null | tr '\n' ,)"
for t in $TESTS; do
        cd /st/\${t%/*}
        echo "@@ST-RUN \$t"
        ./\${t##*/} 2>&1
        echo "@@ST-EXIT \$t \$?"
done
echo "@@ST-END"
poweroff -f
EOF
        chmod +x "$root/init"
        (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$img"
}

boot() {
        local kernel=$1 img=$2 console=$3 rc=0
        timeout --foreground -k 5 "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -smp 1 -m "$GUEST_MEMORY_MIB" \
                -nographic -no-reboot -nic none -kernel "$kernel" -initrd "$img" \
                -append 'console=ttyS0 panic=-1 loglevel=4' </dev/null >"$console" 2>&1 || rc=$?
        return $rc
}

report() {
        local console=$1 t rc verdict pass=0 fail=0 skip=0 bad=0
        sed -n '/@@ST-BEGIN/,/@@ST-END/p' "$console" | tr -d '\r'
        for t in $TESTS; do
                rc=$(tr -d '\r' <"$console" | sed -n "s|^@@ST-EXIT $t \([0-9]*\)$|\1|p" | tail -1)
                case $rc in
                0) verdict=pass; pass=$((pass + 1)) ;;
                4) verdict=skip; skip=$((skip + 1)) ;;
                "") verdict=fail; rc=none; fail=$((fail + 1)) ;;
                *) verdict=fail; fail=$((fail + 1)) ;;
                esac
                echo "selftest $t: $verdict (exit $rc)"
                case $EXPECT/$verdict in
                pass/pass) ;;
                pass/*) case " $DEFAULT_TESTS " in *" $t "*) bad=1 ;; esac ;;
                fail/pass) case " $NEEDS_SERIES " in *" $t "*) bad=1 ;; esac ;;
                esac
        done
        echo "selftests: $pass passed, $fail failed, $skip skipped (expected: $EXPECT)"
        if [ $bad = 0 ]; then echo "selftests: as expected"; else echo "selftests: NOT as expected"; fi
        return $bad
}

main() {
        local kdir hdr st img console t0
        install_packages
        if [ -n "$HEADERS" ]; then hdr=$HEADERS; else hdr=$("$HERE/build.sh")/headers; fi
        if [ -z "$KERNEL" ]; then
                if [ "$UNPATCHED" = 1 ]; then kdir=$("$HERE/build.sh" --unpatched); else kdir=$("$HERE/build.sh"); fi
                KERNEL=$kdir/bzImage
        fi
        st=$(build_selftests "$hdr")
        mkdir -p "$WORK"
        img=$WORK/initramfs.gz
        make_initramfs "$st" "$img"
        console=$WORK/console-$(basename "$(dirname "$KERNEL")").log
        log "booting $KERNEL"
        t0=$(date +%s)
        boot "$KERNEL" "$img" "$console" || log "qemu exit $? (console: $console)"
        log "VM run $(( $(date +%s) - t0 )) s"
        report "$console"
}

main
