# test_reader_damage.sh — readers never answer from part of a store
# (issue 44, point 4). Before: with one documents table file deleted or
# cut, `dump` exited 0 with 3,261 of 6,156 documents, `get` said missing
# for stored keys, `stats` still counted 6,156 and Python's `len(db)` was
# 6,156 while `'k' in db` was False: RocksDB 7.8's read-only instances
# open without a table file the MANIFEST lists, and read a cut one as far
# as it goes. Now every read-only open reads the MANIFEST and refuses
# (exit 2, `corrupt data`, the file named) when a table file it lists is
# missing, shorter or longer than recorded.
#
# Stores made by add, import, import --steps and a resemblance add; each
# table file deleted, then cut, one at a time (dump for every file; the
# largest, also made longer, and the smallest file meet stats, get, query,
# batch, verify and Python's len and in). Healthy stores still open beside a
# live writer (the readers-beside-writer tests in tests/crash/ cover it
# at length).

python3 -c "
import random
r = random.Random(44)
for i in range(3000): print('%016x\tk%d' % (r.getrandbits(64), i))" > fps.txt
cut -f1 fps.txt | head -n 50 > q.txt
head -n 50 fps.txt > batch.txt
. "$(dirname "$src")/texts_tsv.sh"
texts_tsv texts.tsv

PY=""
if [ -n "${NEARDUP_PYTHONPATH:-}" ] &&
    PYTHONPATH=$NEARDUP_PYTHONPATH python3 -c 'import neardup' 2>/dev/null; then
    PY=$NEARDUP_PYTHONPATH
fi

"$ND" init add --fingerprint-only --k 3 --docs 1e4 >/dev/null
# several add calls with a compact between: documents in more than one file
head -n 1500 fps.txt > a1.txt
tail -n +1501 fps.txt > a2.txt
"$ND" add add a1.txt >/dev/null 2>&1
"$ND" compact add >/dev/null
"$ND" add add a2.txt >/dev/null 2>&1
"$ND" compact add >/dev/null
"$ND" init imp --fingerprint-only --k 3 --docs 1e4 >/dev/null
"$ND" import imp fps.txt >/dev/null 2>&1
"$ND" init steps --fingerprint-only --k 3 --docs 1e4 >/dev/null
"$ND" import steps --steps --chunk 1000 fps.txt >/dev/null 2>&1
"$ND" init res --k 3 --docs 1e4 >/dev/null
"$ND" add res --format tsv texts.tsv >/dev/null 2>&1

# refused WHAT CMD...: exit 2, `corrupt data`, the damaged file named
refused() {
    local what=$1; shift
    run "$@"
    check "$what: $* exit $code, want 2 :: $err" "$code" -eq 2
    check "$what: $* does not name $name :: $err" \
        -n "$(printf '%s\n' "$err" | grep 'corrupt data' | grep -F "$name")"
}
# every reader refuses store d, whose file $name is damaged (HOW)
all_refuse() {
    local what=$1 key=$2
    refused "$what" "$ND" stats d
    refused "$what" "$ND" dump d
    refused "$what" "$ND" get d "$key"
    STDIN=q.txt refused "$what" "$ND" query d -
    STDIN=batch.txt refused "$what" "$ND" batch d -
    refused "$what" "$ND" verify d
    if [ -n "$PY" ]; then
        for expr in "len(db)" "'$key' in db"; do
            run env PYTHONPATH="$PY" python3 -c "
import neardup, sys
try:
    db = neardup.Database('d', readonly=True)
except neardup.CorruptError as e:
    print(e, file=sys.stderr); sys.exit(2)
print($expr)"
            check "$what: python $expr exit $code, want 2 ($out) :: $err" "$code" -eq 2
            check "$what: python $expr does not name $name :: $err" \
                -n "$(printf '%s\n' "$err" | grep -F "$name")"
        done
    fi
}

