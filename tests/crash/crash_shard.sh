#!/usr/bin/env bash
# crash_shard.sh — kill -9 `neardup shard import` at random moments.
#
# usage: crash_shard.sh NEARDUP KILLS [SEED]
# A store of 3 shards. Each round imports 3000 fresh documents (keys
# i<round>-<i>, about 1000 a shard) with `--chunk 200`: each shard's loader
# spills about 5 chunks into its nd-load-* directory, then the loaders are
# committed in shard order, each commit atomic on its own (cmd_shard.c,
# load_commit). The import is killed after a random delay within the
# measured length of an uninterrupted import (one is timed on every fresh
# store), a quarter of them within its first fifth. Afterwards, with
# `shard which` placing the keys:
#   - `neardup verify` passes on every shard;
#   - each shard holds all the round's documents placed in it, with their
#     fingerprints, or none of them (its count grew by that many, or by 0,
#     and `neardup get` finds every key, or none);
#   - the full shards are a prefix of the shard order (F*E*): a commit
#     starts only once the one before it returned; an import that exited
#     by itself exited 0 with every shard full;
#   - loader directories (each writable open of a shard removes every
#     nd-load-* in it; each shard's loader makes one when the load starts
#     and its commit removes it): every shard holds at most one; one left by
#     the previous round that is still there means the import died before
#     its open of that shard finished, so no shard holds the round and no
#     shard a new directory; once a shard is full, every shard not yet full
#     holds its loader's directory and every full shard before the last full
#     one none; an import that exited 0 left none;
#   - odd rounds then open every shard writable (`neardup delete
#     --missing-ok` of an absent key), which leaves no nd-load-* in it; even
#     rounds leave theirs to the next import's own opens.
# The store starts afresh every 20 rounds (long mode).
# Exit 77 (meson: skipped) with a NOTICE when this neardup has no shard import.
set -uo pipefail
source "$(dirname "$0")/crash_lib.sh"
if ! "$ND" shard import --help >/dev/null 2>&1; then
    echo "NOTICE: 'neardup shard import' is not available: the shard import crash case did not run" >&2
    rm -rf "$work"
    exit 77
fi
echo "crash_shard: seed $SEED, $KILLS kills"
RANDOM=$SEED
S=3 N=3000 CHUNK=200
store=$work/store

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
shard() { printf '%s/shard-%03d' "$store" "$1"; }
# counts: each shard's document count, space-separated.
counts() { "$ND" shard info "$store" --json | sed 's/.*"documents":\[\([0-9,]*\)\].*/\1/' | tr ',' ' '; }
# loadirs: every nd-load-* directory of the store, sorted.
loadirs() { find "$store"/shard-* -mindepth 1 -maxdepth 1 -name 'nd-load-*' | sort; }
# gen SEED PREFIX: N fresh documents (FP<TAB>PREFIX-<i>) in $work/in; in
# $work/placed FP<TAB>KEY<TAB>SHARD, placed by `shard which`.
gen() {
    awk -v seed="$1" -v prefix="$2" -v n=$N 'BEGIN { srand(seed);
        for (i = 0; i < n; i++)
            printf "%04x%04x%04x%04x\t%s-%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, prefix, i }' > "$work/in"
    cut -f2 "$work/in" | xargs -d '\n' "$ND" shard which "$store" | cut -f2 |
        paste "$work/in" - > "$work/placed"
}

