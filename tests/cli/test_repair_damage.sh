# test_repair_damage.sh — `repair` of a damaged store drops only what the
# damage took, and says exactly what (issue 44, point 2).
#
# For stores written by import (one generation: its files ingested whole),
# add (files RocksDB wrote) and a resemblance import (import --steps and
# the other write paths: the slow damage matrix), one
# byte is flipped in each table file in turn: inside its data blocks (at
# 40% of them), then in its bloom filter or its block index (every other
# file; all three in the slow damage matrix). Then
# every command fails with `corrupt data` or answers as before; `repair`
# exits 0 (or 2 when the store's configuration is lost: "restore a
# backup"), and then: verify passes, every document kept is exactly as
# before (key, fingerprint, score, time), and the dropped count equals the
# documents missing. A flipped data block loses that block's documents
# only: never more than a third of the store (the documents of an
# imported store lie in one file of 12 blocks; RocksDB's repair alone lost
# the whole file). A flipped filter loses nothing. A flipped index loses
# the file (the limit: the blocks cannot be found without it), and the
# count says so exactly.

. "$(dirname "$src")/texts_tsv.sh"
. "$(dirname "$src")/damage_lib.sh"
texts_tsv all.tsv

# a fingerprint-only store unless the kind is given (--resemblance)
fresh() {
    local kind=(--fingerprint-only)
    [ $# -gt 1 ] && kind=("${@:2}")
    "$ND" init "$1" --k 3 --docs 1e4 "${kind[@]}" >/dev/null
}

fresh imp && "$ND" import imp --format tsv all.tsv >/dev/null 2>&1
flip_store "import" imp
# (fingerprints: of the texts, add keeps only the 150 not near another)
python3 -c "
import random
r = random.Random(7)
for i in range(2000): print('%016x\tk%d' % (r.getrandbits(64), i))" > fps.txt
fresh add && "$ND" add add fps.txt >/dev/null 2>&1
flip_store "add" add
fresh rimp --resemblance && "$ND" import rimp --format tsv all.tsv >/dev/null 2>&1
flip_store "resemblance import" rimp
# A deletion's file damaged must not bring back what it deleted (issue 44:
# an expired store's repair kept 294 of its 150 documents, the expired
# ones back from older files): an import, its older half expired, each
# file flipped in a data block.
n_all=$(wc -l < all.tsv)
fresh exp && "$ND" import exp --format tsv --time 1000000000 <(head -n $((n_all / 2)) all.tsv) >/dev/null 2>&1
"$ND" import exp --format tsv --time 1700000000 <(tail -n +$((n_all / 2 + 1)) all.tsv) >/dev/null 2>&1
run "$ND" expire exp --older-than 30d --now 1700000000
expect_out_match "^expired	$((n_all / 2))\$"
FLIP_PLACES=0.4 FLIP_ANY_HIT=0 flip_store "expired import" exp
# The meta family's newest file lost (its index flipped) after an expire
# brings back an older counters record, of the documents before it: not
# to be reported as dropped (the damage matrix found "dropped 610, missing
# 0" on a store of dedupe --db, an import and an expire). Each file of
# the meta family has its index flipped: the dropped count equals the
# documents missing. (The other families' files of such a store, 42 of
# 45, take the slow damage matrix: the stores above flip theirs.)
"$ND" dedupe --db ded --k 3 --format tsv <(tail -n +$((n_all / 2 + 1)) all.tsv) >/dev/null 2>&1
"$ND" import ded --format tsv --time 1000000000 <(head -n $((n_all / 2)) all.tsv) >/dev/null 2>&1
run "$ND" expire ded --older-than 30d --now 1700000000
expect_out_match "^expired	$((n_all / 2))\$"
n_meta=$(sst_family ded/*.sst | grep -cx meta)
check "expired dedupe --db store: $n_meta files of the meta family, want 2 or more" "$n_meta" -ge 2
FLIP_PLACES=index FLIP_FAMILY=meta FLIP_ANY_HIT=0 flip_store "expired dedupe --db store" ded
