# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the guest tests. Each test prints what it saw and exits non-zero on failure.
D=/usr/local/lib/cds-vmtest
STATE=/var/lib/cds-vmtest
CRASHER=$D/crasher
CTL="coredumpctl --no-pager"
SCTL="$D/systemd-coredumpctl --no-pager"
USER_NAME=cdsvm

fail() {
        echo "FAIL: $*"
        exit 1
}

# Runs the crasher in the background and waits for its death; prints its PID.
crash() {
        "$CRASHER" "$@" >/dev/null 2>&1 &
        p=$!
        wait $p
        echo $p
}

# Runs the command until it succeeds, for up to a minute.
retry() {
        i=0
        while [ $i -lt 300 ]; do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.2
                i=$((i + 1))
        done
        return 1
}

# Waits until our coredumpctl lists the match (as root unless $2 is a user).
wait_listed() {
        if [ -n "${2:-}" ]; then
                retry runuser -u "$2" -- $CTL -q list "$1"
        else
                retry $CTL -q list "$1"
        fi
}

# Waits until systemd's coredumpctl (from the journal) lists the match.
wait_journal() {
        retry $SCTL -q list "$1"
}

# What the socket unit registers on this kernel: the socket where it has one, else pipe mode.
expected_pattern() {
        if grep -qw socket /proc/sys/kernel/core_modes 2>/dev/null; then
                echo "@@/run/coredump-socket/kernel.sock"
        else
                echo "|/usr/libexec/coredump-socket/coredump-pipe /run/coredump-socket/pipe.sock %P %I %u %g %s %t %c %h %d %F"
        fi
}

# The package: what apt installs, where the kernel's values before the installation are kept.
SAVED=/var/lib/coredump-socket-package
deb() { # [upgrade]: the package file (not -dbgsym)
        ls $D/debs/${1:+$1/}coredump-socket_[0-9]*_*.deb
}
apt_get() { # apt-get arguments...: offline, non-interactive, output kept in the test's log
        DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Use-Pty=0 "$@" > /tmp/apt.log 2>&1
        rc=$?
        grep -v -e '^Reading ' -e '^Building ' -e '^(Reading database' /tmp/apt.log | sed 's/^/  apt: /'
        return $rc
}
installed() { # package: true if dpkg has it installed
        [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
# Every file and directory where a package may leave something (as piuparts compares).
snapshot() {
        find /etc /usr /lib /var/lib /var/cache -xdev 2>/dev/null | sort
}

# The summary entry of the crashes of executable $1 the rate limit refused: prints its count,
# waiting up to 90 s for it (it comes when the window ends); nothing if none came.
SUPPRESSED_ID=44a599742dfc4659a9825d09da683686
wait_suppressed() {
        i=0 n=""
        while [ $i -lt 90 ] && [ -z "$n" ]; do
                n=$(journalctl -q -o export MESSAGE_ID=$SUPPRESSED_ID COREDUMP_EXE="$1" |
                    sed -n 's/^COREDUMP_SUPPRESSED=//p' | head -n1)
                [ -n "$n" ] || sleep 1
                i=$((i + 1))
        done
        echo "$n"
}
