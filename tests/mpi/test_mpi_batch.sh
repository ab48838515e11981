# test_mpi_batch.sh — neardup-mpi batch over a sharded store gives exactly
# the single-machine `neardup batch` answers (1, 3 and 4 ranks over 5
# shards, so ranks own unequal shares), stores the same documents with
# --add, and fails cleanly (naming the shard, storing nothing) when a shard
# is missing. Sourced by tests/cli/run.sh with $NEARDUP, $NEARDUP_MPI, $MPIRUN.
NDM=${NEARDUP_MPI:?set NEARDUP_MPI}
MPIRUN=${MPIRUN:-mpirun}
GEN=$(dirname "$src")/gen.awk
mpi() { local np=$1; shift; "$MPIRUN" --oversubscribe -np "$np" "$NDM" "$@"; }
# Under ASan, leaks are checked in the runs marked so (see mpi/meson.build).
leakcheck() { ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 "$@"; }
same() { # NAME FILE: $out equals the file's text
    if [ "$out" == "$(cat "$2")" ]; then _pass; else
        _fail "$1: differs from $2: $(diff <(printf '%s\n' "$out") "$2" | head -5)"; fi
}
total() { "$ND" shard info "$1" | awk -F'\t' '$1 == "total" { print $2 }'; }

awk -v seed=11 -v n=3000 -v out=stored -f "$GEN" >stored.fp
awk -v seed=11 -v n=3000 -v q=800 -v out=batch -f "$GEN" >batch.fp
awk -v seed=11 -v n=3000 -v q=300 -v out=batch -f "$GEN" | sed 's/\tq/\tr/' >batch2.fp
expect_exit 0 "$ND" init db --fingerprint-only --k 3 --docs 10000
expect_exit 0 "$ND" import db stored.fp
expect_exit 0 "$ND" shard split db st --shards 5
expect_out_match 'over 5 shards'
check "split keeps every document" "$(total st)" = 3000
expect_exit 0 "$ND" verify st/shard-003
expect_exit 1 "$ND" shard split db st --shards 2
expect_err_match 'cannot create'

# The reference: one database, one machine.
"$ND" batch db batch.fp >ref.txt 2>/dev/null
check "reference has a line per document" "$(wc -l <ref.txt)" -eq 800
check "reference has dups and news" "$(grep -c '^dup' ref.txt)" -gt 100
for np in 1 3 4; do
    expect_exit 0 mpi "$np" batch st batch.fp
    same "batch -np $np" ref.txt
done
# Without --format each input's format is inferred, as by `neardup batch`:
# the same fingerprints as JSONL with another key member, and as zstd.
awk -F'\t' '{ printf "{\"url\":\"%s\",\"fp\":\"%s\"}\n", $2, $1 }' batch.fp >batch.data
expect_exit 0 mpi 3 batch st --id-field url batch.data
same "batch JSONL inferred, --id-field url" ref.txt
zstd -q -c batch.fp >batch.fp.zst
expect_exit 0 mpi 2 batch st batch.fp.zst
same "batch .zst" ref.txt
expect_exit 1 mpi 2 batch st --format fp batch.data
expect_err_match 'batch.data:1: .*this looks like JSONL: use --format jsonl'
expect_exit 1 mpi 2 batch st --format tsv --id-field url batch.fp
expect_err_match 'for JSONL input'
"$ND" batch db batch.fp --json >ref.json 2>/dev/null
expect_exit 0 mpi 3 batch st batch.fp --json
same "batch --json" ref.json
# Beyond the plan's k (per-document probes in nd_db_batch, quadratic pairs).
"$ND" batch db batch.fp --k 5 >ref5.txt 2>/dev/null
expect_exit 0 mpi 4 batch st batch.fp --k 5
same "batch --k 5" ref5.txt

# --add stores what the single machine stores: a second batch sees it.
cp -r db dbA && cp -r st stA
"$ND" batch dbA batch.fp --add >refA.txt 2>/dev/null
expect_exit 0 leakcheck mpi 3 batch stA batch.fp --add
same "batch --add" refA.txt
check "same document count after --add" "$(total stA)" = \
    "$("$ND" stats dbA | awk '$1 == "documents" || $1 == "documents:" { print $2; exit }')"
