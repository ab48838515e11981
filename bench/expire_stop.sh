#!/bin/bash
# expire_stop.sh NEARDUP [DIR] — how soon SIGINT ends `expire` while it
# writes the store anew: a 4M-document fingerprint-only store, half of it
# expired (so the expiry rewrites), copied afresh for each try; the signal
# goes DELAY seconds after the "rewriting" phase begins, and the time from
# it to the exit is printed, then the median. Every try must end 130 with
# the store unchanged (verify, and the document count).
#   bench/expire_stop.sh build/cli/neardup /tmp/nd-expire-stop
set -m
ND=$1
DIR=${2:-/tmp/nd-expire-stop}
[ -x "$ND" ] || { echo "usage: $0 NEARDUP [DIR]" >&2; exit 1; }
mkdir -p "$DIR"
base=$DIR/base
if [ ! -d "$base" ]; then
    for half in a b; do
        awk -v p=$half 'BEGIN { srand(p == "a" ? 5 : 6); for (i = 0; i < 2000000; i++)
            printf "%08x%08x\t%s%d\n", int(rand() * 4294967296), int(rand() * 4294967296), p, i }' \
            > "$DIR/$half.fp"
    done
    "$ND" init "$base" --fingerprint-only --k 3 --docs 4e6 >/dev/null || exit 1
    "$ND" import "$base" --time 1000 "$DIR/a.fp" 2>/dev/null || exit 1
    "$ND" import "$base" --time 5000000 "$DIR/b.fp" 2>/dev/null || exit 1
fi
all=()
for delay in 0.1 0.4 0.7 1.0 1.3; do
    w=$DIR/work
    rm -rf "$w"
    cp -r "$base" "$w"
    NEARDUP_PROGRESS=all "$ND" expire "$w" --older-than 10d --now 5000000 > "$DIR/out" 2> "$DIR/err" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && ! grep -q rewriting "$DIR/err"; do sleep 0.02; done
    sleep "$delay"
    t0=$EPOCHREALTIME
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    t1=$EPOCHREALTIME
    ms=$(echo "($t1 - $t0) * 1000 / 1" | bc)
    docs=$("$ND" stats "$w" --json | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p')
    "$ND" verify "$w" >/dev/null 2>&1 || { echo "verify failed after the stop" >&2; exit 1; }
    [ "$rc" -eq 130 ] && [ "$docs" -eq 4000000 ] ||
        { echo "delay $delay: exit $rc, $docs documents (want 130, 4000000)" >&2; exit 1; }
    echo "delay $delay s: ended in $ms ms"
    all+=("$ms")
done
printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { print "median " v[int((NR + 1) / 2)] " ms" }'
