#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/build-deb.sh [--nocheck] [--lintian] [--upgrade-version=V] OUTDIR
# Builds the Debian package from this tree's tracked and new (not ignored) files, in a copy so
# the tree stays clean, and puts the .deb files, .buildinfo and .changes in OUTDIR.
# --nocheck skips the unit tests in the build; --lintian runs lintian (pedantic) on the result
# and fails on any error or warning; --upgrade-version=V then packs the same build again as
# version V (a changelog entry added, as a binNMU would) into OUTDIR/upgrade, for the upgrade
# tests. Installs the build dependencies.
set -eu
cd "$(dirname "$0")/.."
upgrade="" nocheck="" lint="" out=""
for a in "$@"; do
        case "$a" in
        --upgrade-version=*) upgrade=${a#--upgrade-version=} ;;
        --nocheck) nocheck=1 ;;
        --lintian) lint=1 ;;
        -*) echo "build-deb.sh: unknown option $a" >&2; exit 2 ;;
        *) out=$a ;;
        esac
done
[ -n "$out" ] || { echo "usage: tools/build-deb.sh [--nocheck] [--lintian] [--upgrade-version=V] OUTDIR" >&2; exit 2; }
. tools/deps.sh
install_packages $DEB_PACKAGES
# the Build-Depends of debian/control, as the README tells users to install them
apt-get build-dep -y -qq --no-install-recommends ./ >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get build-dep -y -qq --no-install-recommends ./ >/dev/null; }

tmp=$(mktemp -d /var/tmp/coredump-socket-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/coredump-socket
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do if [ -e "$f" ] || [ -L "$f" ]; then printf "%s\0" "$f"; fi; done' sh |
        xargs -0 cp --parents -P -t "$src"

build() { # dpkg-buildpackage arguments...: builds in $src, the results land in $tmp/src
        (cd "$src" && DEB_BUILD_OPTIONS="${nocheck:+nocheck} parallel=$(nproc)" \
                dpkg-buildpackage -us -uc -b "$@" >"$tmp/build.log" 2>&1) ||
                { tail -n 60 "$tmp/build.log" >&2; echo "build-deb.sh: dpkg-buildpackage failed" >&2; exit 1; }
}
collect() { # DIR: moves the results there
        mkdir -p "$1"
        rm -f "$1"/*.deb "$1"/*.buildinfo "$1"/*.changes
        mv "$tmp"/src/*.deb "$tmp"/src/*.buildinfo "$tmp"/src/*.changes "$1"/
}

if [ -n "$lint" ]; then # the source package as dpkg-source makes it, from the clean copy
        (cd "$tmp/src" && dpkg-source -b coredump-socket >"$tmp/source.log" 2>&1) ||
                { cat "$tmp/source.log" >&2; echo "build-deb.sh: dpkg-source failed" >&2; exit 1; }
fi
build
[ -z "$lint" ] || lintian --pedantic --display-info --fail-on error,warning "$tmp"/src/*.changes "$tmp"/src/*.dsc
collect "$out"
if [ -n "$upgrade" ]; then
        {
                printf 'coredump-socket (%s) unstable; urgency=medium\n\n  * Rebuild.\n\n' "$upgrade"
                printf ' -- %s  %s\n\n' "$(sed -n 's/^ -- \(.*>\)  .*/\1/p' debian/changelog | head -n1)" "$(date -R)"
                cat debian/changelog
        } > "$src/debian/changelog"
        build -nc # the same build (debhelper's build stamp), packed again as the new version
        collect "$out/upgrade"
fi
ls "$out"/*.deb
[ -z "$upgrade" ] || ls "$out"/upgrade/*.deb
