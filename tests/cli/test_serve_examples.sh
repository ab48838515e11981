# test_serve_examples.sh — docs/server.md's fleet clients in other
# languages, docs/examples/CheckAndAdd.java (Java 17, java.net.http) and
# docs/examples/check_and_add.go (net/http), each run against a live
# server on loopback with a token: a page is new, its near-duplicate is
# reported with the first key. A language whose compiler is missing is
# not tested; with neither, the test is skipped (exit 77), as it is in a
# build without the server. $SRC_ROOT: the source tree.

if "$ND" serve --help >/dev/null && "$ND" serve x.nd 2>&1 | grep -q "built without the server"; then
    echo "test_serve_examples: built without the server: skipped"
    exit 77
fi
langs=()
command -v javac >/dev/null && command -v java >/dev/null && langs+=(java)
command -v go >/dev/null && langs+=(go)
if [ ${#langs[@]} -eq 0 ] || ! command -v curl >/dev/null; then
    echo "test_serve_examples: neither javac nor go (or no curl): skipped"
    exit 77
fi
ex=$SRC_ROOT/docs/examples
printf 'Rain is expected over the northern hills on Tuesday, with snow above eight hundred metres. Strong winds will blow along the coast until the evening, and the ferries to the islands may not sail. Roads over the passes could close overnight.' >page1.txt
sed 's/overnight/tonight/' page1.txt >page2.txt
printf 'abcdefghijklmnopqrstuvwxyz012345\n' >tok
for lang in "${langs[@]}"; do
    rm -rf "ex-$lang.nd"
    "$ND" init "ex-$lang.nd" >/dev/null 2>&1
    "$ND" serve "ex-$lang.nd" --listen 127.0.0.1:0 --token-file tok >serve.out 2>serve.err &
    spid=$!
    for _ in $(seq 100); do grep -q '^listening on ' serve.out 2>/dev/null && break; sleep 0.05; done
    url=$(sed -n 's/^listening on //p' serve.out)
    case $lang in
    java) call() { java "$ex/CheckAndAdd.java" "$@"; } ;;
    go) call() { GOCACHE=$PWD/gocache GOPATH=$PWD/gopath go run "$ex/check_and_add.go" "$@"; } ;;
    esac
    export NEARDUP_TOKEN=abcdefghijklmnopqrstuvwxyz012345
    run call "$url" 'news/"1"' page1.txt
    expect_out_eq "new"
    run call "$url" news/2 page2.txt
    expect_out_eq 'duplicate of news/"1" (distance 5)'
    # a wrong token: the server's JSON error, exit 2
    NEARDUP_TOKEN=wrong-token-wrong-token run call "$url" news/3 page1.txt
    check "$lang: a wrong token fails (exit $code)" "$code" -eq 2
    expect_err_match '403'
    unset NEARDUP_TOKEN
    kill -TERM "$spid"
    wait "$spid"
    check "$lang: server stopped" $? -eq 0
    expect_exit 0 "$ND" get "ex-$lang.nd" news/2
done
