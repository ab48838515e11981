# test_mpi_dedupe.sh — neardup-mpi dedupe prints the pairs of `neardup
# dedupe --out pairs` on 1, 3 and 4 ranks (texts with sketch confirmation,
# containment, and fingerprints). Sourced by tests/cli/run.sh.
NDM=${NEARDUP_MPI:?set NEARDUP_MPI}
MPIRUN=${MPIRUN:-mpirun}
GEN=$(dirname "$src")/gen.awk
mpi() { local np=$1; shift; "$MPIRUN" --oversubscribe -np "$np" "$NDM" "$@"; }
leakcheck() { ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 "$@"; }
same() {
    if [ "$out" == "$(cat "$2")" ]; then _pass; else
        _fail "$1: differs from $2: $(diff <(printf '%s\n' "$out") "$2" | head -5)"; fi
}
# 120 texts of 100 words; every third one is a copy of an earlier text
# with one word changed.
awk 'BEGIN { srand(5)
    for (i = 0; i < 120; i++) {
        if (i % 3 == 2) { t = txt[int(rand() * i)]; n = split(t, w, " ");
            w[1 + int(rand() * n)] = "x" int(rand() * 1000)
            t = w[1]; for (m = 2; m <= n; m++) t = t " " w[m] }
        else { t = ""; for (m = 0; m < 100; m++) t = t (m ? " " : "") "w" int(rand() * 300) }
        txt[i] = t; printf "doc%d\t%s\n", i, t } }' >corpus.tsv
"$ND" dedupe --format tsv --out pairs corpus.tsv >ref.txt 2>/dev/null
check "reference found pairs" "$(wc -l <ref.txt)" -gt 10
for np in 1 3 4; do
    expect_exit 0 mpi "$np" dedupe --format tsv corpus.tsv
    same "dedupe texts -np $np" ref.txt
done
# Without --format the format is inferred as by `neardup dedupe`; JSONL
# with other member names; zstd.
awk -F'\t' '{ printf "{\"url\":\"%s\",\"content\":\"%s\"}\n", $1, $2 }' corpus.tsv >corpus.data
expect_exit 0 mpi 3 dedupe --id-field url --text-field content corpus.data
same "dedupe JSONL inferred, --id-field --text-field" ref.txt
zstd -q -c corpus.tsv >corpus.tsv.zst
expect_exit 0 mpi 2 dedupe corpus.tsv.zst
same "dedupe .zst inferred" ref.txt
expect_exit 1 mpi 2 dedupe --format tsv corpus.data
expect_err_match 'corpus.data:1: .*this looks like JSONL: use --format jsonl'
"$ND" dedupe --format tsv --out pairs --json --min-resemblance 0.5 corpus.tsv >ref.json 2>/dev/null
expect_exit 0 mpi 3 dedupe --format tsv --json --min-resemblance 0.5 corpus.tsv
same "dedupe --json" ref.json
"$ND" dedupe --format tsv --out pairs --k 30 --min-resemblance 0.6 corpus.tsv >ref30.txt 2>/dev/null
expect_exit 0 leakcheck mpi 4 dedupe --format tsv --k 30 --min-resemblance 0.6 corpus.tsv
same "dedupe banding to k 30" ref30.txt
"$ND" dedupe --format tsv --out pairs --k 8 --min-resemblance 0 corpus.tsv >ref8.txt 2>/dev/null
expect_exit 0 mpi 3 dedupe --format tsv --k 8 --min-resemblance 0 corpus.tsv
same "dedupe simhash only" ref8.txt
# --min-containment: pages with half as much text again appended pair
# with their originals by containment only; mpi decides as the CLI does
awk -F'\t' 'BEGIN { srand(9) } { print } NR % 10 == 1 { t = $2
    for (m = 0; m < 50; m++) t = t " v" int(rand() * 300); print "ext" NR "\t" t }' corpus.tsv >contained.tsv
"$ND" dedupe --format tsv --out pairs --json --min-containment 0.8 contained.tsv >refc.json 2>refc.err
check "containment pairs found" -n "$(grep -E '\(([1-9][0-9]*) by containment\)' refc.err)"
check "containment printed" -n "$(grep containment refc.json)"
read -r n_pairs n_cont < <(sed -nE 's/.* ([0-9]+) pairs \(([0-9]+) by containment.*/\1 \2/p' refc.err)
for np in 1 3; do
    expect_exit 0 mpi "$np" dedupe --format tsv --json --min-containment 0.8 contained.tsv
    same "dedupe --min-containment -np $np" refc.json
    expect_err_match "$n_pairs pairs \\($n_cont by containment\\)"
done
expect_exit 1 mpi 3 dedupe --format tsv --min-containment 1.5 contained.tsv
expect_err_match 'min-containment must be a number'
awk -v seed=3 -v n=2000 -v out=stored -f "$GEN" >fps.fp
"$ND" dedupe --format fp --k 3 --out pairs fps.fp >reffp.txt 2>/dev/null
expect_exit 0 mpi 4 dedupe --format fp --k 3 fps.fp
same "dedupe fps -np 4" reffp.txt
expect_exit 1 mpi 3 dedupe --format fp --k 9 fps.fp
expect_err_match 'needs texts'
# inferred fingerprints: the same pairs and the same refusal
expect_exit 0 mpi 2 dedupe --k 3 fps.fp
same "dedupe inferred fps" reffp.txt
expect_exit 1 mpi 2 dedupe --k 9 fps.fp
expect_err_match 'needs texts'
printf 'doc1\tsome text\nno tab here\n' >bad.tsv
expect_exit 1 mpi 3 dedupe --format tsv bad.tsv
expect_err_match 'bad.tsv:2'
