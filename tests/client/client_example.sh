#!/bin/bash
# client_example.sh EXE NEARDUP TEXTS SRC_ROOT — docs/server.md's "From C"
# block is tests/client/client_example.c (after its opening comment), and
# run against a server over a new store on shipped texts and an edited
# copy of one, it finds the copy. Exit 77 in a build without the server.
set -euo pipefail
exe=$1 nd=$2 texts=$3 src=$4
tmp=$(mktemp -d)
spid=
trap '{ [ -z "$spid" ] || kill "$spid"; } 2>/dev/null; rm -rf "$tmp"' EXIT
awk '/^```c$/ { f = 1; next } /^```$/ { f = 0 } f' "$src/docs/server.md" >"$tmp/block.c"
awk 'NR == 1 && /^\/\*/ { c = 1 } c { if (/\*\//) c = 0; next } { print }' \
    "$src/tests/client/client_example.c" >"$tmp/example.c"
cmp "$tmp/block.c" "$tmp/example.c" || { echo "docs/server.md's C block is not client_example.c"; exit 1; }
"$nd" init "$tmp/db" >/dev/null
"$nd" serve "$tmp/db" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
spid=$!
for _ in $(seq 100); do grep -q '^listening on ' "$tmp/out" && break; sleep 0.05; done
if grep -q "built without the server" "$tmp/err"; then exit 77; fi
url=$(sed -n 's/^listening on //p' "$tmp/out")
{ echo "Retrieved on 2026-11-22 from a mirror."; cat "$texts/GPL-3"; } >"$tmp/copy"
"$exe" "$url" "$texts/GPL-3" "$texts/Apache-2.0" "$tmp/copy" | tee "$tmp/got"
printf '%s\n' "new $texts/GPL-3" "new $texts/Apache-2.0" "dup $tmp/copy of $texts/GPL-3" \
    >"$tmp/want"
# the two near ones as a set: both may estimate resemblance 1, and then
# their keys (paths: where the checkout and the temporary directory lie)
# order them
printf '%s\n' "near $tmp/copy" "near $texts/GPL-3" | sort >>"$tmp/want"
{ head -n 3 "$tmp/got"; tail -n +4 "$tmp/got" | sort; } >"$tmp/got.sorted"
diff "$tmp/want" "$tmp/got.sorted"
if "$exe" "$url" "$tmp/missing" 2>"$tmp/err2"; then exit 1; fi
grep -q "not found" "$tmp/err2"
kill "$spid"; wait "$spid" || { echo "serve did not stop cleanly"; exit 1; }
spid=
echo "client example ok"
