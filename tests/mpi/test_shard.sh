# test_shard.sh — `neardup shard`: manifest format and key rule (golden
# FNV-1a-64 values), init, import, split (through a loader per shard:
# placement, last wins, spilled chunks, a bad record imports nothing),
# info, which, and the refusals.
# Needs no MPI. Sourced by tests/cli/run.sh with $NEARDUP.
GEN=$(dirname "$src")/gen.awk
total() { "$ND" shard info "$1" | awk -F'\t' '$1 == "total" { print $2 }'; }

expect_exit 1 "$ND" shard
expect_exit 0 "$ND" shard --help
expect_out_match 'FNV-1a-64'
expect_exit 1 "$ND" shard frobnicate x
expect_err_match 'unknown subcommand'
expect_exit 1 "$ND" shard init s
expect_err_match 'shards S is required'
expect_exit 1 "$ND" shard init s --shards 0
expect_exit 1 "$ND" shard init s --shards 4097

expect_exit 0 "$ND" shard init s --shards 7 --fingerprint-only --k 3 --docs 7000
expect_out_match '^created s: 7 shards, k=3'
expect_exit 0 cat s/NEARDUP-SHARDS
expect_out_eq "$(printf 'neardup-shards 1\nshards 7\nassign fnv1a64-mod\nk 3\ntables %s\ndocs 7000\nfingerprint %s\nformat 5\nfp-version 2' \
    "$(awk '$1 == "tables" { print $2 }' s/NEARDUP-SHARDS)" \
    "$(awk '$1 == "fingerprint" { print $2 }' s/NEARDUP-SHARDS)")"
check "seven shard databases" -d s/shard-006 -a ! -e s/shard-007
expect_exit 1 "$ND" shard init s --shards 2
expect_err_match "cannot create 's'"
# The rule is part of the format: FNV-1a-64 golden values mod 7
# ("a" -> af63dc4c8601ec8c, "http://example.com/" -> 32522fc5fdfe06f1,
# "d1" -> 08917f07b53bf526).
expect_exit 0 "$ND" shard which s a http://example.com/ d1
expect_out_eq "$(printf 'a\t5\ts/shard-005\nhttp://example.com/\t6\ts/shard-006\nd1\t5\ts/shard-005')"

# import places each document in the shard of its key.
awk -v seed=5 -v n=2000 -v out=stored -f "$GEN" >stored.fp
expect_exit 0 "$ND" shard import s stored.fp --chunk 300
expect_out_match 'imported 2000 documents'
check "import keeps every document" "$(total s)" = 2000
expect_exit 0 "$ND" shard which s d17
sh=$(printf '%s' "$out" | cut -f3)
expect_exit 0 "$ND" get "$sh" d17
expect_out_match "^d17	$(awk '$2 == "d17" { print $1 }' stored.fp)"
for i in 0 1 2 3 4 5 6; do expect_exit 0 "$ND" verify "s/shard-00$i"; done
printf 'k1\tthe same text\nk2\tthe same text\n' >t.tsv
expect_exit 0 "$ND" shard import s --format tsv t.tsv
expect_exit 0 "$ND" fingerprint --format tsv t.tsv
fp=$(printf '%s\n' "$out" | head -1 | cut -f1)
expect_exit 0 "$ND" shard which s k2
expect_exit 0 "$ND" get "$(printf '%s' "$out" | cut -f3)" k2
expect_out_match "$fp"
printf '0123456789abcdef\tok\nzz\tbad\n' >bad.fp
expect_exit 1 "$ND" shard import s bad.fp
expect_err_match 'bad.fp:2'

# split a database: the same documents land in the same shards as import.
expect_exit 0 "$ND" init db --fingerprint-only --k 3 --docs 2000
expect_exit 0 "$ND" import db stored.fp
expect_exit 0 "$ND" shard split db sp --shards 7 --chunk 100
expect_out_match '2000 documents over 7 shards'
expect_exit 0 "$ND" shard init si --shards 7 --fingerprint-only --k 3 --docs 2000
expect_exit 0 "$ND" shard import si stored.fp
expect_exit 0 "$ND" shard info si
want=$out
expect_exit 0 "$ND" shard info sp
check "split and import place alike" "$(printf '%s\n' "$out" | grep -E '^(shard|total)')" = \
    "$(printf '%s\n' "$want" | grep -E '^(shard|total)')"
expect_exit 0 "$ND" shard info sp --json
expect_out_match '"shards":7,.*"total":2000'
expect_exit 1 "$ND" shard split db sp2 --shards 2 --k 4
expect_err_match 'take k and tables'

