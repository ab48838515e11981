# test_store_matrix.sh — every admin command on stores made by every write
# path (issue 44, "a store matrix test").
#
# Write paths: add, add --sync, import, import --steps, dedupe --db,
# batch --add, shard import (its shard 0), Python's add_many and load, and
# a store of fingerprint function 1 and format 1 (store_paths.sh); each
# for a fingerprint-only and a resemblance store, as written (compacted by
# the matrix itself) and after an expire of the half last seen long ago.
# A store of function 1 still records it after every command. What the store
# acknowledged is its dump right after the write path (every key,
# fingerprint, score and time), checked against the input's keys; then
# each admin command must keep it: verify (ok), stats (the count), dump
# (equal), a query of sampled fingerprints (equal to a brute-force scan of
# the dump at k = 3), backup (the copy dumps and answers the same),
# compact, an expire that removes nothing, repair (equal after), and
# shard split into 3 (the shards together dump the same).

. "$(dirname "$src")/texts_tsv.sh"
. "$(dirname "$src")/store_paths.sh"
texts_tsv all.tsv
head -n 20 all.tsv | sed 's/^/copy:/' >> all.tsv # near-duplicates under other keys
n_all=$(wc -l < all.tsv)
half=$((n_all / 2))
head -n "$half" all.tsv > old.tsv
tail -n +"$((half + 1))" all.tsv > new.tsv
check "inputs: $n_all texts" "$n_all" -ge 40

# oracle DUMP QUERIES: for each query fingerprint, the keys within 3 bits
# in DUMP, as `query` prints them (QUERY KEY FP DIST), sorted
oracle() {
    python3 - "$1" "$2" <<'PY'
import sys
docs = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
out = []
for q in open(sys.argv[2]):
    q = q.strip()
    if not q:
        continue
    for key, fp, *_ in docs:
        d = bin(int(q, 16) ^ int(fp, 16)).count("1")
        if d <= 3:
            out.append(f"{q}\t{key}\t{fp}\t{d}")
print("\n".join(sorted(out)))
PY
}

# same WHAT DB DUMPFILE: DB holds exactly what DUMPFILE lists, verifies,
# counts it and answers queries as the scan of it does
same() {
    local what=$1 db=$2 want=$3
    expect_exit 0 "$ND" verify "$db"
    run "$ND" dump "$db"
    check "$what: dump equal ($(printf '%s\n' "$out" | grep -c .) of $(grep -c . "$want") lines)" \
        "$(printf '%s\n' "$out" | grep . | sort)" == "$(sort "$want")"
    run "$ND" stats "$db" --json
    check "$what: stats counts $(grep -c . "$want") [$(printf '%s' "$out" | head -c 80)]" \
        -n "$(printf '%s' "$out" | grep "\"documents\":$(grep -c . "$want"),")"
    cut -f2 "$want" | awk 'NR % 7 == 1' > "$db.q"
    STDIN="$db.q" run "$ND" query "$db" --k 3 -
    check "$what: queries equal the scan" \
        "$(printf '%s\n' "$out" | grep . | sort)" == "$(oracle "$want" "$db.q")"
}

# admin WHAT DB: every admin command on DB keeps what it held
admin() {
    local what=$1 db=$2
    "$ND" dump "$db" > "$db.want"
    check "$what: the store holds documents" "$(grep -c . "$db.want")" -gt 0
    same "$what" "$db" "$db.want"
    rm -rf "$db.bak"
    expect_exit 0 "$ND" backup "$db" "$db.bak"
    same "$what, its backup" "$db.bak" "$db.want"
    expect_exit 0 "$ND" compact "$db"
    same "$what, compacted" "$db" "$db.want"
    expect_exit 0 "$ND" expire "$db" --older-than 1s --now 900000000
    expect_out_eq "$(printf 'expired\t0')"
    same "$what, an expire of nothing" "$db" "$db.want"
    rm -rf "$db.damaged"
    expect_exit 0 "$ND" repair "$db"
    expect_out_match "^kept $(grep -c . "$db.want") documents\$"
    same "$what, repaired" "$db" "$db.want"
    [ -z "${fp_want:-}" ] || check "$what: still records $fp_want" \
        "$("$META_POKE" "$db" fp)" = "$fp_want"
    rm -rf "$db.split"
    expect_exit 0 "$ND" shard split "$db" "$db.split" --shards 3
    : > "$db.parts"
    for s in "$db.split"/shard-*; do "$ND" dump "$s" >> "$db.parts"; done
    check "$what: shard split keeps every document" \
        "$(sort "$db.parts")" == "$(sort "$db.want")"
    rm -rf "$db.bak" "$db.damaged" "$db.split"
}

# matrix WHAT DB: DB as written (admin compacts it on the way), then with
# its old half expired (the documents of old.tsv were written with --time 1000000000)
matrix() {
    local what=$1 db=$2
    admin "$what" "$db"
    local before
    before=$(grep -c . "$db.want")
    expect_exit 0 "$ND" expire "$db" --older-than 30d --now 1700000000
    local gone
    gone=$(printf '%s\n' "$out" | sed -n 's/^expired\t//p')
    check "$what: expire removed some ($gone)" "${gone:-0}" -gt 0
    admin "$what, expired" "$db"
    check "$what: expired $gone of $before" "$(grep -c . "$db.want")" -eq $((before - gone))
    rm -rf "$db"
}

for kind in --fingerprint-only --resemblance; do
    for path in $STORE_PATHS; do
        [ "$path" = dedupe ] && [ "$kind" = --resemblance ] && continue # dedupe --db: its own kind
        fp_want=
        [ "$path" = fp1 ] && fp_want=$FP1_CONFIG
        write "$path" "m-$path" "$kind"
        check "$path $kind: made" -d "m-$path"
        matrix "$path $kind" "m-$path"
    done
done
