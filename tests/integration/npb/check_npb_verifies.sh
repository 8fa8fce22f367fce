#!/bin/sh
# usage: check_npb_verifies.sh <npb binary> <class>
# Passes when the kernel exits with status 0 AND prints the verification line: checking both catches a
# kernel that verifies but exits non-zero, and one that exits 0 without verifying.
set -u
binary=$1
class=$2
output=$("$binary" "$class" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
    echo "FAIL: $binary $class exited with status $status" >&2
    exit 1
fi
if ! printf '%s\n' "$output" | grep -q '^ VERIFICATION SUCCESSFUL$'; then
    echo "FAIL: $binary $class printed no 'VERIFICATION SUCCESSFUL' line" >&2
    exit 1
fi
if ! printf '%s\n' "$output" | grep -q "^ Class  *= $class\$"; then
    echo "FAIL: $binary $class did not run class $class" >&2
    exit 1
fi
