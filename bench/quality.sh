#!/usr/bin/env bash
# quality.sh — near-duplicate quality of today's engine and of simulated
# resemblance-verification designs, on real text of this machine, against
# exact resemblance (bench/README.md, "Near-duplicate quality"; issue 34).
#
# usage: bench/quality.sh BUILD_DIR [WORK_DIR] [--quick] [-- CORPUS...]
#   BUILD_DIR  a meson build dir holding cli/neardup and bench/quality_sim
#   WORK_DIR   scratch space (default /tmp/nd-quality): corpora and their
#              truth are built there once (delete them to rebuild); outputs
#              go to WORK_DIR/out, the tables to WORK_DIR/report.md
#   --quick    the engine and four designs only (the recommended one,
#              the exact ceiling, today's rule, the recommended sketch with
#              16 bands)
#   CORPUS     pkgdesc, manpara, docs (default: all three; see
#              bench/quality_corpus.py). pkgdesc needs apt's Translation-en
#              index: apt-get -o Acquire::Languages=en update
#
# Per corpus: the corpus (quality_corpus.py), its exact truth
# (quality_truth.py, checked by brute force on its first documents), today's
# fingerprint-only engine (`neardup init --k 3 --fingerprint-only` + `add --format jsonl`
# in corpus order; `dedupe --format jsonl --out pairs`), the resemblance
# store (`init --k 3 --resemblance` + `add`), every design
# simulated (quality_sim), all judged alike (quality_score.py); then the
# tables (quality_report.py).
set -euo pipefail
B=${1:?usage: quality.sh BUILD_DIR [WORK_DIR] [--quick] [-- CORPUS...]}
shift
W=/tmp/nd-quality
if [ $# -gt 0 ] && [ "$1" != "--" ] && [ "$1" != "--quick" ]; then W=$1; shift; fi
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
[ "${1:-}" = "--" ] && shift
corpora=("$@")
[ ${#corpora[@]} -eq 0 ] && corpora=(pkgdesc manpara docs)
HERE=$(cd "$(dirname "$0")" && pwd)
ND=$B/cli/neardup
SIM=$B/bench/quality_sim
[ -x "$ND" ] && [ -x "$SIM" ] || { echo "quality.sh: build $B first (ninja -C $B)" >&2; exit 1; }

# Designs: SKETCH,BANDSxROWS[flags],R[,kK][,all|allrep] (bench/quality_sim.c).
# The first is the recommendation (bench/README.md).
REC=fss256x4,12x8f,0.85,all
designs=("$REC"
    exact,16x8f,0.85,all          # the ceiling: exact resemblance of the features
    lib,16x8,0.85              # today's dedupe rule (sketch, bands, R) in a store
    fss256x4,16x8f,0.85,all)      # the recommended sketch with 16 bands
[ $quick = 1 ] || designs+=(
    # the sketch, with bands that miss little (16x8, rounds; R 0.85; every
    # document indexed)
    lib,16x8f,0.85,all oph256x16,16x8f,0.85,all ophs256x16,16x8f,0.85,all
    bottom64,16x8f,0.85,all bottom128,16x8f,0.85,all ophs2048x1,16x8f,0.85,all
    fss128x16,16x8f,0.85,all fss128x8,16x8f,0.85,all fss512x2,16x8f,0.85,all
    fss512x1,16x8f,0.85,all fss1024x1,16x8f,0.85,all
    # the threshold
    fss256x4,16x8f,0.8,all fss256x4,16x8f,0.83,all fss256x4,16x8f,0.87,all
    fss256x4,16x8f,0.9,all
    # a store that keeps only the documents it accepts as new; one that
    # remembers the copies but names the new document behind a copy
    fss256x4,16x8f,0.85 exact,16x8f,0.85 fss256x4,16x8f,0.85,allrep
    # candidates: bands only (k = 0), other band layouts
    fss256x4,16x8f,0.85,k0,all
    fss256x4,6x8f,0.85,all fss256x4,8x8f,0.85,all fss256x4,10x8f,0.85,all
    fss256x4,12x6f,0.85,all fss256x4,20x5f,0.85,all
    fss256x4,16x8,0.85,all fss256x4,16x8i,0.85,all fss256x4,16x8s,0.85,all)

mkdir -p "$W/out"
R=$W/results.tsv
: > "$R"
for c in "${corpora[@]}"; do
    case $c in
    pkgdesc | manpara) check=3000 ;;
    docs) check=1000 ;;
    *) echo "quality.sh: unknown corpus $c" >&2; exit 1 ;;
    esac
    [ -f "$W/$c.jsonl" ] || python3 "$HERE/quality_corpus.py" "$c" "$W/$c"
    [ -f "$W/$c.truth.stats" ] || python3 "$HERE/quality_truth.py" "$W/$c.jsonl" "$W/$c.truth" --check $check
    cat "$W/$c.truth.stats" >> "$R"

    O=$W/out/$c
    rm -rf "$O.db" "$O".*.stream "$O".*.pairs
    "$ND" init "$O.db" --fingerprint-only --k 3 > /dev/null
    /usr/bin/time -f "$c: engine add: %e s wall" "$ND" add "$O.db" --format jsonl "$W/$c.jsonl" \
        > "$O.engine.stream" 2> "$O.err" || { cat "$O.err" >&2; exit 1; }
    tail -1 "$O.err"
    /usr/bin/time -f "$c: engine dedupe: %e s wall" "$ND" dedupe --format jsonl --out pairs \
        "$W/$c.jsonl" > "$O.engine.pairs" 2> "$O.err" || { cat "$O.err" >&2; exit 1; }
    tail -1 "$O.err"
    rm -rf "$O.db"
    # the store that verifies by resemblance, as a user runs it
    "$ND" init "$O.db" --k 3 --resemblance > /dev/null
    /usr/bin/time -f "$c: resemblance store add: %e s wall" "$ND" add "$O.db" --format jsonl \
        "$W/$c.jsonl" > "$O.resemblance.stream" 2> "$O.err" || { cat "$O.err" >&2; exit 1; }
    tail -1 "$O.err"
    rm -rf "$O.db"

    "$SIM" "$W/$c.texts" "$O" --truth "$W/$c.truth" "${designs[@]}" | sed "s/^SIM\t/SIM\t$c\t/" >> "$R"
    outs=("stream:engine=$O.engine.stream" "pairs:engine=$O.engine.pairs"
          "stream:resemblance=$O.resemblance.stream")
    for d in "${designs[@]}"; do
        l=${d//,/_}
        outs+=("stream:$l=$O.$l.stream" "pairs:$l=$O.$l.pairs")
    done
    python3 "$HERE/quality_score.py" "$W/$c.jsonl" "$W/$c.truth" "${outs[@]}" >> "$R"
    echo "$c: scored $(( ${#designs[@]} + 1 )) runs"
done
python3 "$HERE/quality_report.py" "$R" | tee "$W/report.md"
