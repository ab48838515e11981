# damage_lib.sh — damage a store and check what `repair` keeps (issue 44,
# point 2); sourced after run.sh by test_repair_damage.sh,
# test_repair_manifest.sh and test_damage_matrix.sh.
#
#   flip_store WHAT DB   each table file flipped in a data block, its
#                        filter and its index (a copy each; FLIP_PLACES
#                        "0.4 filter index" chooses the places,
#                        FLIP_FAMILY one family's files): the command fails
#                        with corrupt data or answers as before, and
#                        repair keeps exactly what it reports
#   manifests WHAT DB [PART:HOW...]  CURRENT, MANIFEST or both flipped,
#                        cut in half or removed (a copy each; the cases
#                        named, else all nine): repair keeps every document
#   repaired WHAT DB BEFORE [MISSING]  repair DB; it holds BEFORE's
#                        documents but MISSING of them, counted exactly

# flip_sst FILE WHERE: a byte at fraction WHERE of the data blocks, or in
# the middle of the filter block (found through the metaindex block), or
# in the index; status 3, nothing flipped, when FILE has no filter
sst_py=$(dirname "${BASH_SOURCE[0]}")/sst_file.py
flip_sst() { python3 "$sst_py" flip "$1" "$2"; }
# sst_family FILE...: the column family each FILE belongs to, a line
# each (empty for a file written apart and ingested)
sst_family() { python3 "$sst_py" family "$@"; }

# damaged WHAT DB BEFORE [NOCHECK]: DB (damaged) fails or answers as before
# (unless NOCHECK); repair keeps exactly what it says; sets $dropped (-1 if
# DB could not be repaired)
damaged() {
    local what=$1 db=$2 before=$3 n
    n=$(grep -c . "$before")
    run "$ND" dump "$db"
    if [ -n "${4:-}" ]; then
        :
    elif [ "$code" -eq 0 ]; then
        check "$what: dump exit 0 but not as before" "$out" == "$(cat "$before")"
    else
        check "$what: dump exit $code, want 2" "$code" -eq 2
        expect_err_match 'corrupt data'
    fi
    run "$ND" repair "$db"
    dropped=-1
    if [ "$code" -ne 0 ]; then
        check "$what: repair exit $code, want 0 or 2" "$code" -eq 2
        expect_err_match 'restore a backup'
        return
    fi
    local rep=$out kept found
    kept=$(printf '%s\n' "$rep" | sed -n 's/^kept \([0-9]*\) documents$/\1/p')
    dropped=$(printf '%s\n' "$rep" | sed -n 's/^dropped \([0-9]*\) documents (of \([0-9]*\) found).*/\1/p')
    found=$(printf '%s\n' "$rep" | sed -n 's/^dropped [0-9]* documents (of \([0-9]*\) found).*/\1/p')
    check "$what: a report [$rep]" -n "$kept" -a -n "$dropped" -a -n "$found"
    [ -n "$kept" ] && [ -n "$dropped" ] || { dropped=-1; return; }
    # documents lost to a damaged table file: the report names the file
    # it set aside (the original of the file cut, or the file whole)
    if [ "$dropped" -gt 0 ]; then
        check "$what: dropped $dropped, the report names damaged files [$rep]" \
            -n "$(printf '%s\n' "$rep" | grep -E '^dropped .*, [1-9][0-9]* damaged files? set aside$')"
    fi
    expect_exit 0 "$ND" verify "$db"
    run "$ND" dump "$db"
    local after=$out changed missing
    changed=$(comm -13 <(sort "$before") <(printf '%s\n' "$after" | grep . | sort) | wc -l)
    missing=$(comm -23 <(sort "$before") <(printf '%s\n' "$after" | grep . | sort) | wc -l)
    check "$what: $changed kept documents differ from before" "$changed" -eq 0
    check "$what: reported dropped $dropped, missing $missing" "$dropped" -eq "$missing"
    check "$what: kept $kept + dropped $dropped = found $found" $((kept + dropped)) -eq "$found"
    check "$what: found $found of the $n documents" "$found" -eq "$n"
}

