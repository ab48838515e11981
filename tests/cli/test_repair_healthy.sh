# test_repair_healthy.sh — `repair` of a healthy store keeps every document
# (issue 44, point 1), whichever path wrote it. Before the fix a store
# written by the bulk paths (its families in a new generation, `docs.gG`,
# its files ingested whole) came out empty: "kept 0 documents, dropped
# 879", exit 0, and the emptied store verified.
#
# For a store made by each write path — add, add --sync, import, import
# --steps, dedupe --db, batch --add, add then import, a shard of shard
# import, expire; fingerprint-only and resemblance — as written and after
# `compact`: `repair` exits 0, reports 0 dropped and as many kept as the
# store held; after it `dump` prints exactly what it printed before (every
# key, fingerprint, score and time), `verify` passes and queries answer as
# before. Its report sets nothing aside (the logs it replays are named
# apart, not as damage): after a clean close and after a writer's kill -9;
# a damaged table file is still reported set aside.

# Small real texts: the licences and packages' copyright files, else the
# test's own.
. "$(dirname "$src")/texts_tsv.sh"
texts_tsv all.tsv
# a few texts twice under other keys: fingerprints with several documents
head -n 20 all.tsv | sed 's/^/copy:/' >> all.tsv
n_all=$(wc -l < all.tsv)
half=$((n_all / 2))
head -n "$half" all.tsv > a.tsv
tail -n +"$((half + 1))" all.tsv > b.tsv
check "inputs: $n_all texts" "$n_all" -ge 40