rounds=0
for round in $(seq 1 "$KILLS"); do
    if [ $((round % 20)) -eq 1 ]; then # a fresh store every 20 rounds (long mode)
        rm -rf "$store"
        "$ND" shard init "$store" --shards $S --fingerprint-only --k 3 --docs 1e6 >/dev/null || { echo "shard init failed"; exit 1; }
        # An uninterrupted import (keys i<round>p-<i>) sets the kill window.
        gen $((SEED * 1000 + 999 - round)) "i${round}p"
        t0=$(now_ms)
        if ! "$ND" shard import "$store" --chunk $CHUNK "$work/in" >/dev/null 2>"$work/err"; then
            echo "round $round: the timed import failed: $(cat "$work/err")"; exit 1; fi
        span=$(( $(now_ms) - t0 ))
        echo "round $round: fresh store; an uninterrupted import takes $span ms"
    fi
    gen $((SEED * 1000 + round)) "i$round"
    old=$(loadirs)
    read -r -a before <<< "$(counts)"
    "$ND" shard import "$store" --chunk $CHUNK "$work/in" >/dev/null 2>"$work/err" &
    pid=$!
    # A quarter of the kills in the first fifth (the shards' opens, which
    # remove what earlier rounds left, and the spills), the rest anywhere
    # (the commits take most of the time) or just after the end.
    if [ $((RANDOM % 4)) -eq 0 ]; then ms=$((RANDOM % (span / 5 + 1)));
    else ms=$((RANDOM % (span * 5 / 4 + 1))); fi
    kill_after "$pid" "$ms"
    state=killed; [ "$rc" -eq 137 ] || state="exited $rc"
    if [ "$rc" -ne 137 ] && [ "$rc" -ne 0 ]; then
        bad "round $round: shard import exited $rc: $(cat "$work/err")"; fi

    # Each shard: verify, then all or none of its share of the round.
    read -r -a after <<< "$(counts)"
    states=
    for s in $(seq 0 $((S - 1))); do
        p=$(shard "$s")
        if "$ND" verify "$p" >/dev/null 2>"$work/verr"; then ok; else
            bad "round $round, shard $s: verify: $(cat "$work/verr")"; fi
        awk -F'\t' -v s="$s" '$3 == s {print $2 "\t" $1}' "$work/placed" > "$work/want"
        want=$(wc -l < "$work/want")
        got=$(( ${after[s]:-0} - ${before[s]:-0} ))
        # get answers every key on stdout: the document, or missing<TAB>KEY
        cut -f1 "$work/want" | xargs -d '\n' "$ND" get "$p" 2>"$work/gerr" > "$work/answers"
        grep -v $'^missing\t' "$work/answers" | cut -f1,2 > "$work/got"
        missing=$(grep -c $'^missing\t' "$work/answers")
        if [ "$got" -eq "$want" ]; then
            states+=F
            if cmp -s "$work/want" "$work/got"; then ok; else
                bad "round $round, shard $s: count grew by all $want of the round's documents, but get differs from the input (want < > got): $(diff "$work/want" "$work/got" | head -4 | tr '\n' ' ')"; fi
        elif [ "$got" -eq 0 ]; then
            states+=E
            if [ ! -s "$work/got" ] && [ "$missing" -eq "$want" ]; then ok; else
                bad "round $round, shard $s: count unchanged, but get finds $(wc -l < "$work/got") of the round's $want documents and reports $missing missing: $(head -2 "$work/got" "$work/gerr" | tr '\n' ' ')"; fi
        else
            states+=?
            bad "round $round, shard $s: count grew by $got, want 0 or all $want of the round's documents placed in it"
        fi
    done
    if [[ $states == *\?* ]]; then :; elif [[ $states =~ ^F*E*$ ]]; then ok; else
        bad "round $round: shards full (F) / empty (E) $states: want the full ones a prefix of the shard order"; fi
    if [ "$rc" -eq 0 ]; then
        if [ "$states" = "$(printf 'F%.0s' $(seq $S))" ]; then ok; else
            bad "round $round: the import exited 0 but the shards are $states, want all full"; fi
    fi

    # Loader directories.
    now=$(loadirs)
    kept=$(comm -12 <(echo "$old") <(echo "$now") | grep . )
    new=$(comm -13 <(echo "$old") <(echo "$now") | grep . )
    nleft=
    for s in $(seq 0 $((S - 1))); do
        p=$(shard "$s")
        n=$(grep -c "^$p/" <<< "$now")
        nnew=$(grep -c "^$p/" <<< "$new")
        nleft+="$n "
        if [ "$n" -le 1 ]; then ok; else
            bad "round $round, shard $s: $n loader directories, want at most 1: $(grep "^$p/" <<< "$now" | tr '\n' ' ')"; fi
        if [ "$rc" -eq 0 ] && [ "$n" -ne 0 ]; then
            bad "round $round, shard $s: the import exited 0 and left $n loader directories"; fi
        if [[ $states == *F* ]]; then
            st=${states:s:1} next=${states:s+1:1}
            if [ "$st" = E ] && [ "$nnew" -ne 1 ]; then
                bad "round $round, shard $s: not written while an earlier shard was, so its loader's directory should remain: $nnew new ones (shards $states)"; fi
            if [ "$st" = F ] && [ "$next" = F ] && [ "$nnew" -ne 0 ]; then
                bad "round $round, shard $s: committed before shard $((s + 1)) was, yet its loader's directory remains (shards $states)"; fi
        fi
    done
    if [ -n "$kept" ]; then
        if [[ $states =~ ^E*$ ]] && [ -z "$new" ]; then ok; else
            bad "round $round: the previous round's $(echo "$kept" | tr '\n' ' ')survived the import, so it died before its open of that shard removed them, before any loader started; yet the shards are $states and the new loader directories: $(echo "$new" | tr '\n' ' ')"; fi
    fi
    # Odd rounds: a writable open of each shard removes what is left.
    if [ $((round % 2)) -eq 1 ]; then
        for s in $(seq 0 $((S - 1))); do
            p=$(shard "$s")
            if ! "$ND" delete "$p" --missing-ok nd-crash-absent >/dev/null 2>"$work/derr"; then
                bad "round $round, shard $s: writable open (delete): $(cat "$work/derr")"; continue; fi
            n=$(find "$p" -mindepth 1 -maxdepth 1 -name 'nd-load-*' | wc -l)
            if [ "$n" -eq 0 ]; then ok; else
                bad "round $round, shard $s: $n loader directories after a writable open, want 0"; fi
        done
        swept=", swept"
    else swept=; fi
    rounds=$((rounds + 1))
    echo "round $round: shard import $state after $ms ms; shards $states; loader directories per shard: $nleft(left by earlier rounds: $(echo "$kept" | grep -c .))$swept"
done

# A mistake in this script must not pass for a clean run.
[ "$rounds" -eq "$KILLS" ] || bad "$rounds of $KILLS rounds ran"
finish crash_shard
