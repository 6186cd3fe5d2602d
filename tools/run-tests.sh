#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what is missing, builds twice (warnings as errors; and with ASan+UBSan), and runs
# the whole suite in both: unit tests, then integration tests that crash real programs on
# the live kernel; fuzzing; the Debian package, built and checked by lintian; then the VM
# tests (tests-vm/run: that package installed with apt in a systemd guest under qemu, upgraded,
# removed and purged there). Global settings the tests touch are restored whatever happens.
set -eu
cd "$(dirname "$0")/.."
. tools/deps.sh
require_root
install_packages $BUILD_PACKAGES $TEST_PACKAGES
ensure_worker_user
getent passwd cdstest >/dev/null || useradd --no-create-home --home-dir / --shell /usr/sbin/nologin cdstest

# systemd's own coredumpctl, to check compatibility against: only the binary, because the
# package's postinst rewrites core_pattern, core_pipe_limit and suid_dumpable machine-wide.
# systemd's own tools to check compatibility against, unpacked, not installed: the
# systemd-coredump package's postinst rewrites core_pattern, core_pipe_limit and suid_dumpable
# machine-wide. $1: build dir, $2: package, $3: the binary inside it.
fetch_systemd_tool() { # (sh has no local variables: names here are unique)
        sdt_dir=$1/$2
        [ -x "$sdt_dir/$3" ] && return 0
        sdt_tmp=$(mktemp -d)
        (cd "$sdt_tmp" && apt-get download -qq "$2" >/dev/null 2>&1) ||
                { apt-get update -qq && (cd "$sdt_tmp" && apt-get download -qq "$2" >/dev/null); }
        mkdir -p "$sdt_dir"
        dpkg -x "$sdt_tmp"/"$2"_*.deb "$sdt_dir"
        rm -rf "$sdt_tmp"
}

count() { # the number meson printed after "$1:" in log $2, or 0
        n=$(sed -n "s/^$1: *\([0-9]*\).*/\1/p" "$2" | tail -n1)
        echo "${n:-0}"
}

saved_pattern=$(cat /proc/sys/kernel/core_pattern)
saved_suid=$(cat /proc/sys/fs/suid_dumpable)
restore() {
        printf '%s' "$saved_pattern" > /proc/sys/kernel/core_pattern
        printf '%s' "$saved_suid" > /proc/sys/fs/suid_dumpable
}
trap restore EXIT
trap 'exit 130' INT TERM

passed=0 failed=0 skipped=0
# every package the tests use is installed above: a test that would skip for a missing tool or
# compiler fails instead
export CDS_TESTS_COMPLETE=1
run_suite() { # build-dir meson-setup-args...
        dir=$1
        shift
        if [ -f "$dir/build.ninja" ]; then
                meson configure "$dir" "$@" >/dev/null
        else
                meson setup "$dir" "$@" >/dev/null
        fi
        ninja -C "$dir" >/dev/null
        ninja -C "$dir" bench >/dev/null # not run here (bench/run.py), but built without a warning
        fetch_systemd_tool "$dir" systemd-coredump usr/bin/coredumpctl
        # imports our sidecar records into a journal file, to read them with systemd's coredumpctl
        fetch_systemd_tool "$dir" systemd-journal-remote lib/systemd/systemd-journal-remote
        meson_test -C "$dir"
}
meson_test() { # meson test arguments...: runs them, adds the results to the totals
        log=$(mktemp)
        rc=0
        meson test --print-errorlogs "$@" 2>&1 | tee "$log" || rc=1
        passed=$((passed + $(count Ok "$log")))
        failed=$((failed + $(count Fail "$log") + $(count Timeout "$log")))
        skipped=$((skipped + $(count Skipped "$log")))
        rm -f "$log"
        [ $rc = 0 ] || failed=$((failed > 0 ? failed : 1))
}

run_suite build -Dprefix=/usr -Dwerror=true
# The integration suite once more in pipe mode, as on a kernel without the coredump socket (Debian
# stable's 6.12): every case pipe mode can serve runs through the pipe helper, the others are
# skipped, each saying why (tests-vm/run --host-suite --stock=6.12 runs it on that kernel itself)
export CDS_TEST_MODE=pipe
meson_test -C build --no-rebuild --suite integration
unset CDS_TEST_MODE
# the sanitizer build also lets tests make workers misbehave (crash, hang, malformed messages)
run_suite build-sanitizers -Dprefix=/usr -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dworker-test-faults=true