# healthy DB [QUERYTEXT]: repair keeps DB exactly as it was
healthy() {
    local what=$1 db=$2
    expect_exit 0 "$ND" verify "$db"
    run "$ND" dump "$db"
    local before=$out n
    n=$(printf '%s\n' "$before" | grep -c .)
    check "$what: the store holds documents" "$n" -gt 0
    printf '%s\n' "$before" | cut -f2 | head -n 25 > "$db.q"
    STDIN="$db.q" run "$ND" query "$db" --k 3 -
    local qbefore=$out qtext=""
    if [ -n "${3:-}" ]; then
        run "$ND" query "$db" --text "$3"
        qtext=$out
    fi
    rm -rf "$db.damaged"
    expect_exit 0 "$ND" repair "$db"
    local rep=$out
    expect_out_match "^kept $n documents\$"
    expect_out_match '^dropped 0 documents \(of [0-9]+ found\), nothing set aside$'
    expect_out_match '^replayed [0-9]+ logs? \(not damage\)$'
    check "$what: repair kept all $n [$rep]" -n "$(printf '%s\n' "$rep" | grep -x "kept $n documents")"
    expect_exit 0 "$ND" verify "$db"
    run "$ND" dump "$db"
    check "$what: dump after repair equals dump before ($(printf '%s\n' "$out" | grep -c .) of $n lines)" \
        "$out" == "$before"
    STDIN="$db.q" run "$ND" query "$db" --k 3 -
    check "$what: queries after repair answer as before" "$out" == "$qbefore"
    if [ -n "${3:-}" ]; then
        run "$ND" query "$db" --text "$3"
        check "$what: a text query after repair answers as before" "$out" == "$qtext"
    fi
    rm -rf "$db.damaged"
}
# both DB as written and DB compacted (a copy)
both() {
    local what=$1 db=$2
    rm -rf "$db.c"; cp -a "$db" "$db.c"
    healthy "$what" "$db" "${3:-}"
    expect_exit 0 "$ND" compact "$db.c"
    healthy "$what, compacted" "$db.c" "${3:-}"
    rm -rf "$db" "$db.c"
}
# a fingerprint-only store unless the kind is given (--resemblance)
fresh() {
    local kind=(--fingerprint-only)
    [ $# -gt 1 ] && kind=("${@:2}")
    "$ND" init "$1" --k 3 --docs 1e4 "${kind[@]}" >/dev/null
}

# --- fingerprint-only stores --------------------------------------------------
fresh add && "$ND" add add --format tsv all.tsv >/dev/null 2>&1
both "add" add
fresh sync && "$ND" add --sync sync --format tsv a.tsv >/dev/null 2>&1
both "add --sync" sync
fresh imp && "$ND" import imp --format tsv all.tsv >/dev/null 2>&1
both "import" imp
fresh steps && "$ND" import steps --steps --chunk 50 --format tsv all.tsv >/dev/null 2>&1
both "import --steps" steps
"$ND" dedupe --db dd --k 3 --format tsv all.tsv >/dev/null 2>&1
both "dedupe --db" dd
fresh bat && "$ND" batch bat --add --format tsv all.tsv >/dev/null 2>&1
both "batch --add" bat
fresh mix && "$ND" add mix --format tsv a.tsv >/dev/null 2>&1 &&
    "$ND" import mix --format tsv b.tsv >/dev/null 2>&1
both "add then import" mix
fresh gen2 && "$ND" import gen2 --format tsv a.tsv >/dev/null 2>&1 &&
    "$ND" import gen2 --format tsv b.tsv >/dev/null 2>&1 &&
    "$ND" add gen2 --format tsv <(sed 's/^/late:/' a.tsv | head -n 30) >/dev/null 2>&1
both "import, import, add" gen2
"$ND" shard init sh --shards 2 --fingerprint-only --k 3 --docs 1e4 >/dev/null
"$ND" shard import sh --format tsv all.tsv >/dev/null 2>&1
both "shard import (shard 0)" sh/shard-000
# expire: the first half last seen long ago
fresh exp && "$ND" import exp --time 1000000000 --format tsv a.tsv >/dev/null 2>&1 &&
    "$ND" import exp --time 1700000000 --format tsv b.tsv >/dev/null 2>&1 &&
    "$ND" expire exp --older-than 30d --now 1700000000 >/dev/null
both "import, expire" exp

# --- resemblance stores ---------------------------------------------------------
qt=$(head -n 1 all.tsv | cut -f1) # the first text's path
fresh radd --resemblance && "$ND" add radd --format tsv all.tsv >/dev/null 2>&1
both "resemblance add" radd "$qt"
fresh rimp --resemblance && "$ND" import rimp --format tsv all.tsv >/dev/null 2>&1
both "resemblance import" rimp "$qt"
fresh rbat --resemblance && "$ND" batch rbat --add --format tsv all.tsv >/dev/null 2>&1
both "resemblance batch --add" rbat "$qt"
fresh rexp --resemblance && "$ND" import rexp --time 1000000000 --format tsv a.tsv >/dev/null 2>&1 &&
    "$ND" import rexp --time 1700000000 --format tsv b.tsv >/dev/null 2>&1 &&
    "$ND" expire rexp --older-than 30d --now 1700000000 >/dev/null
both "resemblance import, expire" rexp "$qt"
"$ND" shard init rsh --shards 2 --k 3 --docs 1e4 --resemblance >/dev/null
"$ND" shard import rsh --format tsv all.tsv >/dev/null 2>&1
both "resemblance shard import (shard 1)" rsh/shard-001 "$qt"

# --- the report: logs replayed are not damage ----------------------------------
# A writer killed with -9 (its documents in the log only): repair replays
# the log and sets nothing aside; a damaged table file is set aside and said.
. "$(dirname "$src")/damage_lib.sh"
fresh k9
head -n 30 all.tsv > k9.tsv
mkfifo k9.in
"$ND" add k9 --sync --format tsv - <k9.in >k9.out 2>/dev/null &
wpid=$!
exec 9>k9.in
cat k9.tsv >&9
for _ in $(seq 200); do
    [ "$(grep -c . k9.out 2>/dev/null)" -ge 30 ] && break
    sleep 0.05
done
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
exec 9>&-
check "kill -9: the writer answered its 30 documents before" "$(grep -c . k9.out)" -eq 30
n9=$(grep -c '^new' k9.out)
check "kill -9: a log is left to replay" -n "$(ls k9/*.log 2>/dev/null)"
expect_exit 0 "$ND" repair k9
expect_out_match "^kept $n9 documents\$"
expect_out_match '^dropped 0 documents \(of [0-9]+ found\), nothing set aside$'
expect_out_match '^replayed [1-9][0-9]* logs? \(not damage\)$'
check "kill -9: the replayed logs are kept in lost/" -n "$(ls k9.damaged/lost/*.log 2>/dev/null)"
expect_exit 0 "$ND" verify k9
# the repaired store, closed cleanly: nothing set aside again
rm -rf k9.damaged
expect_exit 0 "$ND" repair k9
expect_out_match '^dropped 0 documents \(of [0-9]+ found\), nothing set aside$'
# its largest table file (the documents') damaged in a data block: set
# aside (the original of the file cut), and said so
rm -rf k9.damaged
flip_sst "$(ls -S k9/*.sst | head -n 1)" 0.4
run "$ND" repair k9
check "damaged: repair exit $code [$err]" "$code" -eq 0
expect_out_match '^dropped [0-9]+ documents \(of [0-9]+ found\), [1-9][0-9]* damaged files? set aside$'
check "damaged: the files set aside are in lost/" -n "$(ls k9.damaged/lost/*.sst 2>/dev/null)"
