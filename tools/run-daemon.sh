#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what is missing, builds, and runs coredumpd in the foreground against the live
# kernel: it binds /run/coredump-socket/kernel.sock, sets kernel.core_pattern, stores every
# crash in /var/lib/coredump-socket, and restores the previous pattern on Ctrl-C.
# No systemd or journald needed (logs go to stderr). Extra arguments go to coredumpd.
set -eu
cd "$(dirname "$0")/.."
. tools/deps.sh
require_root
install_packages $BUILD_PACKAGES
ensure_worker_user
# the paths of a distribution package: /etc/coredump-socket, /var/lib/coredump-socket
if [ -f build/build.ninja ]; then
        meson configure build -Dprefix=/usr >/dev/null
else
        meson setup build -Dprefix=/usr >/dev/null
fi
ninja -C build >/dev/null
exec build/src/coredumpd "$@"
