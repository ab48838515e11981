# test_mpi_similar.sh — neardup-mpi batch over a store of resemblance
# shards gives exactly nd_shards_batch's answers in one process
# (similar_ref: every earlier document a candidate, the most resemblant
# match kept) on 1, 2 and 3 ranks over 3 shards, with --add (every
# document stored, also in chunks), and refuses fingerprints without text.
# Sourced by tests/cli/run.sh with $NEARDUP, $NEARDUP_MPI, $MPIRUN and
# $SIMILAR_REF.
NDM=${NEARDUP_MPI:?set NEARDUP_MPI}
REF=${SIMILAR_REF:?set SIMILAR_REF}
MPIRUN=${MPIRUN:-mpirun}
mpi() { local np=$1; shift; "$MPIRUN" --oversubscribe -np "$np" "$NDM" "$@"; }
same() { # NAME FILE: $out equals the file's text
    if [ "$out" == "$(cat "$2")" ]; then _pass; else
        _fail "$1: differs from $2: $(diff <(printf '%s\n' "$out") "$2" | head -5)"; fi
}
total() { "$ND" shard info "$1" | awk -F'\t' '$1 == "total" { print $2 }'; }

# Texts: 60 originals of 30-200 words, and documents that copy one with
# 0, 1, 2, 5 or 40 words replaced (JSONL, keys PREFIX<i>).
gen() { # SEED N PREFIX
    awk -v seed="$1" -v n="$2" -v p="$3" 'BEGIN {
        srand(7)
        for (w = 0; w < 1500; w++) { s = ""; l = 3 + int(rand() * 5)
            for (c = 0; c < l; c++) s = s substr("abcdefghij", 1 + int(rand() * 10), 1)
            V[w] = s }
        for (o = 0; o < 60; o++) { L[o] = 30 + int(rand() * 170)
            for (i = 0; i < L[o]; i++) T[o, i] = V[int(rand() * 1500)] }
        srand(seed)
        split("0 0 1 2 5 40", E, " ")
        for (d = 0; d < n; d++) { o = int(rand() * 60); e = E[1 + int(rand() * 6)]
            split("", R); for (j = 0; j < e; j++) R[int(rand() * L[o])] = V[int(rand() * 1500)]
            s = ""; for (i = 0; i < L[o]; i++) s = s (i ? " " : "") ((i in R) ? R[i] : T[o, i])
            printf "{\"id\":\"%s%d\",\"text\":\"%s\"}\n", p, d, s } }'
}
gen 1 200 s >stored.jsonl
gen 2 250 b >batch.jsonl
expect_exit 0 "$REF" create st 3 0.85 stored.jsonl
expect_exit 0 "$ND" verify st/shard-001
expect_out_match '^ok'
check "the manifest records the threshold" "$(grep -c '^resemblance sketch1;r=0.84999999999999998$' \
    st/NEARDUP-SHARDS)" -eq 1
"$REF" batch st batch.jsonl >ref.txt
check "reference has a line per document" "$(wc -l <ref.txt)" -eq 250
check "reference has dups and news" "$(grep -c '^dup' ref.txt)" -gt 50
for np in 1 2 3; do
    expect_exit 0 mpi "$np" batch st --format jsonl batch.jsonl
    same "batch -np $np" ref.txt
done
# --add stores every document (a resemblance store indexes them all).
cp -r st stA && cp -r st stR
"$REF" batch stR batch.jsonl --add >refA.txt
same "--add answers as without" ref.txt
expect_exit 0 mpi 3 batch stA --format jsonl --add batch.jsonl
same "batch --add" refA.txt
check "every document stored" "$(total stA)" -eq 450
for s in 0 1 2; do expect_exit 0 "$ND" verify "stA/shard-00$s"; done
# In chunks with --add, earlier chunks are stored candidates: same answers.
cp -r st stC
expect_exit 0 mpi 2 batch stC --format jsonl --add --chunk 37 batch.jsonl
same "batch --chunk --add" refA.txt
check "chunks store every document" "$(total stC)" -eq 450
# Fingerprints alone cannot be checked by resemblance.
printf '0123456789abcdef\tk1\n' >f.fp
expect_exit 1 mpi 2 batch st f.fp
expect_err_match 'verifies by resemblance .*needs texts'
check "nothing stored by the refused run" "$(total st)" -eq 200
