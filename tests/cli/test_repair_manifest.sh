# test_repair_manifest.sh — `repair` of a store whose MANIFEST or CURRENT
# is damaged, whose log has a zeroed record header, or whose counters
# record is damaged, keeps every document the damage did not take and
# counts exactly what it dropped (issue 44, point 2).
#
# 1. CURRENT, the MANIFEST or both flipped (one byte), cut to half or
#    deleted, on stores written by add, import, import --steps and two
#    resemblance imports (all nine cases on the import's store; three on
#    each other store, so that each kind of store meets each part and
#    each damage once; the slow damage matrix runs all nine on every
#    store): every table file and the log are intact, so repair exits 0,
#    dump equals dump before, verify passes.
# 2. A killed `add --sync`'s log with one record header zeroed in its
#    middle: repair drops that record's document only, and says so.
# 3. The counters record malformed or saying too much: found and dropped
#    are counted from the documents.

. "$(dirname "$src")/texts_tsv.sh"
. "$(dirname "$src")/damage_lib.sh"
texts_tsv all.tsv
MP=${META_POKE:?set META_POKE to meta_poke}

fresh() { "$ND" init "$1" --k 3 --docs 1e4 "${@:2}" >/dev/null; }

# --- 1. MANIFEST and CURRENT ---------------------------------------------------
fresh imp --fingerprint-only && "$ND" import imp --format tsv all.tsv >/dev/null 2>&1
manifests "import" imp
fresh steps --fingerprint-only && "$ND" import steps --steps --chunk 100 --format tsv all.tsv >/dev/null 2>&1
manifests "import --steps" steps CURRENT:rm MANIFEST:flip both:half
python3 -c "
import random
r = random.Random(7)
for i in range(400): print('%016x\tk%d' % (r.getrandbits(64), i))" > fps.txt
fresh add --fingerprint-only && "$ND" add add fps.txt >/dev/null 2>&1
manifests "add" add CURRENT:half MANIFEST:rm both:flip
# in two loads: the second's sketch file lies above the first's
half=$(($(wc -l < all.tsv) / 2))
head -n "$half" all.tsv > all1.tsv && tail -n +$((half + 1)) all.tsv > all2.tsv
fresh rimp && "$ND" import rimp --format tsv all1.tsv >/dev/null 2>&1 &&
    "$ND" import rimp --format tsv all2.tsv >/dev/null 2>&1
manifests "resemblance import" rimp CURRENT:flip MANIFEST:half both:rm

# --- 2. a zeroed record header in the middle of the log ----------------------
python3 -c "
import random
r = random.Random(11)
for i in range(3000): print('%016x\tk%d' % (r.getrandbits(64), i))" > wfps.txt
fresh wal --fingerprint-only
mkfifo in.fifo
"$ND" add --sync wal in.fifo > acks.txt &
pid=$!
exec 7>in.fifo
cat wfps.txt >&7
for _ in $(seq 300); do [ "$(wc -l < acks.txt)" -ge 3000 ] && break; sleep 0.1; done
kill -9 "$pid"; wait "$pid" 2>/dev/null
exec 7>&-
check "add --sync acknowledged the 3000 documents before the kill" "$(wc -l < acks.txt)" -eq 3000
cp -a wal w0
"$ND" dump w0 > wal.before
check "the killed store holds the 3000 documents" "$(grep -c . wal.before)" -eq 3000
rm -rf w0 w0.damaged
log=$(ls -S wal/*.log | head -n1)
# zero the header of the record that starts nearest the log's middle (a
# record never straddles the padding of a 32 KiB block)
python3 - "$log" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
B, at, starts = 32768, 0, []
while at + 7 <= len(d):
    room = B - at % B
    if room < 7:
        at += room
        continue
    n = d[at + 4] | d[at + 5] << 8
    if n == 0 and d[at + 6] == 0:
        break
    starts.append(at)
    at += 7 + n
mid = min(starts, key=lambda s: abs(s - len(d) // 2))
d[mid:mid + 7] = bytes(7)
open(p, 'wb').write(d)
PY
repaired "log, a zeroed header in the middle" wal wal.before 1

# --- 3. the counters record damaged ------------------------------------------
fresh cnt --fingerprint-only && "$ND" import cnt --format tsv all.tsv >/dev/null 2>&1
"$ND" dump cnt > cnt.before
for v in x 0123456789abcdef; do
    rm -rf d d.damaged
    cp -a cnt d
    "$MP" d counters "$v" >/dev/null
    repaired "counters '$v'" d cnt.before
done
rm -rf d d.damaged
