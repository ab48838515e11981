#!/usr/bin/env bash
# crash_add.sh — kill -9 `neardup add --sync` at random moments and check
# that nothing acknowledged is lost and the database stays consistent.
#
# usage: crash_add.sh NEARDUP KILLS [SEED]
# Each round streams fresh documents (with planted near-duplicates of
# earlier ones) into `neardup add --sync`, kills it after a random delay,
# then checks:
#   - `neardup verify` passes (all tables hold the same set; documents and
#     reverse family agree: no half-written document);
#   - every document acknowledged by a complete `new` line is stored
#     (`neardup get`), and every acknowledged `dup` line names a stored match.
# Prints "N passed, N failed" and exits non-zero on any failure.
set -uo pipefail
ND=${1:?neardup binary}
KILLS=${2:-5}
SEED=${3:-42}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

"$ND" init "$work/db" --k 3 --docs 1e6 >/dev/null || { echo "init failed"; exit 1; }
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

for round in $(seq 1 "$KILLS"); do
    gen_input $((SEED * 1000 + round)) 20000 "$round" > "$work/in$round"
    "$ND" add "$work/db" --sync --format fp "$work/in$round" > "$work/out$round" 2>"$work/err$round" &
    pid=$!
    # 20 ms .. 1 s: early kills hit open/recovery, later ones mid-stream.
    sleep "0.$(printf '%02d' $((RANDOM % 98 + 2)))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null

    if "$ND" verify "$work/db" >/dev/null 2>"$work/verr"; then ok; else
        bad "round $round: verify: $(cat "$work/verr")"; continue; fi

    # Only complete lines are acknowledgements.
    acked=$(awk -F'\t' 'substr($0, length($0)) != "" && $1 == "new" {print $2}' "$work/out$round")
    if [ -s "$work/out$round" ] && [ "$(tail -c1 "$work/out$round" | od -An -c | tr -d ' ')" != '\n' ]; then
        acked=$(echo "$acked" | sed '$d')   # drop a torn last line
    fi
    nacked=$(printf '%s' "$acked" | grep -c . || true)
    if [ "$nacked" -gt 0 ]; then
        if printf '%s\n' "$acked" | xargs -d '\n' -n 500 "$ND" get "$work/db" >/dev/null 2>"$work/gerr"; then ok; else
            bad "round $round: acknowledged documents missing: $(head -3 "$work/gerr")"; fi
    else
        ok
    fi
    echo "round $round: $nacked acknowledged new documents checked" >&2
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