"$ND" batch dbA batch2.fp >refA2.txt 2>/dev/null
expect_exit 0 mpi 4 batch stA batch2.fp
same "batch after --add" refA2.txt
# Stored documents seen again: dup of themselves, last-seen time refreshed.
head -5 stored.fp >again.fp
"$ND" batch dbA again.fp --add --time 12345 >refR.txt 2>/dev/null
expect_exit 0 mpi 4 batch stA again.fp --add --time 12345
same "batch --add of stored documents" refR.txt
for key in $(cut -f2 again.fp); do
    sh=$("$ND" shard which stA "$key" | cut -f3)
    check "refreshed $key as the single machine" "$("$ND" get "$sh" "$key")" = "$("$ND" get dbA "$key")"
done
check "a time was refreshed" "$(grep -c '	12345$' <("$ND" get dbA $(cut -f2 again.fp)))" -gt 0
for s in 0 1 2 3 4; do expect_exit 0 "$ND" verify "stA/shard-00$s"; done
# Chunks: each checked and stored before the next is read.
"$ND" batch db batch.fp --chunk 150 >refC.txt 2>/dev/null
expect_exit 0 mpi 3 batch st batch.fp --chunk 150
same "batch --chunk" refC.txt
cp -r db dbC && cp -r st stC2
"$ND" batch dbC batch.fp --chunk 150 --add >refCA.txt 2>/dev/null
expect_exit 0 leakcheck mpi 4 batch stC2 batch.fp --chunk 150 --add
same "batch --chunk --add" refCA.txt
expect_err_match '6 chunks'
check "chunks store as one machine" "$(total stC2)" = \
    "$("$ND" stats dbC | awk '$1 == "documents" || $1 == "documents:" { print $2; exit }')"
# A fresh store from `shard init` behaves as a fresh database.
expect_exit 0 "$ND" shard init sI --shards 3 --fingerprint-only --k 3 --docs 10000
expect_exit 0 "$ND" init dbI --fingerprint-only --k 3 --docs 10000
"$ND" batch dbI batch.fp --add >refI.txt 2>/dev/null
expect_exit 0 mpi 4 batch sI batch.fp --add
same "batch --add on shard init" refI.txt

# Failures: a missing shard names itself and stores nothing.
cp -r st stB
before=$(total stB)
mv stB/shard-002 shard-002.away
expect_exit 2 leakcheck mpi 3 batch stB batch.fp --add
expect_err_match "shard 2 .*stB/shard-002"
expect_err_match 'nothing stored'
check "failed run printed no results" -z "$out"
mv shard-002.away stB/shard-002
check "nothing stored by the failed run" "$(total stB)" = "$before"
# A rank that dies while checking: the run fails, naming the rank and its
# shards, and no rank stores anything (the adds wait for every rank).
cp -r st stD
export NEARDUP_MPI_TEST_CRASH=1:checking
run mpi 3 batch stD batch.fp --add
unset NEARDUP_MPI_TEST_CRASH
check "a dead rank fails the run (exit $code)" "$code" -ne 0
expect_err_match 'rank 1 \(shards of stD: 1 4\) died on signal 6 while checking; nothing was stored'
check "a dead rank's run printed no results" -z "$out"
check "nothing stored when a rank died" "$(total stD)" = 3000
# A shard that is not the manifest's (other fingerprint features).
cp -r st stE && rm -rf stE/shard-001 && "$ND" init stE/shard-001 --fingerprint-only --k 3 --features words >/dev/null
expect_exit 2 mpi 3 batch stE batch.fp
expect_err_match "shard 1 'stE/shard-001' does not match the manifest"
expect_exit 1 mpi 3 batch db batch.fp
expect_err_match 'not a sharded store'
printf '0123456789abcdef\tok\nnot-hex\tbad\n' >bad.fp
expect_exit 1 mpi 3 batch st bad.fp --add
expect_err_match 'bad.fp:2'
check "bad input stored nothing" "$(total st)" = 3000
# Several inputs form one batch; --skip-bad as the single machine.
head -400 batch.fp >b1.fp && tail -n +401 batch.fp >b2.fp
expect_exit 0 mpi 3 batch st b1.fp b2.fp
same "two inputs, one batch" ref.txt
cat bad.fp batch.fp >badbatch.fp
"$ND" batch db badbatch.fp --skip-bad >refbad.txt 2>/dev/null
expect_exit 0 mpi 4 batch st badbatch.fp --skip-bad
same "batch --skip-bad" refbad.txt
expect_err_match 'badbatch.fp:2'
echo "3 tables forever" >st/NEARDUP-SHARDS.bad && cp -r st stC && cp stC/NEARDUP-SHARDS.bad stC/NEARDUP-SHARDS
expect_exit 1 mpi 3 batch stC batch.fp
expect_err_match 'NEARDUP-SHARDS:1'
expect_exit 1 mpi 1 batch st
expect_err_match 'usage'
