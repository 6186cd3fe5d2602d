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

# --- containers (t16-t19): systemd-nspawn machines booted in units of the guest ----------------
# Each runs under cds-ct-NAME.service with Delegate=yes, its payload in .../payload as nspawn
# makes it, with a user namespace of its own (-U; test-forward.py has one without); a crash
# loop inside (crash-loop.sh, from /cds, a directory of the guest bound there)
# runs the crasher each time the guest touches /cds/go.
MACHINES=/var/lib/machines
ct_dir() { echo /var/lib/cds-ct-$1; }
ct_cgroup() { echo /sys/fs/cgroup/system.slice/cds-ct-$1.service; }
ct_leader() { # the container's PID 1, as the guest numbers it
        head -n1 "$(ct_cgroup "$1")/payload/init.scope/cgroup.procs" 2>/dev/null
}
ct_exec() { # name command...: in every namespace of the container
        n=$1
        shift
        nsenter -t "$(ct_leader "$n")" -a "$@"
}
ct_prepare() { # name rootfs: the crash loop, enabled in the rootfs
        n=$1 root=$MACHINES/$2 cds=$(ct_dir "$1")
        mkdir -p "$cds"
        chmod 0777 "$cds" # the container's root is another uid here (-U)
        cp "$CRASHER" "$cds/crasher"
        cat > "$cds/crash-loop.sh" <<'LOOP'
#!/bin/sh
while :; do
        while [ ! -e /cds/go ]; do sleep 0.2; done
        rm -f /cds/go /cds/done
        sh -c 'echo $$ > /cds/pid; exec /cds/crasher segv' >/dev/null 2>&1
        touch /cds/done
done
LOOP
        printf '[Unit]\nDescription=crash when /cds/go appears\n[Service]\nExecStart=/bin/sh /cds/crash-loop.sh\n[Install]\nWantedBy=multi-user.target\n' \
                > "$root/etc/systemd/system/cds-crash-loop.service"
        ln -sf /etc/systemd/system/cds-crash-loop.service "$root/etc/systemd/system/multi-user.target.wants/"
}
ct_start() { # name rootfs: boots it (once), waits for its crash loop
        n=$1 root=$MACHINES/$2
        if ! systemctl is-active -q "cds-ct-$n.service"; then
                ct_prepare "$n" "$2"
                systemd-run -q --unit="cds-ct-$n" -p Delegate=yes -p KillMode=mixed \
                        systemd-nspawn --quiet --boot -U --keep-unit --register=no --console=passive \
                        -D "$root" --bind="$(ct_dir "$n")":/cds || return 1
        fi
        retry sh -c "[ -n \"\$(head -n1 $(ct_cgroup "$n")/payload/init.scope/cgroup.procs 2>/dev/null)\" ]" || return 1
        retry ct_exec "$n" systemctl is-active -q cds-crash-loop.service
}
ct_receive() { # name 1|0: what PID 1 sets on the unit's cgroup for CoredumpReceive=yes (or not)
        if [ "$2" = 1 ]; then
                setfattr -n user.coredump_receive -v 1 "$(ct_cgroup "$1")"
        else
                setfattr -x user.coredump_receive "$(ct_cgroup "$1")" 2>/dev/null || true
        fi
}
ct_crash() { # name: one crash inside; prints its PID in the container
        cds=$(ct_dir "$1")
        rm -f "$cds/done" "$cds/pid"
        touch "$cds/go"
        retry test -e "$cds/done" || return 1
        cat "$cds/pid"
}
ct_stop() { # name
        systemctl stop "cds-ct-$1.service" 2>/dev/null || true
}
host_entry() { # name pid-in-container: our entry on the host for it, in export format
        journalctl -q -o export MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 COREDUMP_UNIT="cds-ct-$1.service" \
                COREDUMP_CONTAINER_PID="$2" 2>/dev/null | grep -a -E '^(COREDUMP_[A-Z_]+|_PID)=' | grep -av '^COREDUMP_PROC_\|^COREDUMP_ENVIRON\|^COREDUMP_OPEN_FDS\|^COREDUMP_CMDLINE'
}
wait_host_entry() { # name pid: until the host's entry is there
        retry sh -c ". $D/tests/lib.sh; host_entry $1 $2 | grep -q ^COREDUMP_PID="
}
field() { # NAME: its value from export text on stdin
        sed -n "s/^$1=//p" | head -n1
}
