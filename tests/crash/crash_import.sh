#!/usr/bin/env bash
# crash_import.sh — kill -9 `neardup import` at random moments.
#
# usage: crash_import.sh NEARDUP KILLS [SEED]
#   CRASH_KIND=similar: a resemblance store instead (below)
# Each round imports 12000 fresh documents and kills the import after a
# random delay. Odd rounds go in steps of 500 (`--steps --chunk 500
# --sync`: each step is one atomic write; with runs of 8, steps into up to
# 8000 stored write a new generation, later ones merge into the runs);
# even rounds through the loader (`--chunk 500`: 24 chunks spilled to
# temporary files, then one commit), so a "step" is the whole import.
# Afterwards:
#   - `neardup verify` passes;
#   - the round holds all or none of each step: the stored count is a
#     whole number of steps, and exactly the documents of the first steps
#     of the input are stored (the last one of them and the first one after
#     them are probed, and a sample of all), with their fingerprints;
#   - at most one loader's temporary directory is left (the killed one's:
#     each writable open removes those of earlier rounds).
# With CRASH_KIND=similar the store is a resemblance store (`init` without
# --fingerprint-only) and each round imports 12000 texts as JSONL (30-60
# words from a 5,000-word vocabulary; every tenth repeats the text seven
# before it, under its own key, so fingerprints and band keys are shared),
# odd rounds in steps of 500 (`--steps --chunk 500 --sync`: each step a
# load of its own, one write), even rounds through the loader (`--chunk
# 500`), killed after up to 1 s: the documents, their sketches and band
# entries are written by a commit's one write, so the round holds whole
# steps (a loader round: all of the texts or none); the
# probes are those above (the fingerprints `neardup fingerprint` gives
# the texts), plus: stats counts a sketch and 12 band keys per document,
# and a round holding none has none of a sample of its keys.
# Exit 77 (meson: skipped) with a NOTICE when this neardup has no import.
set -uo pipefail
source "$(dirname "$0")/crash_lib.sh"
if ! "$ND" import --help >/dev/null 2>&1; then
    echo "NOTICE: 'neardup import' is not available: the import crash case did not run" >&2
    rm -rf "$work"
    exit 77
fi
kind=${CRASH_KIND:-fp}
echo "crash_import ($kind): seed $SEED, $KILLS kills"
RANDOM=$SEED
N=12000 CHUNK=500

