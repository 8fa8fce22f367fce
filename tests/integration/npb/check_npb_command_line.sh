#!/bin/sh
# usage: check_npb_command_line.sh <npb binary>
# The class-selection contract shared by all kernels: --help exits 0 with a usage text, every accepted
# spelling of the class selects it, and a bad class or option exits 2 without running.
set -u
binary=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

"$binary" --help | grep -q '^usage:' || fail "--help printed no usage"
"$binary" --help >/dev/null || fail "--help exited non-zero"

for args in "s" "--class S" "--class=S" "-c s"; do
    # shellcheck disable=SC2086  # the spelling is meant to split into arguments
    "$binary" $args | grep -q '^ Class  *= S$' || fail "'$args' did not select class S"
done

"$binary" X >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown class did not exit with status 2"
"$binary" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option did not exit with status 2"
"$binary" S W >/dev/null 2>&1
[ $? -eq 2 ] || fail "two classes did not exit with status 2"
echo "command line contract holds"
