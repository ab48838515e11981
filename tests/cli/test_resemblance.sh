# test_resemblance.sh — a store created with --min-resemblance: an edited
# copy of a short text whose fingerprint lies beyond k is caught there
# (and not in a fingerprint-only store), with its resemblance as the last
# column; a text that only shares vocabulary is not; fingerprint records
# are refused with one line; add, batch (with and without --add), import
# and query --text agree; stats shows the sketches; verify passes.

python3 - <<'EOF'
import json, random
base = ("the licensee may copy and distribute verbatim copies of the program source code "
        "as received in any medium provided that each copy carries an appropriate copyright "
        "notice and a disclaimer of warranty and keeps intact all the notices that refer to "
        "this license and to the absence of any warranty").split()
copy = list(base)
copy[20] = "conspicuously"            # one word of 45: resemblance about 0.88
vocab = list(base)
random.Random(7).shuffle(vocab)       # the same words, another text
recs = [("orig", " ".join(base)), ("copy", " ".join(copy)), ("shuffled", " ".join(vocab)),
        ("same", " ".join(base))]
with open("docs.jsonl", "w") as f:
    for k, t in recs:
        f.write(json.dumps({"id": k, "text": t}) + "\n")
with open("docs.tsv", "w") as f:
    for k, t in recs:
        f.write("%s\t%s\n" % (k, t))
with open("copy.txt", "w") as f:
    f.write(" ".join(copy) + "\n")
EOF

expect_exit 0 "$ND" init rs --k 3 --docs 1e5 --resemblance
expect_out_match 'min resemblance 0\.85'
expect_exit 0 "$ND" init fp --fingerprint-only --k 3 --docs 1e5
expect_exit 1 "$ND" init bad --min-resemblance 0
expect_err_match 'min-resemblance must be a number in \(0, 1\]'
expect_exit 1 "$ND" init bad --min-resemblance 1.5
check "a refused init creates nothing" ! -e bad
# The default store verifies by resemblance; --fingerprint-only excludes a
# threshold; a fingerprint into the default store is refused with the way on.
expect_exit 0 "$ND" init dflt --k 3 --docs 1e5
expect_out_match 'min resemblance 0\.85$'
expect_exit 0 "$ND" init dfltj --json
expect_out_match '"min_resemblance":0\.85'
expect_exit 0 "$ND" init fpj --fingerprint-only --json
check "a fingerprint-only store's JSON has no threshold" -z "$(printf '%s' "$out" | grep min_resemblance)"
expect_exit 1 "$ND" init bad --fingerprint-only --resemblance
expect_err_match '^neardup: init: --fingerprint-only and --resemblance exclude each other; '
expect_exit 1 "$ND" init bad --fingerprint-only --min-resemblance 0.9
expect_err_match '^neardup: init: --fingerprint-only and --min-resemblance exclude each other; '
check "a refused init creates nothing" ! -e bad
echo "0123456789abcdef	k1" > one.fp
expect_exit 1 "$ND" add dflt --format fp one.fp
expect_err_match 'verifies by resemblance'
expect_exit 0 "$ND" add dflt --format tsv docs.tsv
expect_out_match '^dup	copy	orig	'