# flip_store WHAT DB: every table file of DB flipped at each place, each
# in a copy repaired by damaged; DB is removed after
flip_store() {
    local what=$1 db=$2 n f where worst=0 hit=0
    "$ND" dump "$db" > "$db.before"
    n=$(grep -c . "$db.before")
    # Each file gets its data block flipped and then its filter or its
    # index in turn: the same code paths as all three at two thirds of
    # the time (FLIP_EVERY_PLACE=1: all three, the slow damage matrix).
    local places=(filter index) turn=0
    local files=("$db"/*.sst) families=()
    # (FLIP_FAMILY=NAME: only that family's files)
    [ -n "${FLIP_FAMILY:-}" ] && mapfile -t families < <(sst_family "${files[@]}")
    local i
    for i in "${!files[@]}"; do
        f=${files[i]}
        [ -n "${FLIP_FAMILY:-}" ] && [ "${families[i]}" != "$FLIP_FAMILY" ] && continue
        local wheres=(0.4 "${places[turn % 2]}")
        [ "${FLIP_EVERY_PLACE:-0}" = 1 ] && wheres=(0.4 filter index)
        [ -n "${FLIP_PLACES:-}" ] && read -r -a wheres <<< "$FLIP_PLACES"
        turn=$((turn + 1))
        for where in "${wheres[@]}"; do
            rm -rf d d.damaged
            cp -a "$db" d
            flip_sst "d/$(basename "$f")" "$where"
            [ $? -eq 3 ] && continue # no filter in this file
            # RocksDB 7.8 reads a file whose LZ4-compressed index is damaged
            # as if it held nothing (`dump` exit 0, fewer documents): not
            # checked before the repair, which sets such a file aside
            damaged "$what, $(basename "$f") at $where" d "$db.before" \
                "$([ "$where" = index ] && echo nocheck)"
            case $where in
            filter)
                check "$what, $(basename "$f") filter: dropped $dropped" "$dropped" -le 0 ;;
            index) ;;
            *)
                [ "$dropped" -gt "$worst" ] && worst=$dropped
                [ "$dropped" -gt 0 ] && hit=$((hit + 1)) ;;
            esac
        done
    done
    # A 4 KiB block holds at most about 140 of these entries: a third of
    # a small store may be one block.
    local most=$((n / 3 > 140 ? n / 3 : 140))
    check "$what: a flipped data block dropped at most $worst of $n ($most at most)" \
        "$worst" -le "$most"
    # (FLIP_ANY_HIT=0: the flips may all land on deletions, which lose
    # nothing)
    [ "${FLIP_ANY_HIT:-1}" = 0 ] || check "$what: some flip hit the documents ($hit)" "$hit" -gt 0
    rm -rf d d.damaged "$db"
}
# damage_manifest DB WHAT HOW: WHAT is CURRENT, MANIFEST or both; HOW flip, half or rm
damage_manifest() {
    local db=$1 what=$2 how=$3 f files=()
    case $what in
    CURRENT) files=("$db/CURRENT") ;;
    MANIFEST) files=("$db"/MANIFEST-*) ;;
    both) files=("$db/CURRENT" "$db"/MANIFEST-*) ;;
    esac
    for f in "${files[@]}"; do
        case $how in
        rm) rm -f "$f" ;;
        half) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
        flip) python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
d[len(d) // 2] ^= 0x5a
open(p, 'wb').write(d)
PY
        ;;
        esac
    done
}

# repaired WHAT DB BEFORE [DROPPED]: repair exits 0, verify passes, every
# document of BEFORE but DROPPED of them is kept as it was, and the report
# says so exactly
repaired() {
    local what=$1 db=$2 before=$3 want=${4:-0} n kept dropped found after missing changed
    n=$(grep -c . "$before")
    run "$ND" repair "$db"
    check "$what: repair exit $code, want 0 [$err]" "$code" -eq 0
    kept=$(printf '%s\n' "$out" | sed -n 's/^kept \([0-9]*\) documents$/\1/p')
    dropped=$(printf '%s\n' "$out" | sed -n 's/^dropped \([0-9]*\) documents (of.*/\1/p')
    found=$(printf '%s\n' "$out" | sed -n 's/^dropped [0-9]* documents (of \([0-9]*\) found).*/\1/p')
    check "$what: a report [$out]" -n "$kept" -a -n "$dropped" -a -n "$found"
    [ -n "$kept" ] && [ -n "$dropped" ] && [ -n "$found" ] || return
    expect_exit 0 "$ND" verify "$db"
    run "$ND" dump "$db"
    after=$out
    changed=$(comm -13 <(sort "$before") <(printf '%s\n' "$after" | grep . | sort) | wc -l)
    missing=$(comm -23 <(sort "$before") <(printf '%s\n' "$after" | grep . | sort) | wc -l)
    check "$what: $changed kept documents differ from before" "$changed" -eq 0
    check "$what: $missing documents missing, want $want" "$missing" -eq "$want"
    check "$what: reported dropped $dropped, missing $missing" "$dropped" -eq "$missing"
    check "$what: found $found, want $n" "$found" -eq "$n"
    check "$what: kept $kept + dropped $dropped = found $found" $((kept + dropped)) -eq "$found"
}

# manifests WHAT DB: every damage of CURRENT and MANIFEST on DB, each in a copy
manifests() {
    local what=$1 db=$2 part how case cases=("${@:3}")
    [ ${#cases[@]} -gt 0 ] ||
        for part in CURRENT MANIFEST both; do
            for how in flip half rm; do cases+=("$part:$how"); done
        done
    "$ND" dump "$db" > "$db.before"
    check "$what: a store of documents" "$(grep -c . "$db.before")" -gt 100
    for case in "${cases[@]}"; do
        part=${case%:*} how=${case#*:}
        rm -rf d d.damaged
        cp -a "$db" d
        damage_manifest d "$part" "$how"
        repaired "$what, $part $how" d "$db.before"
    done
    rm -rf d d.damaged
}

