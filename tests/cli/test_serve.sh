# test_serve.sh — `neardup serve` from the shell: the curl examples of
# README.md and docs/server.md (their ```console blocks but the fleet's,
# which test_serve_fleet.sh runs; in that order, against one server over a new store: each `$ COMMAND` line is run with
# the example's address http://127.0.0.1:7340 replaced by the server's,
# and the lines below it are its stdout), the loopback rule, the token
# file, the limits (body, batch, connections, idle time) with their
# statuses, malformed bodies, SIGTERM. Needs curl (skipped without it)
# and a build with the server.
# $SRC_ROOT: the source tree.

. "$(dirname "$src")/examples_lib.sh"

if ! command -v curl >/dev/null; then
    check "curl is installed (setup.sh installs it)" 0 -eq 1
    return 0
fi
if "$ND" serve --help >/dev/null && "$ND" serve x.nd 2>&1 | grep -q "built without the server"; then
    echo "test_serve: built without the server (-Dserver=disabled or no libmicrohttpd): skipped"
    exit 77 # meson counts it as skipped, not passed
fi

# serve ARGS...: start a server in the background on a free port; sets
# $URL, $PORT and $SPID (its stderr in serve.err).
serve() {
    rm -f serve.out
    "$ND" serve "$@" --listen "${LISTEN:-127.0.0.1:0}" >serve.out 2>serve.err &
    SPID=$!
    for _ in $(seq 100); do
        grep -q '^listening on ' serve.out 2>/dev/null && break
        sleep 0.05
    done
    URL=$(sed -n 's/^listening on //p' serve.out)
    PORT=${URL##*:}
}
stop() { kill -TERM "$SPID"; wait "$SPID"; scode=$?; }
status() { curl -s -o body.json -w '%{http_code}' "$@"; }

# ---- usage and the loopback rule
expect_exit 0 "$ND" serve --help
expect_out_match '^usage: neardup serve DB'
expect_exit 1 "$ND" serve
expect_exit 1 "$ND" serve db.nd --listen 0.0.0.0:0
expect_err_match 'not loopback\) needs --token-file'
expect_exit 1 "$ND" serve db.nd --listen example.org:80
expect_err_match 'numeric address'
printf 'short\n' >short.tok
expect_exit 1 "$ND" serve db.nd --token-file short.tok
expect_err_match 'at least 16 bytes'
expect_exit 2 "$ND" serve missing.nd --listen 127.0.0.1:0
expect_err_match "cannot open database"

# ---- the examples of the docs
"$ND" init crawl.nd >/dev/null 2>&1
serve crawl.nd
check "server started" -n "$URL"
# (not those of docs/server.md's "A fleet" section: test_serve_fleet.sh's)
awk 'FNR == 1 { fleet = 0 } /^## / { fleet = /^## A fleet/ }
     /^```console$/ && !fleet { inb = 1; next } /^```$/ { inb = 0 } inb' \
    "$SRC_ROOT/README.md" "$SRC_ROOT/docs/server.md" >examples.txt
check "the docs hold curl examples" "$(grep -c '^\$ curl' examples.txt)" -ge 8
examples_url() { printf '%s' "${1//http:\/\/127.0.0.1:7340/$URL}"; }
run_examples examples.txt
stop
check "SIGTERM exits 0" "$scode" -eq 0
expect_exit 0 "$ND" get crawl.nd news/1
expect_out_match '^news/1'

# ---- limits, each its status
"$ND" init --fingerprint-only fp.nd >/dev/null 2>&1
serve fp.nd --max-body 300 --max-batch 2 --max-connections 2 --idle-timeout 1
check "413 body" "$(status -d "{\"key\":\"$(head -c 400 /dev/zero | tr '\0' x)\",\"fingerprint\":\"0000000000000001\"}" "$URL/v1/add")" = 413
expect_exit 0 grep -q '"code":"body_too_large"' body.json
check "413 batch" "$(status -d '{"documents":[{"key":"a","fingerprint":"0000000000000001"},{"key":"b","fingerprint":"0000000000000002"},{"key":"c","fingerprint":"0000000000000003"}]}' "$URL/v1/batch")" = 413
expect_exit 0 grep -q '"code":"too_many_documents"' body.json
check "200 under the limits" "$(status -d '{"key":"a","fingerprint":"00000000000000ff"}' "$URL/v1/check-and-add")" = 200
# two idle connections are the limit: a third one's request is told 503
exec 7<>"/dev/tcp/127.0.0.1/$PORT" 8<>"/dev/tcp/127.0.0.1/$PORT"
sleep 0.2
check "503 connections" "$(status "$URL/healthz")" = 503
expect_exit 0 grep -q '"code":"too_many_connections"' body.json
# the idle ones are closed after --idle-timeout: reading them ends (EOF)
sleep 2.5
timeout 3 cat <&7 >/dev/null; check "idle connection closed" $? -eq 0
exec 7>&- 8>&-
sleep 0.2
check "200 once they are gone" "$(status "$URL/healthz")" = 200
# malformed bodies: 4xx and a JSON error, never a 5xx
for body in '' '{' '[1,2]' '{"key":"a"}' '{"key":"a","fingerprint":"zz"}' \
            '{"key":"a","fingerprint":"0000000000000001","k":17}' '{"nope":1}' \
            '{"key":"a","fingerprint":"0000000000000001","time":1.5}' '"str"' 'null'; do
    st=$(status -d "$body" "$URL/v1/check-and-add")
    check "400 for [$body] (got $st)" "$st" = 400
done
check "404 path" "$(status "$URL/v2/stats")" = 404
check "405 method" "$(status -X PUT "$URL/v1/stats")" = 405
check "metrics count them" "$(curl -s "$URL/metrics" | grep -c 'status="400"')" -ge 1
stop

# ---- the token: writes need it, reads do not
printf 'abcdefghijklmnopqrstuvwxyz012345\n' >tok
serve fp.nd --token-file tok
check "401 no token" "$(status -d '{"key":"t","fingerprint":"0000000000000abc"}' "$URL/v1/add")" = 401
check "403 wrong token" "$(status -H 'Authorization: Bearer nope' -d '{"key":"t","fingerprint":"0000000000000abc"}' "$URL/v1/add")" = 403
check "401 delete" "$(status -X DELETE "$URL/v1/documents/a")" = 401
check "200 with it" "$(status -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' -d '{"key":"t","fingerprint":"0000000000000abc"}' "$URL/v1/add")" = 200
check "200 read" "$(status "$URL/v1/documents/t")" = 200
stop
# with a token, another address is allowed (any: 0.0.0.0, port 0)
LISTEN=0.0.0.0:0 serve fp.nd --token-file tok
check "non-loopback with a token" -n "$URL"
stop
check "stopped" "$scode" -eq 0

# ---- "sync": true on a --no-sync server: its group ends with nd_db_sync,
# which moves the record of the last synced write (SYNCED) over it. After
# kill -9 and the logs deleted, the store is refused (the loss is seen);
# the same request without "sync" leaves nothing to check, and the
# document goes silently (what --no-sync promises).
for s in true false; do
    rm -rf ns.nd
    "$ND" init --fingerprint-only ns.nd >/dev/null 2>&1
    serve ns.nd --no-sync
    check "sync:$s on --no-sync: 200" "$(status -d "{\"key\":\"s1\",\"fingerprint\":\"00000000000000ff\",\"sync\":$s}" "$URL/v1/check-and-add")" = 200
    check "sync:$s batch: 200" "$(status -d "{\"documents\":[{\"key\":\"s2\",\"fingerprint\":\"ff00000000000000\"}],\"add\":true,\"sync\":$s}" "$URL/v1/batch")" = 200
    kill -KILL "$SPID"
    wait "$SPID" 2>/dev/null
    rm -f ns.nd/*.log
    if [ $s = true ]; then
        expect_exit 2 "$ND" get ns.nd s1
        expect_err_match 'acknowledged writes up to sequence [0-9]+ are missing'
    else
        expect_exit 1 "$ND" get ns.nd s1
        expect_out_match '^missing'
    fi
done

# ---- /v1/query answers at most "limit" matches (default 100), never more
# than the server's maximum (--max-batch; "limit": 0 asks for it), and
# says when it left some out
"$ND" init --fingerprint-only many.nd >/dev/null 2>&1
serve many.nd --max-batch 120
# one fingerprint under 150 keys (a common page): adds, one curl, one
# connection (check-and-add would store only the first)
args=()
for i in $(seq 150); do args+=(-s -o /dev/null -w '%{http_code}\n' -d "{\"key\":\"m$i\",\"fingerprint\":\"00000000000000aa\"}" "$URL/v1/add" --next); done
check "150 adds" "$(curl "${args[@]}" -s -o /dev/null "$URL/healthz" | grep -c '^200$')" -eq 150
nmatches() { grep -o '"key"' body.json | wc -l; }
check "query: 200" "$(status -d '{"fingerprint":"00000000000000ab","k":1}' "$URL/v1/query")" = 200
check "query: default limit 100 (got $(nmatches))" "$(nmatches)" -eq 100
expect_exit 0 grep -q '"truncated":true' body.json
check "query limit 5" "$(status -d '{"fingerprint":"00000000000000ab","k":1,"limit":5}' "$URL/v1/query")" = 200
check "query limit 5: 5 (got $(nmatches))" "$(nmatches)" -eq 5
check "query limit 0" "$(status -d '{"fingerprint":"00000000000000ab","k":1,"limit":0}' "$URL/v1/query")" = 200
check "query limit 0: the maximum, 120 (got $(nmatches))" "$(nmatches)" -eq 120
expect_exit 0 grep -q '"truncated":true' body.json
check "query limit over the maximum: 400" "$(status -d '{"fingerprint":"0000000000000000","limit":121}' "$URL/v1/query")" = 400
check "add another" "$(status -d '{"key":"lone","fingerprint":"f000000000000000"}' "$URL/v1/add")" = 200
check "query: few matches, not truncated" "$(status -d '{"fingerprint":"f000000000000001","k":1}' "$URL/v1/query")" = 200
expect_exit 0 grep -q '"matches":\[{"key":"lone".*\],"truncated":false' body.json
stop

# ---- TLS: --tls-cert and --tls-key (PEM files), a self-signed certificate
# made here; curl trusts it with --cacert. Plain HTTP to the port fails;
# files that are not a certificate and its key are refused at start.
if ! command -v openssl >/dev/null; then
    echo "test_serve: no openssl: TLS not tested"
else
    mkcert() {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
            -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
            -keyout "$1" -out "$2" 2>/dev/null
    }
    mkcert tls.key tls.crt
    mkcert other.key other.crt
    serve fp.nd --tls-cert tls.crt --tls-key tls.key
    if grep -q 'built without TLS' serve.err; then
        echo "test_serve: libmicrohttpd without TLS: TLS not tested"
    else
        check "listening on https (got [$URL])" "${URL%%://*}" = https
        run curl -s --cacert tls.crt "$URL/healthz"
        expect_out_eq '{"status":"ok"}'
        check "a write over TLS" "$(status --cacert tls.crt -d '{"key":"tls","fingerprint":"0000000000000777"}' "$URL/v1/add")" = 200
        check "read it back" "$(status --cacert tls.crt "$URL/v1/documents/tls")" = 200
        # an unknown certificate is refused by the client, plain HTTP by the server
        expect_exit 60 curl -s --max-time 5 "$URL/healthz"
        expect_exit 52 curl -s --max-time 5 "${URL/https:/http:}/healthz"
        stop
        check "TLS server stopped" "$scode" -eq 0
        expect_exit 1 "$ND" serve fp.nd --listen 127.0.0.1:0 --tls-cert tls.crt --tls-key other.key
        expect_err_match 'TLS did not start with this certificate and key: .*(do not match|mismatch)'
        printf -- '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' >bad.crt
        expect_exit 1 "$ND" serve fp.nd --listen 127.0.0.1:0 --tls-cert bad.crt --tls-key tls.key
        expect_err_match 'TLS did not start'
    fi
    expect_exit 1 "$ND" serve fp.nd --tls-cert tls.key --tls-key tls.key
    expect_err_match "--tls-cert 'tls.key' holds no PEM CERTIFICATE"
    expect_exit 1 "$ND" serve fp.nd --tls-cert tls.crt --tls-key missing.key
    expect_err_match "cannot read --tls-key 'missing.key'"
    expect_exit 1 "$ND" serve fp.nd --tls-cert tls.crt
    expect_err_match '--tls-cert and --tls-key go together'
fi
