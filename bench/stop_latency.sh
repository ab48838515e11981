#!/bin/bash
# stop_latency.sh NEARDUP [DIR] — how soon SIGINT ends the two long admin
# writes: `expire` while it writes the store anew (a 4M-document
# fingerprint-only store, half of it expired), and `compact` while
# RocksDB compacts the files (the same store and 400K documents added
# online). Each try runs on a fresh copy; the signal goes DELAY seconds
# after the phase ("rewriting", "compacting") begins (10% to 70% of its
# length in a first run let finish), and the time from
# it to the exit is printed, then the median of each command. Every try
# must end 130 with every document kept and verify passing.
#   bench/stop_latency.sh build/cli/neardup /tmp/nd-stop-latency
set -m
ND=$1
DIR=${2:-/tmp/nd-stop-latency}
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
# start PHASE CMD...: CMD on a fresh copy of $src in the background
# ($pid), returning once PHASE has begun
start() {
    local phase=$1
    shift
    w=$DIR/work
    rm -rf "$w"
    cp -r "$src" "$w"
    NEARDUP_PROGRESS=all "$@" "$w" > "$DIR/out" 2> "$DIR/err" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && ! grep -q "$phase" "$DIR/err"; do sleep 0.01; done
}
# try WHAT PHASE WANT CMD...: the phase's length in a run let finish,
# then five tries of CMD on copies of $src, SIGINT at 10%, 25%, ... 70%
# of the length into PHASE; WANT documents must stay
try() {
    local what=$1 phase=$2 want=$3 all=() delay f len
    shift 3
    start "$phase" "$@"
    local s0=$EPOCHREALTIME
    wait "$pid" || { echo "$what: failed without a signal" >&2; exit 1; }
    len=$(echo "$EPOCHREALTIME - $s0" | bc)
    echo "$what: the phase takes $len s"
    for f in 0.1 0.25 0.4 0.55 0.7; do
        delay=$(echo "$len * $f" | bc)
        start "$phase" "$@"
        sleep "$delay"
        local t0=$EPOCHREALTIME
        kill -INT "$pid"
        wait "$pid"
        local rc=$? t1=$EPOCHREALTIME
        local ms docs
        ms=$(echo "($t1 - $t0) * 1000 / 1" | bc)
        docs=$("$ND" stats "$w" --json | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p')
        "$ND" verify "$w" >/dev/null 2>&1 || { echo "$what: verify failed after the stop" >&2; exit 1; }
        [ "$rc" -eq 130 ] && [ "$docs" -eq "$want" ] ||
            { echo "$what, delay $delay: exit $rc, $docs documents (want 130, $want)" >&2; exit 1; }
        echo "$what, delay $delay s: ended in $ms ms"
        all+=("$ms")
    done
    printf '%s\n' "${all[@]}" | sort -n |
        awk -v w="$what" '{ v[NR] = $1 } END { print w ": median " v[int((NR + 1) / 2)] " ms" }'
}
src=$base
try expire rewriting 4000000 "$ND" expire --older-than 10d --now 5000000
online=$DIR/online
if [ ! -d "$online" ]; then
    awk 'BEGIN { srand(9); for (i = 0; i < 400000; i++)
        printf "%08x%08x\tc%d\n", int(rand() * 4294967296), int(rand() * 4294967296), i }' > "$DIR/c.fp"
    cp -r "$base" "$online.tmp" && "$ND" add "$online.tmp" --format fp "$DIR/c.fp" >/dev/null &&
        mv "$online.tmp" "$online" || exit 1
fi
src=$online
try compact compacting 4400000 "$ND" compact
