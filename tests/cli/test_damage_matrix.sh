# test_damage_matrix.sh — damage over the store matrix (issue 44, point 2:
# "cli_damage covers every file kind x every store of the matrix"). For
# every write path of store_paths.sh, fingerprint-only and resemblance, as
# written and after an expire of its old half:
#   - each table file (documents, reverse, tables, sketches, bands, meta)
#     flipped in a data block, its filter and its index: commands fail
#     with corrupt data or answer as before, and repair keeps exactly what
#     it reports (flip_store);
#   - CURRENT, the MANIFEST or both flipped, cut or removed: repair keeps
#     every document (manifests);
#   - the OPTIONS file flipped or removed: every command answers as before
#     (RocksDB reads it only to check), and repair still keeps every
#     document.
# The stores of add, import, import --steps and a resemblance import are
# also the fast tests' (cli_repair_damage, cli_repair_manifest); this one
# is in suite slow.

. "$(dirname "$src")/texts_tsv.sh"
. "$(dirname "$src")/store_paths.sh"
. "$(dirname "$src")/damage_lib.sh"
export FLIP_EVERY_PLACE=1 # every file at its data block, filter and index
texts_tsv texts.tsv
# 4 documents of each text's first 600 bytes, each with a word of its own:
# enough documents that a documents file has many blocks (a damaged
# block's share of the store is small), few bytes to repair
awk -F '\t' '{ for (v = 0; v < 4; v++) printf "%s#%d\tvariant%d %s\n", $1, v, v, substr($2, 1, 600) }' \
    texts.tsv > all.tsv
head -n 20 all.tsv | sed 's/^/copy:/' >> all.tsv
n_all=$(wc -l < all.tsv)
head -n "$((n_all / 2))" all.tsv > old.tsv
tail -n +"$((n_all / 2 + 1))" all.tsv > new.tsv

# options WHAT DB: the OPTIONS file damaged (a copy each way)
options() {
    local what=$1 db=$2 how
    "$ND" dump "$db" > "$db.before"
    for how in flip rm; do
        rm -rf d d.damaged
        cp -a "$db" d
        for f in d/OPTIONS-*; do
            case $how in
            rm) rm -f "$f" ;;
            flip) python3 -c "
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[len(d) // 2] ^= 0x5a
open(sys.argv[1], 'wb').write(d)" "$f" ;;
            esac
        done
        run "$ND" dump d
        if [ "$code" -eq 0 ]; then
            check "$what, OPTIONS $how: dump as before" "$out" == "$(cat "$db.before")"
            expect_exit 0 "$ND" verify d
        else
            check "$what, OPTIONS $how: dump exit $code, want 0 or 2" "$code" -eq 2
        fi
        repaired "$what, OPTIONS $how" d "$db.before"
    done
    rm -rf d d.damaged
}

# damage_all WHAT DB: every kind of damage, each on copies of DB
damage_all() {
    local what=$1 db=$2
    manifests "$what" "$db"
    options "$what" "$db"
    flip_store "$what" "$db" # (removes DB)
}

# DAMAGE_PATHS: a subset of the write paths (default all of STORE_PATHS)
for kind in --fingerprint-only --resemblance; do
    for path in ${DAMAGE_PATHS:-$STORE_PATHS}; do
        [ "$path" = dedupe ] && [ "$kind" = --resemblance ] && continue # dedupe --db: its own kind
        write "$path" "m-$path" "$kind"
        check "$path $kind: made" -d "m-$path"
        cp -a "m-$path" "x-$path"
        damage_all "$path $kind" "m-$path"
        expect_exit 0 "$ND" expire "x-$path" --older-than 30d --now 1700000000
        FLIP_ANY_HIT=0 damage_all "$path $kind, expired" "x-$path"
    done
done
