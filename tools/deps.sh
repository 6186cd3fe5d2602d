# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the other scripts: installs the Debian packages a step needs, only if missing.

BUILD_PACKAGES="gcc meson ninja-build pkg-config libsystemd-dev libzstd-dev liblz4-dev libcap-dev libseccomp-dev libacl1-dev libelf-dev libdw-dev"
RUN_PACKAGES="systemd"
FUZZ_PACKAGES="clang libclang-rt-dev"
# the Debian package (tools/build-deb.sh; its Build-Depends come from debian/control): lintian checks it
DEB_PACKAGES="dpkg-dev lintian"
TEST_PACKAGES="python3 graphviz bash-completion elfutils debuginfod libdebuginfod1 binutils gdb zstd lz4 acl attr util-linux procps libmicrohttpd12 g++ golang-go rustc fuse3 libfuse3-dev systemd-journal-remote systemd dwz"

install_packages() {
        missing=""
        for p in "$@"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
        done
        [ -z "$missing" ] && return 0
        echo "Installing:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# The unprivileged user the workers run as (what the sysusers.d entry creates on install).
ensure_worker_user() {
        getent passwd coredump-socket >/dev/null && return 0
        if command -v systemd-sysusers >/dev/null; then
                systemd-sysusers units/sysusers.conf >/dev/null 2>&1 || true
        fi
        getent passwd coredump-socket >/dev/null ||
                useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin coredump-socket
}

require_root() {
        if [ "$(id -u)" != 0 ]; then
                echo "$0: run as root (it sets kernel.core_pattern and installs packages)" >&2
                exit 1
        fi
}
