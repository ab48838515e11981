#!/bin/bash
# readme_example.sh EXE TEXTS — run docs/c-api.md's C API example on shipped
# texts and an edited copy of one: the copy must be found as a duplicate.
set -euo pipefail
exe=$1 texts=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ echo "Retrieved on 2026-11-22 from a mirror."; cat "$texts/GPL-3"; } > "$tmp/copy"
"$exe" "$tmp/db" "$texts/GPL-3" "$texts/Apache-2.0" "$tmp/copy" | tee "$tmp/out"
grep -q "^new $texts/GPL-3 [0-9a-f]\{16\}\$" "$tmp/out"
grep -q "^new $texts/Apache-2.0 " "$tmp/out"
grep -qx "dup $tmp/copy of $texts/GPL-3" "$tmp/out"
# every document is stored, the copy too: near the copy are itself and GPL-3
grep -qx "near $texts/GPL-3 (resemblance 1.00)" "$tmp/out"
grep -qx "near $tmp/copy (resemblance 1.00)" "$tmp/out"
[ "$(wc -l < "$tmp/out")" -eq 5 ]
# A missing file is an error with a message, exit 1.
if "$exe" "$tmp/db" "$tmp/missing" 2> "$tmp/err"; then exit 1; fi
grep -q "not found" "$tmp/err"
echo "readme example ok"
