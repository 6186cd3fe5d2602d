# The switch in both directions through the conflict alone, after the purge: installing the
# package again takes core_pattern from systemd-coredump (which apt removes); a pattern an
# administrator set meanwhile is left alone by the package's removal; installing
# systemd-coredump again removes the package, whose prerm gives the pattern back, and
# systemd-coredump's own pattern wins and stores the next crash.
. /usr/local/lib/cds-vmtest/tests/lib.sh
apt_get install "$(deb upgrade)" || fail "reinstalling the package failed"
installed systemd-coredump && fail "systemd-coredump is still installed beside the package"
[ "$(cat /proc/sys/kernel/core_pattern)" = "$(expected_pattern)" ] || fail "not registered after the reinstall"
pid=$(crash segv)
wait_listed $pid || fail "PID $pid not recorded after the reinstall"
# another handler's pattern, set by hand while the package runs: its removal leaves it alone
FOREIGN="|/usr/local/bin/another-handler %P"
saved=$(cat $SAVED/core_pattern) # what the installation found: systemd-coredump's
echo "$FOREIGN" > /proc/sys/kernel/core_pattern
apt_get remove coredump-socket || fail "apt-get remove failed"
pat=$(cat /proc/sys/kernel/core_pattern)
echo "after the removal with a foreign pattern: core_pattern '$pat'"
[ "$pat" = "$FOREIGN" ] || fail "the removal replaced another handler's pattern with '$pat'"
echo "$saved" > /proc/sys/kernel/core_pattern
apt_get install "$(deb upgrade)" || fail "installing the package once more failed"
[ "$(cat /proc/sys/kernel/core_pattern)" = "$(expected_pattern)" ] || fail "not registered after installing once more"
apt_get install $D/debs/systemd/systemd-coredump_*.deb || fail "installing systemd-coredump over the package failed"
installed coredump-socket && fail "the package is still installed beside systemd-coredump"
pat=$(cat /proc/sys/kernel/core_pattern)
echo "core_pattern: $pat"
case "$pat" in
"|/lib/systemd/systemd-coredump "*) ;;
*) fail "systemd-coredump's pattern did not win" ;;
esac
[ ! -e $SAVED ] || fail "$SAVED is left after the removal"
pid=$(crash segv)
retry coredumpctl --no-pager -q list $pid || fail "systemd-coredump did not record PID $pid"
coredumpctl --no-pager list $pid | grep -q " present " || fail "systemd-coredump stored no core"
