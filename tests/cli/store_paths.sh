# store_paths.sh — a store made by each write path, for the tests that run
# admin commands or damage over all of them (issue 44's store matrix):
# sourced after run.sh, with old.tsv and new.tsv (KEY TAB TEXT) in $T.
#
# write PATH DB KIND: DB made by PATH from old.tsv (last seen in 2001) and
# new.tsv (2023); KIND --fingerprint-only or --resemblance. Paths:
#   add add-sync import import-steps batch   the CLI commands of that name
#   dedupe       dedupe --db (its own kind: fingerprint-only), then import
#   shard        shard import into 2 shards; DB is shard 0
#   py-add-many  Python Database.add_many (the group commit)
#   py-load      Python Database.load (the bulk loader)
#   fp1          add into a store recording fingerprint function 1 and the
#                oldest format of its kind (1; a resemblance store 5), as the
#                oldest builds still read made them
# The Python paths need NEARDUP_PYTHONPATH (the built module's directory).
STORE_PATHS="add add-sync import import-steps dedupe batch shard py-add-many py-load fp1"

# the meta record a build before fingerprint function 2 wrote
FP1_CONFIG="fp1;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:2"

write() {
    local path=$1 db=$2 kind=$3
    case $path in
    dedupe)
        # (dedupe --db stamps its documents now; a second load adds the
        # half that expires)
        "$ND" dedupe --db "$db" --k 3 --format tsv new.tsv >/dev/null 2>&1
        "$ND" import "$db" --format tsv --time 1000000000 old.tsv >/dev/null 2>&1 ;;
    shard)
        "$ND" shard init "$db.sh" --shards 2 --k 3 --docs 1e4 "$kind" >/dev/null
        "$ND" shard import "$db.sh" --format tsv --time 1000000000 old.tsv >/dev/null 2>&1
        "$ND" shard import "$db.sh" --format tsv --time 1700000000 new.tsv >/dev/null 2>&1
        mv "$db.sh/shard-000" "$db"
        rm -rf "$db.sh" ;;
    py-add-many|py-load)
        PYTHONPATH=${NEARDUP_PYTHONPATH:?set NEARDUP_PYTHONPATH to the built module} \
        python3 - "$db" "$kind" "$path" <<'PY'
import sys
import neardup
db, kind, path = sys.argv[1:4]
with neardup.Database(db, create=True, k=3, docs=10000,
                      fingerprint_only=kind == "--fingerprint-only") as d:
    for name, t in (("old.tsv", 1000000000), ("new.tsv", 1700000000)):
        with open(name, encoding="utf-8") as f:
            recs = [(key, text, 0.0, t)
                    for key, text in (line.rstrip("\n").split("\t", 1) for line in f)]
        if path == "py-add-many":
            d.add_many(recs)
        else:
            d.load(recs)
PY
        ;;
    fp1)
        "$ND" init "$db" --k 3 --docs 1e4 "$kind" >/dev/null
        "${META_POKE:?set META_POKE to meta_poke}" "$db" fp "$FP1_CONFIG"
        "$ND" add "$db" --format tsv --time 1000000000 old.tsv >/dev/null 2>&1
        "$ND" add "$db" --format tsv --time 1700000000 new.tsv >/dev/null 2>&1
        [ "$kind" = --resemblance ] || "$META_POKE" "$db" format 1 ;;
    *)
        "$ND" init "$db" --k 3 --docs 1e4 "$kind" >/dev/null
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
