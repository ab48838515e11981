# test_shard.sh — `neardup shard`: manifest format and key rule (golden
# FNV-1a-64 values), init, import, split, info, which, and the refusals.
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

expect_exit 0 "$ND" shard init s --shards 7 --k 3 --docs 7000
expect_out_match '^created s: 7 shards, k=3'
expect_exit 0 cat s/NEARDUP-SHARDS
expect_out_eq "$(printf 'neardup-shards 1\nshards 7\nassign fnv1a64-mod\nk 3\ntables %s\ndocs 7000\nfingerprint %s\nformat 2\nfp-version 1' \
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
expect_exit 0 "$ND" init db --k 3 --docs 2000
expect_exit 0 "$ND" import db stored.fp
expect_exit 0 "$ND" shard split db sp --shards 7 --chunk 100
expect_out_match '2000 documents over 7 shards'
expect_exit 0 "$ND" shard init si --shards 7 --k 3 --docs 2000
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