# The load (one nd_loader per shard, written once): every document ends in
# the shard of its key with the fingerprint of its last line, whether each
# shard's documents spill in several chunks (--chunk 300, about 1100 a
# shard) or fit in one; split gives the same shards.
# lastwins FILE: KEY<TAB>HEX of the last line of each key, sorted.
lastwins() { awk -F'\t' '{ fp[$2] = $1 } END { for (k in fp) print k "\t" fp[k] }' "$1" | LC_ALL=C sort; }
# contents DIR FILE: KEY<TAB>HEX of every key of FILE, read from the shard
# `shard which` names (sorted); which.tsv keeps the placement.
contents() {
    "$ND" shard which "$1" $(cut -f2 "$2" | sort -u) >which.tsv
    for p in $(cut -f3 which.tsv | sort -u); do
        "$ND" get "$p" $(awk -F'\t' -v p="$p" '$3 == p { print $1 }' which.tsv) | cut -f1,2
    done | LC_ALL=C sort
}
# counts DIR: the per-shard document counts of `shard info --json`.
counts() { "$ND" shard info "$1" --json | sed 's/.*"documents":\[\([0-9,]*\)\].*/\1/'; }
# placed S: the per-shard counts which.tsv implies.
placed() { awk -F'\t' -v S="$1" '{ n[$2]++ } END { for (s = 0; s < S; s++) printf "%s%d", s ? "," : "", n[s] + 0 }' which.tsv; }
awk -v seed=9 -v n=2000 -v out=stored -f "$GEN" >big.fp
# 200 keys again, with other fingerprints, after all the others: in another
# chunk than their first line
awk -v seed=12 -v n=200 -v out=stored -f "$GEN" | awk -F'\t' '{ print $1 "\td" (NR * 7) }' >>big.fp
lastwins big.fp >want.tsv
check "2000 distinct keys, 200 of them twice" "$(grep -c . want.tsv)" = 2000
expect_exit 0 "$ND" shard init L --shards 2 --fingerprint-only --k 3 --docs 4000
expect_exit 0 "$ND" shard import L big.fp --chunk 300
expect_out_match 'imported 2200 documents into L \(2 shards\)'
check "chunked import: every document in its shard, the last line winning" \
    "$(contents L big.fp)" = "$(cat want.tsv)"
cl=$(counts L)
check "chunked import: shard counts" "$cl" = "$(placed 2)"
for i in 0 1; do expect_exit 0 "$ND" verify "L/shard-00$i"; done
check "no temporary directory left" -z "$(ls -d L/shard-*/nd-load-* 2>/dev/null)"
expect_exit 0 "$ND" shard init D --shards 2 --fingerprint-only --k 3 --docs 4000
expect_exit 0 "$ND" shard import D big.fp
check "default chunk: same contents as --chunk 300" "$(contents D big.fp)" = "$(cat want.tsv)"
check "default chunk: same counts" "$(counts D)" = "$cl"
# d7's last fingerprint finds it; its first one no longer does
new7=$(awk -F'\t' '$1 == "d7" { print $2 }' want.tsv)
old7=$(awk -F'\t' '$2 == "d7" { print $1; exit }' big.fp)
sh7=$(awk -F'\t' '$1 == "d7" { print $3 }' which.tsv)
check "d7 has a new fingerprint" "$new7" != "$old7"
expect_exit 0 "$ND" query "$sh7" --k 0 "$new7"
expect_out_match "	d7	$new7	0$"
expect_exit 0 "$ND" query "$sh7" --k 0 "$old7"
check "d7 left its first fingerprint" -z "$(printf '%s\n' "$out" | grep '	d7	')"
expect_exit 0 "$ND" init bigdb --fingerprint-only --k 3 --docs 4000
expect_exit 0 "$ND" import bigdb big.fp
expect_exit 0 "$ND" shard split bigdb SP --shards 2 --chunk 300
expect_out_match '2000 documents over 2 shards'
check "chunked split: every document in its shard" "$(contents SP big.fp)" = "$(cat want.tsv)"
check "chunked split: shard counts" "$(counts SP)" = "$cl"
for i in 0 1; do expect_exit 0 "$ND" verify "SP/shard-00$i"; done
check "split: no temporary directory left" -z "$(ls -d SP/shard-*/nd-load-* 2>/dev/null)"

