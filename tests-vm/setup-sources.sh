#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes Debian trixie and trixie-backports available to apt, pinned low (priority 50), so a
# kernel with the coredump socket (linux-binary-unsigned-7.x from trixie-backports) can be
# downloaded explicitly while nothing on the host is ever upgraded from them. Idempotent; adds
# two files and removes nothing.
set -eu
src=/etc/apt/sources.list.d/coredump-socket-vm-suites.sources
pin=/etc/apt/preferences.d/coredump-socket-vm-suites
want_src='Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'
want_pin='Package: *
Pin: release n=trixie
Pin-Priority: 50

Package: *
Pin: release n=trixie-backports
Pin-Priority: 50'
changed=0
if [ "$(cat "$src" 2>/dev/null)" != "$want_src" ]; then
        printf '%s\n' "$want_src" > "$src"
        changed=1
fi
if [ "$(cat "$pin" 2>/dev/null)" != "$want_pin" ]; then
        printf '%s\n' "$want_pin" > "$pin"
        changed=1
fi
if [ $changed = 1 ] || ! apt-cache policy 2>/dev/null | grep -q 'n=trixie-backports'; then
        apt-get update -qq
fi
