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
expect_exit 0 "$ND" init fp --k 3 --docs 1e5
expect_exit 1 "$ND" init bad --min-resemblance 0
expect_err_match 'min-resemblance must be a number in \(0, 1\]'
expect_exit 1 "$ND" init bad --min-resemblance 1.5
check "a refused init creates nothing" ! -e bad

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
