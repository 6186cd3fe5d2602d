# The test user sees only their own crashes; a setuid program's crash is root's only.
. /usr/local/lib/cds-vmtest/tests/lib.sh
root_pid=$(crash segv)
# A session's limits come from pam_limits, which starts from PID 1's (RLIMIT_CORE 0 on Debian):
# the installed limits.d file gives sessions upstream systemd's unlimited soft limit
limit=$(runuser -l $USER_NAME -s /bin/sh -c "ulimit -c")
echo "a login session of $USER_NAME: ulimit -c = $limit"
[ "$limit" = unlimited ] || fail "a login session has RLIMIT_CORE $limit: its crashes would keep no core"
user_pid=$(runuser -u $USER_NAME -- sh -c "$CRASHER segv >/dev/null 2>&1 & p=\$!; wait \$p; echo \$p")
old=$(cat /proc/sys/fs/suid_dumpable)
echo 2 > /proc/sys/fs/suid_dumpable
suid_pid=$(runuser -u $USER_NAME -- sh -c "$D/suid-crasher segv >/dev/null 2>&1 & p=\$!; wait \$p; echo \$p")
echo $old > /proc/sys/fs/suid_dumpable
echo "root crash $root_pid, user crash $user_pid, setuid crash $suid_pid"
wait_listed $user_pid $USER_NAME || fail "the user does not see their crash $user_pid"
wait_listed $root_pid || fail "root does not see $root_pid"
wait_listed $suid_pid || fail "root does not see the setuid crash $suid_pid"
# the root-only /run/coredump-socket (a configuration directory too) is no error for a user
err=$(runuser -u $USER_NAME -- $CTL --no-legend list 2>&1 >/dev/null)
[ -z "$err" ] || fail "coredumpctl run by the user complains: $err"
seen=$(runuser -u $USER_NAME -- $CTL --no-legend list | awk '{print $5}' | sort -u | tr '\n' ' ')
echo "the user sees PIDs: $seen"
runuser -u $USER_NAME -- $CTL -q list $root_pid >/dev/null 2>&1 && fail "the user sees root's crash"
runuser -u $USER_NAME -- $CTL -q list $suid_pid >/dev/null 2>&1 && fail "the user sees the setuid crash"
uids=$(runuser -u $USER_NAME -- $CTL --no-legend list | awk '{print $6}' | sort -u)
[ "$uids" = "$(id -u $USER_NAME)" ] || fail "the user sees crashes of uids: $uids"
f=$($CTL -F COREDUMP_FILENAME list $suid_pid)
[ -f "$f" ] || fail "no stored core for the setuid crash $suid_pid: '$f'"
acl=$(getfacl -cp "$f") || fail "cannot read the ACL of $f"
echo "$acl" | grep -q "^user:$(id -u $USER_NAME)" && fail "the setuid core is readable by the user: $acl"
runuser -u $USER_NAME -- $CTL dump $user_pid -o /tmp/user.core || fail "the user cannot dump their own core"
