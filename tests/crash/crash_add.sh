#!/usr/bin/env bash
# crash_add.sh — kill -9 `neardup add --sync` at random moments and check
# that nothing acknowledged is lost and the database stays consistent.
#
# usage: crash_add.sh NEARDUP KILLS [SEED]
# Each round streams fresh documents (with planted near-duplicates of
# earlier ones) into `neardup add --sync`, kills it after a random delay
# (a quarter of the kills within 60 ms: open and WAL recovery; the rest up
# to 1 s, mid-stream), then checks:
#   - `neardup verify` passes (all tables hold the same set; documents and
#     reverse family agree: no half-written document);
#   - every document acknowledged by a complete `new` line is stored
#     (`neardup get`), and every acknowledged `dup` line names a stored match;
#   - the round stored exactly its acknowledged `new` documents, or those
#     plus the one document in flight (--sync prints a line only once its
#     document is durable, so at most one is stored but unacknowledged).
# Prints "N passed, N failed" and exits non-zero on any failure.
set -uo pipefail
source "$(dirname "$0")/crash_lib.sh"
echo "crash_add: seed $SEED, $KILLS kills"

"$ND" init "$work/db" --fingerprint-only --k 3 --docs 1e6 >/dev/null || { echo "init failed"; exit 1; }
RANDOM=$SEED

# Deterministic fingerprints: round r, line i. Every 5th line is a copy of
# an earlier line with one flipped hex digit (a near-duplicate).
gen_input() {
    awk -v seed="$1" -v n="$2" -v round="$3" 'BEGIN {
        srand(seed);
        for (i = 0; i < n; i++) {
            if (i % 5 == 4 && i > 0) {
                h = fp[int(rand() * i)];
                pos = 1 + int(rand() * 16);
                c = substr(h, pos, 1);
                d = (c == "0") ? "1" : "0";
                h = substr(h, 1, pos - 1) d substr(h, pos + 1);
            } else {
                h = sprintf("%04x%04x%04x%04x", int(rand() * 65536), int(rand() * 65536),
                            int(rand() * 65536), int(rand() * 65536));
            }
            fp[i] = h;
            printf "%s\tr%d-%d\n", h, round, i;
        }
    }'
}

# More documents than any add can store before the latest kill (1 s):
# where fsync is nearly free (tmpfs), 20000 took under 0.9 s.
for round in $(seq 1 "$KILLS"); do
    gen_input $((SEED * 1000 + round)) 100000 "$round" > "$work/in"
    before=$(docs)
    "$ND" add "$work/db" --sync --format fp "$work/in" > "$work/out" 2>"$work/err" &
    pid=$!
    if [ $((RANDOM % 4)) -eq 0 ]; then ms=$((RANDOM % 60)); else ms=$((60 + RANDOM % 940)); fi
    kill_after "$pid" "$ms"
    [ "$rc" -eq 137 ] || bad "round $round: add was not killed (exit $rc): $(head -2 "$work/err")"

    if "$ND" verify "$work/db" >/dev/null 2>"$work/verr"; then ok; else
        bad "round $round: verify: $(cat "$work/verr")"; continue; fi

    # Only complete lines are acknowledgements: drop a torn last line.
    if [ -s "$work/out" ] && [ "$(tail -c1 "$work/out" | od -An -tx1 | tr -d ' ')" != 0a ]; then
        sed -i '$d' "$work/out"
    fi
    awk -F'\t' '$1 == "new" {print $2}' "$work/out" > "$work/acked"
    awk -F'\t' '$1 == "dup" {print $3}' "$work/out" | sort -u > "$work/matched"
    nnew=$(wc -l < "$work/acked")
    for list in acked matched; do
        if [ -s "$work/$list" ]; then
            if xargs -d '\n' -n 500 "$ND" get "$work/db" < "$work/$list" >/dev/null 2>"$work/gerr"; then ok; else
                bad "round $round: $list documents missing: $(head -3 "$work/gerr")"; fi
        fi
    done
    after=$(docs)
    stored=$((after - before))
    if [ "$stored" -eq "$nnew" ] || [ "$stored" -eq $((nnew + 1)) ]; then ok; else
        bad "round $round: $stored documents stored, $nnew acknowledged"; fi
    echo "round $round: killed after $ms ms; $nnew new + $(grep -c '^dup' "$work/out") dup acknowledged, $stored stored"
done

finish crash_add