# The edited copy lies beyond k = 3 bits of the original: a
# fingerprint-only store calls it new, the resemblance store a dup.
orig=$("$ND" fingerprint --format jsonl docs.jsonl | awk -F'\t' 'NR == 1 { print $1 }')
copyfp=$("$ND" fingerprint --format jsonl docs.jsonl | awk -F'\t' 'NR == 2 { print $1 }')
run "$ND" distance "$orig" "$copyfp"
check "the copy lies beyond k = 3 (distance $out)" "${out%%[^0-9]*}" -gt 3
expect_exit 0 "$ND" add fp --format jsonl docs.jsonl
expect_out_eq "$(printf 'new\torig\nnew\tcopy\nnew\tshuffled\ndup\tsame\torig\t0')"
expect_exit 0 "$ND" add rs --format jsonl docs.jsonl
expect_lines 4
expect_out_match '^new	orig$'
expect_out_match '^dup	copy	orig	[0-9]+	0\.(8[5-9]|9[0-9])[0-9]$'
expect_out_match '^new	shuffled$'
expect_out_match '^dup	same	(orig|copy)	[0-9]+	(1\.000|0\.[89][0-9]{2})$'
expect_err_match 'add: 2 new, 2 dup, 0 bad'
expect_exit 0 "$ND" verify rs
# every document is stored in such a store, dups too
run "$ND" stats rs
expect_out_match '^documents	4$'
expect_out_match '^min_resemblance	0\.85$'
expect_out_match '^sketches	4$'
expect_out_match '^band_keys	48$'
run "$ND" stats rs --json
expect_out_match '"min_resemblance":0\.85,"sketches":4,"band_keys":48'

# JSON decisions carry the resemblance
rm -rf rs2 && "$ND" init rs2 --k 3 --docs 1e5 --min-resemblance 0.8 >/dev/null
expect_exit 0 "$ND" add rs2 --format tsv --json docs.tsv
expect_out_match '"status":"dup","key":"copy","match":"orig","dist":[0-9]+,"resemblance":0\.[89]'

# fingerprint records: one line naming the place, exit 1, nothing stored
printf '%s\tfpkey\n' "$orig" > one.fp
expect_exit 1 "$ND" add rs one.fp
expect_err_match '^neardup: one\.fp:1: this store verifies by resemblance: records need text, not a fingerprint$'
expect_exit 0 "$ND" add rs --skip-bad one.fp
expect_err_match '0 new, 0 dup, 1 bad'
expect_exit 1 "$ND" import rs one.fp
expect_err_match 'one\.fp:1: this store verifies by resemblance'
expect_exit 1 "$ND" batch rs --add one.fp
run "$ND" stats rs
expect_out_match '^documents	4$'

# query --text: the near-duplicates with their resemblance; a fingerprint
# query answers by distance alone, as in any store
expect_exit 0 "$ND" query rs --text copy.txt
expect_out_match '^[0-9a-f]{16}	copy	[0-9a-f]{16}	0	1\.000$'
expect_out_match '^[0-9a-f]{16}	orig	[0-9a-f]{16}	[0-9]+	0\.(8[5-9]|9[0-9])[0-9]$'
run "$ND" query rs --text copy.txt --json
expect_out_match '"key":"orig".*"resemblance":0\.'
expect_exit 0 "$ND" query rs "$orig" --k 0
expect_out_match "^$orig	orig	$orig	0$"

# batch without --add checks and stores nothing; with --add, as add
rm -rf rb && "$ND" init rb --k 3 --docs 1e5 --resemblance >/dev/null
expect_exit 0 "$ND" batch rb --format jsonl docs.jsonl
expect_out_match '^dup	copy	orig	[0-9]+	0\.'
run "$ND" stats rb
expect_out_match '^documents	0$'
expect_exit 0 "$ND" batch rb --add --format jsonl docs.jsonl
expect_out_match '^dup	copy	orig	[0-9]+	0\.'
run "$ND" stats rb
expect_out_match '^documents	4$'
expect_exit 0 "$ND" verify rb

# import signs texts; then add sees them
rm -rf ri && "$ND" init ri --k 3 --docs 1e5 --resemblance >/dev/null
head -1 docs.jsonl > first.jsonl
expect_exit 0 "$ND" import ri --format jsonl first.jsonl
printf '{"id":"again","text":"%s"}\n' "$(cat copy.txt)" > again.jsonl
expect_exit 0 "$ND" add ri --format jsonl again.jsonl
expect_out_match '^dup	again	orig	[0-9]+	0\.'
expect_exit 0 "$ND" verify ri

# delete removes the sketch and its band keys
expect_exit 0 "$ND" delete rs orig copy shuffled same
run "$ND" stats rs
expect_out_match '^sketches	0$'
expect_out_match '^band_keys	0$'
expect_exit 0 "$ND" verify rs