for st in add imp steps res; do
    expect_exit 0 "$ND" verify "$st"
    key=$("$ND" dump "$st" 2>/dev/null | head -n 1 | cut -f1)
    check "$st: a stored key" -n "$key"
    files=$(cd "$st" && ls -S ./*.sst | sed 's|^\./||')
    nfiles=$(printf '%s\n' "$files" | grep -c .)
    check "$st: table files" "$nfiles" -ge 2
    big=$(printf '%s\n' "$files" | head -n 1)
    small=$(printf '%s\n' "$files" | tail -n 1)
    for name in $files; do
        for how in missing cut longer; do
            [ "$how" = longer ] && [ "$name" != "$big" ] && continue
            rm -rf d; cp -a "$st" d
            size=$(stat -c %s "d/$name")
            case $how in
            missing) rm "d/$name" ;;
            cut) truncate -s $((size / 2)) "d/$name" ;;
            longer) printf 'xx' >> "d/$name" ;;
            esac
            what="$st, $name $how"
            if [ "$name" = "$big" ] || [ "$name" = "$small" ]; then
                all_refuse "$what" "$key"
            else
                refused "$what" "$ND" dump d
            fi
            if [ "$how" = missing ]; then expect_err_match "table file $name, listed in MANIFEST-[0-9]+, is missing"
            else expect_err_match "table file $name is [0-9]+ bytes; MANIFEST-[0-9]+ records $size"; fi
        done
    done
    rm -rf d
done

# --- healthy stores open beside a live writer ---------------------------------
"$ND" init live --fingerprint-only --k 3 --docs 1e4 >/dev/null
mkfifo in.fifo
"$ND" add --sync live in.fifo > acks.txt &
pid=$!
exec 7>in.fifo
fails=0
for i in $(seq 20); do
    sed -n "$((i * 100 - 99)),$((i * 100))p" fps.txt >&7
    run "$ND" stats live
    [ "$code" -eq 0 ] || { fails=$((fails + 1)); echo "stats beside a writer: exit $code: $err"; }
    run "$ND" verify live
    [ "$code" -eq 0 ] || { fails=$((fails + 1)); echo "verify beside a writer: exit $code: $err"; }
done
exec 7>&-
wait "$pid"
check "readers beside a writer: $fails failed" "$fails" -eq 0
expect_exit 0 "$ND" verify live

# --- a deleted write-ahead log (issue 44, point 3) ------------------------------
# `add --sync` acknowledged documents, then kill -9: they are in the log
# only. Before, with that log deleted every command opened the store
# without them (stats 0 documents, verify ok, and a writer then wrote
# past the loss). Now each open, a writer's too, refuses: the MANIFEST
# names the log its families' unflushed writes begin in.
"$ND" init wal --fingerprint-only --k 3 --docs 1e4 >/dev/null
mkfifo wal.fifo
"$ND" add --sync wal wal.fifo > wacks.txt &
pid=$!
exec 8>wal.fifo
cat fps.txt >&8
for _ in $(seq 100); do [ "$(wc -l < wacks.txt)" -ge 300 ] && break; sleep 0.1; done
kill -9 "$pid"; wait "$pid" 2>/dev/null
exec 8>&-
check "add --sync acknowledged documents before the kill" "$(wc -l < wacks.txt)" -ge 300
big=$(cd wal && ls -S ./*.log | head -n 1 | sed 's|^\./||')
rm -rf d; cp -a wal d; rm "d/$big"
for cmd in stats dump verify get; do
    if [ "$cmd" = get ]; then run "$ND" get d k1; else run "$ND" "$cmd" d; fi
    check "log deleted: $cmd exit $code, want 2 :: $err" "$code" -eq 2
    expect_err_match 'corrupt data: .*write-ahead log [0-9]+\.log \(or a later one\) that MANIFEST-[0-9]+ names is missing'
done
STDIN=batch.txt expect_exit 2 "$ND" add d -
expect_err_match 'write-ahead log .* is missing'
# the store as the kill left it opens, every acknowledged document there
rm -rf d; cp -a wal d
run "$ND" dump d
check "kill -9: every acknowledged document kept" \
    -z "$(cut -f2 wacks.txt | grep . | grep -vxFf <(printf '%s\n' "$out" | cut -f1) | head -n 1)"
rm -rf d
