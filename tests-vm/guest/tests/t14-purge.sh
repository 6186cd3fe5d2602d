# `apt purge` of the removed package while systemd-coredump owns core_pattern: nothing of the
# package is left (no file it listed, its configuration, state, stored cores and runtime
# directories gone; compared with the files before the installation, as piuparts does), but an
# administrator's own files in /etc/coredump-socket stay; systemd-coredump's pattern is
# untouched. The worker user stays, as Debian keeps system users.
. /usr/local/lib/cds-vmtest/tests/lib.sh
# the harness's own drop-in for these tests (written before the installation) is an
# administrator's file, and so is this one
ADMIN=/etc/coredump-socket/coredump.conf.d/10-vmtest.conf
ADMIN2=/etc/coredump-socket/local-notes
[ -f $ADMIN ] || fail "$ADMIN is missing before the purge"
echo "written by the administrator" > $ADMIN2
before=$(cat /proc/sys/kernel/core_pattern)
apt_get purge coredump-socket || fail "apt-get purge failed"
[ -z "$(dpkg-query -W -f='${Status}' coredump-socket 2>/dev/null | grep -v not-installed)" ] || fail "dpkg still knows the package"
[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ] || fail "purge changed core_pattern"
left=""
while read -r f; do
        [ "$f" != /. ] || continue
        [ -e "$f" ] || [ -L "$f" ] || continue
        # now another package's (systemd-coredump's coredumpctl, its man page, shared directories)
        dpkg -S "$f" >/dev/null 2>&1 && continue
        # a directory of the system others put files in (/lib); one left empty would count
        [ -d "$f" ] && [ -n "$(ls -A "$f")" ] && continue
        left="$left $f"
done < $STATE/dpkg-L
[ -z "$left" ] || fail "files of the package left: $left"
for f in /etc/coredump-socket/coredump.conf /var/lib/coredump-socket $SAVED /run/coredump-socket /run/coredumpctl; do
        [ ! -e "$f" ] || fail "$f is left after purge"
done
[ -f $ADMIN ] && [ "$(cat $ADMIN2)" = "written by the administrator" ] || fail "purge removed an administrator's file"
echo "kept: $(find /etc/coredump-socket -type f | tr '\n' ' ')"
rm -f $ADMIN2 # (the drop-in stays for t15)
# new since before the installation, apart from what the tests (their units, gdb's Python
# bytecode, t16-t19's containers and their shared directories), dpkg, apt and systemd-coredump
# keep (piuparts ignores the same kind of paths)
snapshot | comm -13 $STATE/files-before - | grep -v -E \
        -e '^/var/lib/(dpkg|apt|cds-vmtest|systemd/coredump|machines|cds-ct-[a-z]+)(/|$)' \
        -e '^/var/lib/systemd/deb-systemd-helper-(enabled|masked)(/[a-z.-]+\.wants)?$' \
        -e '^/etc/systemd/system/[a-z.-]*\.wants/cds-[a-z-]*\.service$' -e '/__pycache__(/|$)' \
        -e '^/var/cache/(apt|debconf|ldconfig|man)(/|$)' -e '^/etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$' \
        -e '^/etc/(ld\.so\.cache)$' > $STATE/new-files || true
echo "new files outside dpkg's, apt's and the tests' own:"; sed 's/^/  /' $STATE/new-files
[ ! -s $STATE/new-files ] || fail "purge left files behind"
getent passwd coredump-socket && echo "(the worker user stays)"
pid=$(crash abort)
retry coredumpctl --no-pager -q list $pid || fail "systemd-coredump no longer records crashes"
