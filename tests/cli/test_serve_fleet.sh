# test_serve_fleet.sh — docs/server.md's "A fleet: one shard per server"
# on loopback: a sharded store of 2 shards (`neardup shard init --shards
# 2`, fingerprint-only), `neardup serve --shard 0` and `--shard 1`, and the
# section's ```console block run line by line (each `$ COMMAND` with the
# example's addresses http://127.0.0.1:7341 and :7342 replaced by the two
# servers', the lines below it its stdout): /healthz names each server's
# shard, a write to the server that does not own the key is refused (421
# wrong_shard) and the owner's accepted, /v1/check asks both. Needs curl
# and a build with the server (skipped, 77, without them).
# $SRC_ROOT: the source tree.

. "$(dirname "$src")/examples_lib.sh"

if ! command -v curl >/dev/null; then
    check "curl is installed (setup.sh installs it)" 0 -eq 1
    return 0
fi
if "$ND" serve --help >/dev/null && "$ND" serve x.nd 2>&1 | grep -q "built without the server"; then
    echo "test_serve_fleet: built without the server: skipped"
    exit 77
fi

# a fingerprint-only sharded store: --fingerprint-only where `shard init`
# takes it, else its default (fingerprint-only unless --resemblance)
kind=()
"$ND" shard init --help | grep -q -- '--fingerprint-only' && kind=(--fingerprint-only)
expect_exit 0 "$ND" shard init fleet.nds --shards 2 "${kind[@]}"
expect_exit 0 "$ND" shard which fleet.nds news/1
expect_out_match $'^news/1\t0\t'

# serve_shard I: start `serve --shard I` on a free port; sets URL$I, PID$I
serve_shard() {
    "$ND" serve fleet.nds --shard "$1" --listen 127.0.0.1:0 >"serve$1.out" 2>"serve$1.err" &
    eval "PID$1=$!"
    for _ in $(seq 100); do
        grep -q '^listening on ' "serve$1.out" 2>/dev/null && break
        sleep 0.05
    done
    eval "URL$1=\$(sed -n 's/^listening on //p' serve$1.out)"
}
serve_shard 0
serve_shard 1
check "shard 0's server started [$(cat serve0.err)]" -n "$URL0"
check "shard 1's server started [$(cat serve1.err)]" -n "$URL1"

awk '/^## / { fleet = /^## A fleet/ } /^```console$/ && fleet { inb = 1; next }
     /^```$/ { inb = 0 } inb' "$SRC_ROOT/docs/server.md" >examples.txt
check "the fleet section holds curl examples" "$(grep -c '^\$ curl' examples.txt)" -ge 6
for what in '/healthz' '/v1/check' 'wrong_shard' '"stored":true'; do
    check "the examples show $what" -n "$(grep -F -- "$what" examples.txt)"
done
examples_url() {
    local c=${1//http:\/\/127.0.0.1:7341/$URL0}
    printf '%s' "${c//http:\/\/127.0.0.1:7342/$URL1}"
}
run_examples examples.txt
# the refused write has its status, not only its body
check "421 for a key of the other shard" "$(curl -s -o /dev/null -w '%{http_code}' \
    -d '{"key":"news/1","fingerprint":"0000000000000001"}' "$URL1/v1/add")" = 421

kill -TERM "$PID0" "$PID1"
wait "$PID0"; c0=$?
wait "$PID1"; c1=$?
check "SIGTERM: both servers exit 0 ($c0, $c1)" "$c0$c1" = 00
# the document is in its owner's shard only
expect_exit 0 "$ND" get fleet.nds/shard-000 news/1
expect_out_match '^news/1'
expect_exit 1 "$ND" get fleet.nds/shard-001 news/1
