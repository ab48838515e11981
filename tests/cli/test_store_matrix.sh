# test_store_matrix.sh — every admin command on stores made by every write
# path (issue 44, "a store matrix test").
#
# Write paths: add, add --sync, import, import --steps, dedupe --db,
# batch --add and shard import (its shard 0; the Python loader and
# add_many are the python tests'); each for a fingerprint-only and a
# resemblance store, as written (compacted by the matrix itself) and after
# an expire of the half last seen long ago. What the store
# acknowledged is its dump right after the write path (every key,
# fingerprint, score and time), checked against the input's keys; then
# each admin command must keep it: verify (ok), stats (the count), dump
# (equal), a query of sampled fingerprints (equal to a brute-force scan of
# the dump at k = 3), backup (the copy dumps and answers the same),
# compact, an expire that removes nothing, repair (equal after), and
# shard split into 3 (the shards together dump the same).

. "$(dirname "$src")/texts_tsv.sh"
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

# write PATH DB KIND...: DB made by PATH from old.tsv (last seen in 2001)
# and new.tsv (2023)
write() {
    local path=$1 db=$2
    shift 2
    local kind=("$@")
    case $path in
    dedupe)
        # (dedupe --db stamps its documents now; a second load adds the
        # half that expires)
        "$ND" dedupe --db "$db" --k 3 --format tsv new.tsv >/dev/null 2>&1
        "$ND" import "$db" --format tsv --time 1000000000 old.tsv >/dev/null 2>&1 ;;
    shard)
        # (shard init makes fingerprint-only shards unless told
        # --resemblance; it knows no --fingerprint-only)
        local skind=()
        [ "${kind[0]}" = --resemblance ] && skind=(--resemblance)
        "$ND" shard init "$db.sh" --shards 2 --k 3 --docs 1e4 "${skind[@]}" >/dev/null
        "$ND" shard import "$db.sh" --format tsv --time 1000000000 old.tsv >/dev/null 2>&1
        "$ND" shard import "$db.sh" --format tsv --time 1700000000 new.tsv >/dev/null 2>&1
        mv "$db.sh/shard-000" "$db"
        rm -rf "$db.sh" ;;
    *)
        "$ND" init "$db" --k 3 --docs 1e4 "${kind[@]}" >/dev/null
        local cmd=()
        case $path in
        add) cmd=(add) ;;
        add-sync) cmd=(add --sync) ;;
        import) cmd=(import) ;;
        import-steps) cmd=(import --steps --chunk 30) ;;
        batch) cmd=(batch --add) ;;
        esac
        "$ND" "${cmd[0]}" "$db" "${cmd[@]:1}" --format tsv --time 1000000000 old.tsv >/dev/null 2>&1
        "$ND" "${cmd[0]}" "$db" "${cmd[@]:1}" --format tsv --time 1700000000 new.tsv >/dev/null 2>&1 ;;
    esac
}

for kind in --fingerprint-only --resemblance; do
    for path in add add-sync import import-steps dedupe batch shard; do
        [ "$path" = dedupe ] && [ "$kind" = --resemblance ] && continue # dedupe --db: its own kind
        write "$path" "m-$path" "$kind"
        check "$path $kind: made" -d "m-$path"
        matrix "$path $kind" "m-$path"
    done
done
