#!/usr/bin/env bash
# crash_compact.sh — kill -9 `neardup compact` at random moments.
#
# usage: crash_compact.sh NEARDUP KILLS [SEED]
# Each round adds 4000 fresh documents (acknowledged: `add` exits 0), so
# the tables hold fresh entries to fold, starts `neardup compact` and kills
# it after a random delay. A compaction is a series of steps, each one
# atomic and set-preserving. Afterwards:
#   - `neardup verify` passes (every table holds the same set, runs sorted,
#     disjoint and decodable; documents and reverse family agree);
#   - the document count is unchanged and every document of the round is
#     stored (`neardup get`).
# The database starts afresh every 20 rounds. At the end an uninterrupted compact leaves no fresh entry.
set -uo pipefail
source "$(dirname "$0")/crash_lib.sh"
echo "crash_compact: seed $SEED, $KILLS kills"
RANDOM=$SEED

# A small run size makes many runs: each fold step rewrites more of them.
for round in $(seq 1 "$KILLS"); do
    if [ $((round % 20)) -eq 1 ]; then # a fresh database every 20 rounds (long mode)
        rm -rf "$work/db"
        "$ND" init "$work/db" --fingerprint-only --k 3 --docs 1e6 --run-size 8 --tables 10 >/dev/null || { echo "init failed"; exit 1; }
        total=0
    fi
    awk -v seed=$((SEED * 1000 + round)) -v round="$round" 'BEGIN { srand(seed);
        for (i = 0; i < 4000; i++)
            printf "%04x%04x%04x%04x\tc%d-%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, round, i }' > "$work/in"
    if ! "$ND" add "$work/db" --k 0 --format fp "$work/in" > "$work/out" 2>"$work/err"; then
        bad "round $round: add failed: $(tail -1 "$work/err")"; break; fi
    awk -F'\t' '$1 == "new" {print $2}' "$work/out" > "$work/keys"
    total=$((total + $(wc -l < "$work/keys")))

    "$ND" compact "$work/db" 2>"$work/cerr" &
    pid=$!
    ms=$((RANDOM % 800))
    kill_after "$pid" "$ms"
    state=killed; [ "$rc" -eq 137 ] || state="finished (exit $rc)"

    if "$ND" verify "$work/db" >/dev/null 2>"$work/verr"; then ok; else
        bad "round $round: verify: $(cat "$work/verr")"; continue; fi
    n=$(docs)
    if [ "$n" -eq "$total" ]; then ok; else bad "round $round: $n documents, want $total"; fi
    if awk "NR % 7 == $((round % 7))" "$work/keys" | xargs -d '\n' -n 1000 "$ND" get "$work/db" >/dev/null 2>"$work/gerr"; then ok; else
        bad "round $round: documents missing after the kill: $(head -3 "$work/gerr")"; fi
    pending=$("$ND" stats "$work/db" --json | grep -o '"pending":[0-9]*' | cut -d: -f2 | sort -u | tr '\n' ' ')
    echo "round $round: compact $state after $ms ms; $total documents; fresh entries per table: $pending"
done

"$ND" compact "$work/db" || bad "final compact failed"
"$ND" verify "$work/db" >/dev/null || bad "final verify failed"
pending=$("$ND" stats "$work/db" --json | grep -o '"pending":[0-9]*' | cut -d: -f2 | sort -u)
if [ "$pending" = 0 ]; then ok; else bad "fresh entries left after a full compact: $pending"; fi

finish crash_compact
