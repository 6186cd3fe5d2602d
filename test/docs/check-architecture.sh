#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# docs/architecture.svg is what Graphviz draws from docs/architecture.dot: rendered again here and
# compared, so the picture cannot drift from its source. Reads the two files only.
# Usage: check-architecture.sh SOURCE_ROOT
set -eu
root=$1
if ! command -v dot >/dev/null; then
        [ "${CDS_TESTS_COMPLETE:-0}" = 1 ] && { echo "dot (graphviz) is missing"; exit 1; }
        echo "skipped: dot (graphviz) is missing"
        exit 77
fi
if dot -Tsvg "$root/docs/architecture.dot" | cmp -s - "$root/docs/architecture.svg"; then
        echo "docs/architecture.svg is the rendering of docs/architecture.dot ($(dot -V 2>&1))"
else
        echo "docs/architecture.svg is not what $(dot -V 2>&1) draws from docs/architecture.dot:"
        echo "run: dot -Tsvg docs/architecture.dot -o docs/architecture.svg"
        exit 1
fi