# ---- real text: paragraphs of 35-50 words of the GPL-3 (tests/data/texts),
# each with an edited copy (its middle word replaced: resemblance about
# 0.85, estimated 0.80-0.91). At R = 0.75 every copy is a dup of its own
# original with its resemblance, though most lie beyond k = 3 (up to 12
# bits); a fingerprint-only store calls those new. (Two words replaced
# in 40 leave a resemblance near 0.73, whose band keys meet with
# probability 0.64 only: the store's band design targets R >= 0.8.) And
# the paragraphs, which share the licence's vocabulary, are not dups of
# each other, nor is a paragraph's words shuffled.
data=$(dirname "$src")/../data/texts
python3 - "$data/GPL-3" <<'EOF2'
import random, re, sys
paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", open(sys.argv[1]).read())]
sel = [p for p in paras if 35 <= len(p.split()) <= 50][:20]
with open("para.tsv", "w") as f:
    for i, p in enumerate(sel):
        f.write("orig%02d\t%s\n" % (i, p))
    for i, p in enumerate(sel):
        w = p.split()
        w[len(w) // 2] = "zebra"
        f.write("copy%02d\t%s\n" % (i, " ".join(w)))
    w = sel[0].split()
    random.Random(3).shuffle(w)
    f.write("shuffled\t%s\n" % " ".join(w))
EOF2
npara=$(grep -c '^orig' para.tsv)
check "20 paragraphs of GPL-3 ($npara)" "$npara" -eq 20
"$ND" init rp --k 3 --docs 1e5 --min-resemblance 0.75 >/dev/null
"$ND" init fpp --fingerprint-only --k 3 --docs 1e5 >/dev/null
expect_exit 0 "$ND" batch rp --add --format tsv para.tsv
expect_lines 41
check "every paragraph is new" "$(printf '%s\n' "$out" | grep -c '^new	orig[0-9]*$')" -eq 20
check "every copy is a dup of its own paragraph at >= 0.75" \
    "$(printf '%s\n' "$out" | awk -F'\t' '$1 == "dup" && $2 ~ /^copy/ && substr($2, 5) == substr($3, 5) && $5 >= 0.75 && NF == 5' | wc -l)" -eq 20
batch_out=$out
expect_out_match '^new	shuffled$'
far=$(printf '%s\n' "$out" | awk -F'\t' '$1 == "dup" && $4 > 3 { print $2 }')
nfar=$(printf '%s\n' "$far" | grep -c copy)
check "most edited copies lie beyond k = 3 ($nfar of 20)" "$nfar" -ge 10
expect_exit 0 "$ND" batch fpp --add --format tsv para.tsv
for key in $far; do
    check "$key: new in a fingerprint-only store" -n "$(printf '%s\n' "$out" | grep -x "new	$key")"
done
# the fingerprint-only store's lines have no fifth column
check "no resemblance column without --min-resemblance" \
    "$(printf '%s\n' "$out" | awk -F'\t' 'NF > 4' | wc -l)" -eq 0
# the same decisions one by one (add) and by query --text
"$ND" init rpa --k 3 --docs 1e5 --min-resemblance 0.75 >/dev/null
expect_exit 0 "$ND" add rpa --format tsv para.tsv
check "add decides as batch --add" "$out" = "$batch_out"
grep '^copy07' para.tsv | cut -f2 > copy07.txt
expect_exit 0 "$ND" query rpa --text copy07.txt --json
expect_out_match '"key":"copy07","fp":"[0-9a-f]{16}","dist":0,"resemblance":1\.000'
expect_out_match '"key":"orig07","fp":"[0-9a-f]{16}","dist":[0-9]+,"resemblance":0\.([89][0-9]{2}|7[5-9][0-9])'
expect_exit 0 "$ND" verify rpa

# ---- dump of a resemblance store: the documents without sketches, a
# note on stderr; it imports into a fingerprint-only store, and a
# resemblance store refuses it with the one-line message
expect_exit 0 "$ND" dump rp
expect_lines 41
expect_err_match "^neardup: dump: 'rp' verifies by resemblance: the dump holds no sketches"
printf '%s\n' "$out" > rp.dump
"$ND" init fpd --fingerprint-only --k 3 --docs 1e5 >/dev/null
expect_exit 0 "$ND" import fpd --format dump rp.dump
run "$ND" dump fpd
check "dump -> import into a fingerprint-only store round-trips" "$out" = "$(cat rp.dump)"
check "a fingerprint-only store's dump has no note" -z "$err"
"$ND" init rpd --k 3 --docs 1e5 --resemblance >/dev/null
expect_exit 1 "$ND" import rpd --format dump rp.dump
expect_err_match '^neardup: rp\.dump:1: this store verifies by resemblance: records need text, not a fingerprint$'
run "$ND" stats rpd
expect_out_match '^documents	0$'
run "$ND" dump --help
expect_out_match 'sketches'

# ---- import into a resemblance store is one load, as into any store: a
# bad record keeps nothing of it; with --skip-bad all the good ones go in
python3 -c '
for i in range(4100): print("d%d\tdocument %d of the import about topic %d" % (i, i, i % 13))
print("bad-no-tab-here")' > big.tsv
"$ND" init rbig --k 3 --docs 1e5 --resemblance >/dev/null
expect_exit 1 "$ND" import rbig --format tsv big.tsv
expect_err_match 'the database holds 0 documents'
expect_exit 0 "$ND" verify rbig
expect_exit 0 "$ND" import rbig --format tsv --skip-bad --chunk 1000 big.tsv
run "$ND" stats rbig
expect_out_match '^documents	4100$'
expect_out_match '^sketches	4100$'
expect_out_match '^band_keys	49200$'
expect_exit 0 "$ND" verify rbig
echo "document 17 of the import about topic 4" > d17.txt
run "$ND" query rbig --text d17.txt
expect_out_match '	d17	'
run "$ND" import --help
expect_out_match 'stored with their sketches in the same one write'

# ---- sharded stores of resemblance shards
expect_exit 0 "$ND" shard init srs --shards 2 --k 3 --docs 1e5 --min-resemblance 0.75
expect_out_match 'min resemblance 0\.75$'
expect_exit 1 "$ND" shard init sbad --shards 2 --min-resemblance 2
expect_err_match 'min-resemblance must be a number in \(0, 1\]'
expect_exit 0 "$ND" shard import srs --format tsv para.tsv
expect_exit 1 "$ND" shard import srs one.fp
expect_err_match '^neardup: one\.fp:1: this store verifies by resemblance: records need text, not a fingerprint$'
run "$ND" shard info srs
expect_out_match '^min_resemblance	0\.75$'
expect_out_match '^total	41$'
run "$ND" shard info srs --json
expect_out_match '"min_resemblance":0\.75,"documents":\['
for s in 0 1; do expect_exit 0 "$ND" verify srs/shard-00$s; done
# split keeps the threshold and copies the sketches
expect_exit 0 "$ND" shard split rp ssp --shards 3
expect_out_match 'over 3 shards \(k=3, 4 tables, min resemblance 0\.75\)'
run "$ND" shard info ssp
expect_out_match '^min_resemblance	0\.75$'
expect_out_match '^total	41$'
sk=0
for s in 0 1 2; do
    expect_exit 0 "$ND" verify ssp/shard-00$s
    n=$("$ND" stats ssp/shard-00$s | awk -F'\t' '$1 == "sketches" { print $2 }')
    sk=$((sk + n))
done
check "split copied every sketch ($sk)" "$sk" -eq 41
expect_exit 1 "$ND" shard split rp ssx --shards 2 --resemblance
expect_err_match 'take k and tables from DB \(and its resemblance\)'
expect_exit 1 "$ND" shard split rp ssx --shards 2 --fingerprint-only
expect_err_match "unrecognized option '--fingerprint-only': the shards take k and tables from DB"
# shard init makes the stores init makes: resemblance shards (R = 0.85)
# without a kind, fingerprint-only ones with --fingerprint-only (which
# prints no resemblance line), and refuses both kinds at once.
expect_exit 0 "$ND" shard init sdf --shards 2 --docs 1e5
expect_out_match ', min resemblance 0\.85$'
run "$ND" shard info sdf
expect_out_match '^min_resemblance	0\.85$'
run "$ND" shard info sdf --json
expect_out_match '"min_resemblance":0\.85,'
for s in 0 1; do
    run "$ND" stats sdf/shard-00$s --json
    expect_out_match '"min_resemblance":0\.85,'
done
expect_exit 1 "$ND" shard import sdf one.fp
expect_err_match 'records need text, not a fingerprint'
expect_exit 0 "$ND" shard init sdfj --shards 2 --docs 1e5 --json
expect_out_match '"min_resemblance":0\.85\}$'
expect_exit 0 "$ND" shard init sfp --shards 2 --docs 1e5 --fingerprint-only
check "a fingerprint-only shard init prints no threshold [$out]" -z "$(printf '%s\n' "$out" | grep 'min resemblance')"
run "$ND" shard info sfp
check "no min_resemblance line in a fingerprint-only store" -z "$(printf '%s\n' "$out" | grep min_resemblance)"
run "$ND" stats sfp/shard-000 --json
check "a fingerprint-only shard has no threshold" -z "$(printf '%s\n' "$out" | grep min_resemblance)"
expect_exit 0 "$ND" shard import sfp one.fp
expect_exit 1 "$ND" shard init sboth --shards 2 --fingerprint-only --resemblance
expect_err_match "^neardup: shard init: --fingerprint-only and --resemblance exclude each other; see 'neardup shard init --help'$"
expect_exit 1 "$ND" shard init sboth --shards 2 --min-resemblance 0.9 --fingerprint-only
expect_err_match "^neardup: shard init: --fingerprint-only and --min-resemblance exclude each other; "
check "a refused shard init creates nothing" ! -e sboth
run "$ND" shard --help
expect_out_match '^  --fingerprint-only  \(init\) fingerprint-only shards'

# ---- an interrupted import into a resemblance store keeps nothing of it
"$ND" init rsi --k 3 --docs 1e5 --resemblance >/dev/null
mkfifo in.fifo
set -m # a background job of a script otherwise ignores SIGINT
"$ND" import rsi --format tsv in.fifo > imp.out 2> imp.err &
pid=$!
exec 3>in.fifo
head -4100 big.tsv >&3
sleep 1 # read and signed; the input stays open, so no commit yet
kill -INT "$pid"
wait "$pid"
code=$?
set +m
exec 3>&-
check "interrupted import: exit status 130 ($code)" "$code" -eq 130
check "it says so: [$(cat imp.err)]" "$(cat imp.err)" = \
    "neardup: import: interrupted; nothing imported"
run "$ND" stats rsi
expect_out_match '^documents	0$'
expect_out_match '^sketches	0$'
expect_exit 0 "$ND" verify rsi

# sharded stores of resemblance shards: texts signed, sketches in each shard
expect_exit 0 "$ND" shard init sh --shards 3 --docs 1e5 --resemblance
expect_out_match 'min resemblance 0\.85$'
expect_exit 0 "$ND" shard import sh --format tsv docs.tsv
expect_exit 1 "$ND" shard import sh one.fp
expect_err_match 'records need text, not a fingerprint'
sketches=0
for s in sh/shard-*; do
    run "$ND" stats "$s"
    expect_out_match '^min_resemblance	0\.85$'
    sketches=$((sketches + $(printf '%s\n' "$out" | awk -F'\t' '$1 == "sketches" { print $2 }')))
    expect_exit 0 "$ND" verify "$s"
done
check "every imported document has its sketch in its shard ($sketches)" "$sketches" -eq 4