for round in $(seq 1 "$KILLS"); do
    if [ $((round % 20)) -eq 1 ]; then # a fresh database every 20 rounds (long mode)
        rm -rf "$work/db"
        if [ "$kind" = similar ]; then set -- --k 3 --docs 1e6
        else set -- --fingerprint-only --k 3 --docs 1e6 --run-size 8; fi
        "$ND" init "$work/db" "$@" >/dev/null || { echo "init failed"; exit 1; }
    fi
    if [ "$kind" = similar ]; then
        # "$work/in": FP<TAB>KEY per text, in input order, as for the fp rounds
        awk -v seed=$((SEED * 1000 + round)) -v round="$round" -v n=$N 'BEGIN { srand(seed);
            for (i = 0; i < n; i++) {
                if (i % 10 == 9) t = text[i - 7];
                else { t = ""; m = 30 + int(rand() * 31);
                       for (w = 0; w < m; w++) t = t sprintf(" w%d", int(rand() * 5000)) }
                text[i] = t
                printf "{\"id\":\"i%d-%d\",\"text\":\"%s\"}\n", round, i, t } }' > "$work/in.jsonl"
        "$ND" fingerprint --format jsonl "$work/in.jsonl" > "$work/in" ||
            { echo "fingerprint failed"; exit 1; }
    else
        awk -v seed=$((SEED * 1000 + round)) -v round="$round" -v n=$N 'BEGIN { srand(seed);
            for (i = 0; i < n; i++)
                printf "%04x%04x%04x%04x\ti%d-%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, round, i }' > "$work/in"
    fi
    before=$(docs)
    if [ "$kind" = similar ] && [ $((round % 2)) -eq 1 ]; then
        mode=steps STEP=$CHUNK; set -- --format jsonl --steps --chunk $CHUNK --sync "$work/in.jsonl"
    elif [ "$kind" = similar ]; then mode=loader STEP=$N; set -- --format jsonl --chunk $CHUNK "$work/in.jsonl"
    elif [ $((round % 2)) -eq 1 ]; then mode=steps STEP=$CHUNK; set -- --steps --chunk $CHUNK --sync "$work/in"
    else mode=loader STEP=$N; set -- --chunk $CHUNK "$work/in"; fi
    "$ND" import "$work/db" "$@" >/dev/null 2>"$work/err" &
    pid=$!
    ms=$((RANDOM % 1500))
    [ $mode = loader ] && ms=$((RANDOM % 700)) # it is done in about 0.8 s
    [ "$kind" = similar ] && ms=$((RANDOM % 1000)) # 12000 texts signed: 0.3-1.1 s
    kill_after "$pid" "$ms"
    state=killed; [ "$rc" -eq 137 ] || state="finished (exit $rc)"

    if "$ND" verify "$work/db" >/dev/null 2>"$work/verr"; then ok; else
        bad "round $round: verify: $(cat "$work/verr")"; continue; fi
    stored=$(( $(docs) - before ))
    if [ $((stored % STEP)) -eq 0 ] && [ "$stored" -le $N ]; then ok; else
        bad "round $round: $stored documents stored: not a whole number of $STEP-document steps ($mode)"; fi
    left=$(find "$work/db" -maxdepth 1 -name 'nd-load-*' | wc -l)
    if [ "$left" -le 1 ]; then ok; else bad "round $round: $left loader directories left"; fi
    # The stored ones are the input's first $stored lines, fingerprints included.
    awk -F'\t' -v s="$stored" 'NR <= s && (NR % 37 == 1 || NR == s) {print $2 "\t" $1}' "$work/in" > "$work/want"
    if [ -s "$work/want" ]; then
        cut -f1 "$work/want" | xargs -d '\n' "$ND" get "$work/db" 2>"$work/gerr" | cut -f1,2 > "$work/got"
        if cmp -s "$work/want" "$work/got"; then ok; else
            bad "round $round: stored documents differ from the input's first $stored: $(diff "$work/want" "$work/got" | head -3)"; fi
    fi
    if [ "$kind" = similar ]; then
        st=$("$ND" stats "$work/db" --json)
        sk=$(sed -n 's/.*"sketches":\([0-9]*\),.*/\1/p' <<<"$st")
        bk=$(sed -n 's/.*"band_keys":\([0-9]*\),.*/\1/p' <<<"$st")
        all=$(sed -n 's/.*"documents":\([0-9]*\),.*/\1/p' <<<"$st")
        if [ "$sk" = "$all" ] && [ "$bk" = $((12 * all)) ]; then ok; else
            bad "round $round: $all documents, $sk sketches, $bk band keys (want 12 a document)"; fi
        if [ "$stored" -eq 0 ]; then
            for key in $(awk -F'\t' 'NR % 1999 == 2 {print $2}' "$work/in"); do
                if "$ND" get "$work/db" "$key" >/dev/null 2>&1; then
                    bad "round $round: none stored, but $key is"; break; fi
            done
        fi
    fi
    if [ "$stored" -lt $N ]; then
        next=$(awk -F'\t' -v s="$stored" 'NR == s + 1 {print $2}' "$work/in")
        if "$ND" get "$work/db" "$next" >/dev/null 2>&1; then
            bad "round $round: $next (first of the step in flight) is stored"; else ok; fi
    fi
    echo "round $round: import ($mode) $state after $ms ms; $((stored / STEP)) steps of $STEP stored ($stored documents)"
done

finish crash_import
