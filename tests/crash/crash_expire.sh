#!/usr/bin/env bash
# crash_expire.sh — kill -9 `neardup expire` at random moments.
#
# usage: crash_expire.sh NEARDUP KILLS [SEED]
#   CRASH_KIND=similar: a resemblance store instead (below)
# A fingerprint-only store of 200,000 documents (imported; some
# fingerprints shared by several documents, so a fingerprint may lose one
# of its documents and keep another), a third of them last seen 100 days
# ago: more than 1/128 of the store, so `expire` writes the store anew
# and switches to it in one write. With CRASH_KIND=similar, a resemblance
# store of 60,000 texts (imported as JSONL in two parts, the old third
# with --time 100 days ago; every tenth text a copy of an earlier one,
# so a fingerprint and a band key may lose one document and keep
# another): the switch write also deletes the expired documents' sketches
# and band entries. Each round starts from a copy of that store, runs
# `neardup expire --older-than 30d` and kills it after a random delay.
# Afterwards:
#   - `neardup verify` passes (tables, documents and reverse family agree;
#     in a resemblance store every document has its sketch and band
#     entries, and no sketch is left without its document);
#   - the store holds every document or exactly the recent ones (the
#     expiry is atomic as a whole), and a sample of the recent ones is
#     stored (`neardup get`);
#   - an expiry run to its end then leaves exactly the recent ones, and
#     verify passes again.
set -uo pipefail
source "$(dirname "$0")/crash_lib.sh"
echo "crash_expire (${CRASH_KIND:-fp}): seed $SEED, $KILLS kills"
RANDOM=$SEED
now=$(date +%s)
if [ "${CRASH_KIND:-fp}" = similar ]; then
    n=60000 window=3000 # ms: a whole expiry takes about 2.8 s
    # Texts of 30-60 words from a 5,000-word vocabulary; text i is old
    # when i % 3 == 0; every tenth repeats text i - 7 (same fingerprint
    # and sketch, under its own key and time).
    awk -v seed="$SEED" -v n=$n -v dir="$work" 'BEGIN { srand(seed);
        for (i = 0; i < n; i++) {
            if (i % 10 == 9) t = text[i - 7];
            else { t = ""; m = 30 + int(rand() * 31);
                   for (w = 0; w < m; w++) t = t sprintf(" w%d", int(rand() * 5000)) }
            text[i] = t
            out = (i % 3 == 0) ? dir "/old.jsonl" : dir "/recent.jsonl"
            printf "{\"id\":\"k%07d\",\"text\":\"%s\"}\n", i, t > out
            if (i % 3 != 0) print sprintf("k%07d", i) > dir "/recent" } }'
    "$ND" init "$work/pristine" --k 3 --docs $n >/dev/null || { echo "init failed"; exit 1; }
    "$ND" import "$work/pristine" --format jsonl --time $((now - 100 * 86400)) "$work/old.jsonl" \
        >/dev/null 2>"$work/err" && "$ND" import "$work/pristine" --format jsonl "$work/recent.jsonl" \
        >/dev/null 2>>"$work/err" || { echo "import failed: $(tail -1 "$work/err")"; exit 1; }
    recent=$(wc -l < "$work/recent")
else
    n=200000 window=500
    awk -v seed="$SEED" -v n=$n -v now="$now" 'BEGIN { srand(seed);
        for (i = 0; i < n; i++) {
            if (i % 10 == 0) fp = sprintf("00000000%08x", int(i / 30));   # shared
            else fp = sprintf("%04x%04x%04x%04x", rand()*65536, rand()*65536, rand()*65536, rand()*65536);
            t = (i % 3 == 0) ? now - 100 * 86400 : now - 3600;
            printf "k%07d\t%s\t1\t%d\n", i, fp, t } }' > "$work/in.dump"
    awk -F'\t' '$4 > '"$((now - 86400))"' {print $1}' "$work/in.dump" > "$work/recent"
    recent=$(wc -l < "$work/recent")
    "$ND" init "$work/pristine" --fingerprint-only --k 3 --docs $n --run-size 16 >/dev/null ||
        { echo "init failed"; exit 1; }
    "$ND" import "$work/pristine" --format dump "$work/in.dump" >/dev/null 2>"$work/err" ||
        { echo "import failed: $(tail -1 "$work/err")"; exit 1; }
fi
[ "$("$ND" stats "$work/pristine" --json | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p')" -eq $n ] ||
    { echo "the store does not hold the $n documents imported"; exit 1; }

for round in $(seq 1 "$KILLS"); do
    rm -rf "$work/db"
    cp -a "$work/pristine" "$work/db"
    "$ND" expire "$work/db" --older-than 30d >/dev/null 2>"$work/eerr" &
    pid=$!
    ms=$((RANDOM % window))
    kill_after "$pid" "$ms"
    state=killed; [ "$rc" -eq 137 ] || state="finished (exit $rc)"

    if "$ND" verify "$work/db" >/dev/null 2>"$work/verr"; then ok; else
        bad "round $round: verify: $(cat "$work/verr")"; continue; fi
    got=$(docs)
    if [ "$got" -eq "$n" ] || [ "$got" -eq "$recent" ]; then ok; else
        bad "round $round: $got documents, want $n or $recent (partly expired)"; fi
    if awk "NR % 97 == $((round % 97))" "$work/recent" | xargs -d '\n' -n 1000 "$ND" get "$work/db" >/dev/null 2>"$work/gerr"; then ok; else
        bad "round $round: recent documents missing after the kill: $(head -3 "$work/gerr")"; fi
    "$ND" expire "$work/db" --older-than 30d >/dev/null 2>"$work/eerr" ||
        bad "round $round: expire after the kill failed: $(tail -1 "$work/eerr")"
    got2=$(docs)
    if [ "$got2" -eq "$recent" ]; then ok; else bad "round $round: $got2 documents after a full expire, want $recent"; fi
    "$ND" verify "$work/db" >/dev/null 2>"$work/verr" && ok || bad "round $round: verify after expire: $(cat "$work/verr")"
    echo "round $round: expire $state after $ms ms; $got documents after the kill"
done

finish crash_expire
