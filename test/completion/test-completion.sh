#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion of coredumpctl (shell-completion/bash/coredumpctl) under the real
# bash-completion library: verbs, option values, matches; and every verb and long option that
# coredumpctl --help lists is offered, so the two cannot drift apart. Touches nothing.
# $1: the completion script, $2: the built coredumpctl.
set -u
script=$1 ctl=$2
lib=/usr/share/bash-completion/bash_completion
[ -r "$lib" ] || { echo "skipped: bash-completion is not installed"; exit 77; }
# shellcheck source=/dev/null
. "$lib"
# shellcheck source=/dev/null
. "$script"
compopt() { :; } # outside a real completion, bash refuses it
fail=0

complete_line() { # the words of a command line ending in the word being completed: prints the offers
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _coredumpctl coredumpctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}"
}
expect() { # what, offers, wanted...
        local what=$1 offers=$2 w
        shift 2
        for w in "$@"; do
                grep -qx -- "$w" <<<"$offers" || { echo "FAIL: $what: '$w' not offered (got: $(echo $offers))"; fail=1; }
        done
}

expect "verbs" "$(complete_line coredumpctl '')" list info dump debug gdb delete vacuum disk-usage
expect "verb prefix" "$(complete_line coredumpctl d)" dump debug delete disk-usage
expect "--json values" "$(complete_line coredumpctl --json '')" pretty short off
expect "a match after the verb" "$(complete_line coredumpctl info COREDUMP_U)" COREDUMP_UID= COREDUMP_UNIT= COREDUMP_USER_UNIT=
expect "a verb after an option with a value" "$(complete_line coredumpctl -S today i)" info
[ -z "$(complete_line coredumpctl list li)" ] || { echo "FAIL: a verb offered as a match"; fail=1; }

help=$("$ctl" --help) || { echo "FAIL: $ctl --help"; exit 1; }
verbs=$(sed -n '/^Commands:/,/^$/s/^  \([a-z-]*\).*/\1/p' <<<"$help")
longs=$(grep -o -- '--[a-z][a-z-]*' <<<"$help" | sort -u)
[ -n "$verbs" ] && [ -n "$longs" ] || { echo "FAIL: cannot read the verbs and options from --help"; exit 1; }
expect "verbs of --help" "$(complete_line coredumpctl '')" $verbs
expect "options of --help" "$(complete_line coredumpctl --)" $longs
[ $fail = 0 ] && echo "ok: $(wc -w <<<"$verbs") verbs, $(wc -w <<<"$longs") long options"
exit $fail