# The fuzz targets (test/fuzz/) built with clang's libFuzzer, ASan and UBSan: each runs for
# fuzz-runs executions (meson_options.txt) from its committed corpus; a finding fails the run.
install_packages $FUZZ_PACKAGES
[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzzers=true -Dintegration-tests=false -Dwerror=true \
        -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-fuzz >/dev/null
meson_test -C build-fuzz --suite fuzz

# The Debian package (debian/, tools/build-deb.sh): built with its unit tests, lintian
# (pedantic) must report no error or warning, then the same build packed again with a higher
# version for the upgrade test. The VM runs below install these packages with apt.
deb_version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
if tools/build-deb.sh --lintian --upgrade-version="$deb_version+vmtest1" build-deb; then
        echo "deb: built and lintian-clean; the files it installs:"
        dpkg-deb -c build-deb/coredump-socket_"$deb_version"_*.deb | awk '{ print "  " $1 " " $6 }'
        passed=$((passed + 1))
        export CDS_VM_DEBS=$PWD/build-deb
else
        echo "deb: tools/build-deb.sh failed"
        failed=$((failed + 1))
fi

# The same project installed in a systemd machine under qemu (tests-vm/run): socket
# activation, boot ordering, the units' sandbox, crashes of services. CDS_SKIP_VM=1 leaves it out.
run_vm() { # tests-vm/run arguments...
        log=$(mktemp)
        tests-vm/run "$@" 2>&1 | tee "$log" || true
        line=$(grep '^vm-tests: ' "$log" | tail -n1)
        if [ -n "$line" ]; then
                passed=$((passed + $(echo "$line" | sed 's/.* \([0-9]*\) passed.*/\1/')))
                failed=$((failed + $(echo "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')))
                skipped=$((skipped + $(echo "$line" | sed 's/.* \([0-9]*\) skipped.*/\1/')))
        else
                echo "tests-vm/run $* ended without results"
                failed=$((failed + 1))
        fi
        rm -f "$log"
}
# kernel-patches/linux-6.12: each patch compiled on its own on five architectures, then
# Linux 6.12 built from linux-source-6.12 with and without the series
# (tests-vm/kernel/build.sh, cached), the coredump, pidfd and scm_pidfd selftests of 7.3 in a VM on both
# (tests-vm/kernel/selftests.sh: they pass with the series, fail without), then the VM suite on
# the patched kernel, where coredump-socket runs in socket mode.
run_selftests() { # selftests.sh arguments...
        log=$(mktemp)
        tests-vm/kernel/selftests.sh "$@" 2>&1 | tee "$log" # sh has no pipefail: the log has the verdict
        case " $* " in
        *" --expect=fail "*)
                # one test: the unpatched kernel fails every selftest that needs the series
                if grep -q '^selftests: as expected$' "$log"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
        *)
                passed=$((passed + $(grep -c '^selftest .*: pass' "$log" || true)))
                failed=$((failed + $(grep -c '^selftest .*: fail' "$log" || true)))
                skipped=$((skipped + $(grep -c '^selftest .*: skip' "$log" || true)))
                grep -q '^selftests: ' "$log" || failed=$((failed + 1)) ;;
        esac
        rm -f "$log"
}
# Every patch of the series builds on its own on x86_64, arm64, mips, alpha and parisc (-Werror;
# tests-vm/kernel/check-series.sh, which also prints checkpatch's findings): one test per patch.
run_check_series() {
        log=$(mktemp)
        tests-vm/kernel/check-series.sh 2>&1 | tee "$log"
        passed=$((passed + $(grep -c '^patch [0-9]* builds: ' "$log" || true)))
        grep -q '^check-series: all [0-9]* patches build' "$log" || failed=$((failed + 1))
        rm -f "$log"
}
run_kernel_patches() {
        local kdir
        run_check_series
        if ! kdir=$(tests-vm/kernel/build.sh); then
                echo "tests-vm/kernel/build.sh failed"
                failed=$((failed + 1))
                return
        fi
        run_selftests
        run_selftests --unpatched --expect=fail
        run_vm --kernel="$kdir/bzImage" --no-lifecycle # the package's lifecycle ran on both stock kernels
}

if [ "${CDS_SKIP_VM:-0}" != 1 ]; then
        run_vm                # Debian's 7.3 kernel: socket mode
        run_vm --stock=6.12   # Debian's 6.12 LTS kernel, no socket: pipe mode
        run_kernel_patches    # 6.12 + kernel-patches/linux-6.12: socket mode
else
        skipped=$((skipped + 1))
fi

echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