# A bad record after several chunks spilled in every shard imports nothing
# into any shard, and leaves no temporary files.
awk 'BEGIN { srand(3); for (i = 0; i < 1500; i++) printf "%04x%04x%04x%04x\tn%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' >bad2.fp
printf 'zz\tbad\n' >>bad2.fp
awk 'BEGIN { srand(4); for (i = 1500; i < 1600; i++) printf "%04x%04x%04x%04x\tn%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' >>bad2.fp
expect_exit 1 "$ND" shard import L bad2.fp --chunk 300
expect_err_match 'bad2.fp:1501'
check "a bad record: shard counts unchanged" "$(counts L)" = "$cl"
check "a bad record: no temporary directory left" -z "$(ls -d L/shard-*/nd-load-* 2>/dev/null)"
expect_exit 0 "$ND" shard which L n0
sh_n0=$(printf '%s' "$out" | cut -f3)
expect_exit 1 "$ND" get "$sh_n0" n0
expect_out_eq "$(printf 'missing\tn0')"
# With --skip-bad the same input loads its 1600 good records, counts the
# bad one, and n0 has the fingerprint of its line
expect_exit 0 "$ND" shard import L bad2.fp --chunk 300 --skip-bad
expect_out_match 'imported 1600 documents into L \(2 shards\), 1 bad'
expect_err_match 'bad2.fp:1501'
check "--skip-bad: 1600 more documents" \
    "$(counts L | awk -F, '{ print $1 + $2 }')" = "$(( $(awk -F, '{ print $1 + $2 }' <<<"$cl") + 1600 ))"
expect_exit 0 "$ND" get "$sh_n0" n0
check "--skip-bad: n0's fingerprint" "$(printf '%s' "$out" | cut -f2)" = "$(awk -F'\t' '$2 == "n0" { print $1 }' bad2.fp)"
for i in 0 1; do expect_exit 0 "$ND" verify "L/shard-00$i"; done

# A shard whose commit fails (its spilled chunks removed while the import
# waits to open its second input, a FIFO): the shards before it are
# written, it and the later ones are not, and the error says which.
# Shard 1's 200 documents come last, so its second spill is the last
# thing done before the FIFO.
awk 'BEGIN { srand(7); for (i = 0; i < 1200; i++) printf "%04x%04x%04x%04x\tf%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' >f.fp
expect_exit 0 "$ND" shard init F --shards 3 --fingerprint-only --k 3 --docs 1000
"$ND" shard which F $(cut -f2 f.fp) >fw.tsv
for sh_n in 0:150 2:50 1:200; do
    awk -F'\t' -v s="${sh_n%:*}" 'NR == FNR { if ($2 == s) in_s[$1] = 1; next } $2 in in_s' fw.tsv f.fp |
        head -n "${sh_n#*:}"
done >part.fp
mkfifo in.fifo
"$ND" shard import F part.fp in.fifo --chunk 100 >fail.out 2>fail.err &
pid=$!
for i in $(seq 300); do [ -e F/shard-001/nd-load-*/c000001.rev ] 2>/dev/null && break; sleep 0.1; done
sleep 0.3
check "shard 1 spilled two chunks" -n "$(ls F/shard-001/nd-load-*/c000001.rev 2>/dev/null)"
rm -f F/shard-001/nd-load-*/c0*
timeout 20 sh -c ': >in.fifo'
wait "$pid"
check "a failed commit exits 2" "$?" = 2
check "the error names the shard" -n "$(grep "writing shard 1 'F/shard-001'" fail.err)"
check "the error says which shards were written" \
    -n "$(grep -x 'neardup: shard import: written: shard 0; not written: shards 1..2' fail.err)"
check "a failed commit: shard 0 written, shards 1 and 2 not" "$(counts F)" = "150,0,0"
for i in 0 1 2; do expect_exit 0 "$ND" verify "F/shard-00$i"; done
check "a failed commit: no temporary directory left" -z "$(ls -d F/shard-*/nd-load-* 2>/dev/null)"

# Refusals: no manifest, a newer manifest, a damaged one.
mkdir -p notastore
expect_exit 1 "$ND" shard info notastore
expect_err_match 'not a sharded store'
sed -i 's/^neardup-shards 1$/neardup-shards 2/' si/NEARDUP-SHARDS
expect_exit 1 "$ND" shard info si
expect_err_match 'manifest version 2, this build reads 1'
sed -i 's/^neardup-shards 2$/neardup-shards 1/; s/^assign .*/assign xxh3-mod/' si/NEARDUP-SHARDS
expect_exit 1 "$ND" shard which si a
expect_err_match "NEARDUP-SHARDS:3: assign: unknown rule 'xxh3-mod'"
sed -i '$d' sp/NEARDUP-SHARDS
expect_exit 1 "$ND" shard info sp
expect_err_match "ends early: missing 'fp-version'"
