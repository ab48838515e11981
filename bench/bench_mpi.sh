#!/usr/bin/env bash
# bench_mpi.sh — Manku's batch mode over MPI: Q queries against N stored
# fingerprints split over 1, 2 and 4 shards, one rank per shard.
#
# usage: bench/bench_mpi.sh [BUILD_DIR]          (default build-mpi)
#   N=10000000 Q=1000000 RANKS="1 2 4" WORK=DIR K=3 SHARDS=
#
# Data: N random 64-bit fingerprints (keys d1..dN) and Q queries, of which
# 10% are stored fingerprints with 0..3 bits flipped (they must come out
# dup) and the rest random (new). Each store is built with `neardup shard
# init` + `neardup shard import` (bulk, no near-duplicate check), then
# `neardup compact` on every shard (folds anything fresh; with builds
# before the storage layer flushed at close, it also kept read-only opens
# from replaying the import's write-ahead log each time). Then `mpirun -np R neardup-mpi batch` checks the queries
# (without --add, so every R sees the same stored set) and the outputs of
# all R are compared. Also times the single-machine `neardup batch` on the
# one-shard store's database as the baseline.
#
# With SHARDS=S set, one store of S shards is built once and every R of
# RANKS runs over it (shard s belongs to rank s % R): the way to measure
# large N without loading it once per R.
#
# Prints a Markdown table: ranks, fingerprints per shard, load time, wall
# time of the batch run (mpirun start to exit), the check step (slowest
# rank's nd_db_batch over its shards), the per-shard check rate, and the time
# of one shard checked alone by the single-machine `neardup batch` (no
# rank competing for the 2 cores: the per-shard cost the projection in
# docs/scaling.md is made from).
set -eu
BUILD=${1:-build-mpi}
ND=$BUILD/cli/neardup
NDM=$BUILD/mpi/neardup-mpi
N=${N:-10000000}
Q=${Q:-1000000}
K=${K:-3}
RANKS=${RANKS:-"1 2 4"}
WORK=${WORK:-$(mktemp -d /tmp/bench_mpi.XXXXXX)}
MPIRUN=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for b in "$ND" "$NDM"; do [ -x "$b" ] || { echo "bench_mpi: $b not built" >&2; exit 1; }; done
ND=$(cd "$(dirname "$ND")" && pwd)/neardup
NDM=$(cd "$(dirname "$NDM")" && pwd)/neardup-mpi
mkdir -p "$WORK"
cd "$WORK"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

if [ ! -s stored.fp ] || [ "$(wc -l <stored.fp)" -ne "$N" ]; then
    echo "bench_mpi: generating $N fingerprints and $Q queries in $WORK" >&2
    head -c $((8 * N)) /dev/urandom | od -An -tx8 -w8 -v | awk '{ print $1 "\td" NR }' >stored.fp
    nq=$((Q / 10))
    {
        shuf -n "$nq" --random-source=<(yes) stored.fp | awk '
            function hex1(v) { return substr("0123456789abcdef", v + 1, 1) }
            function val1(c) { return index("0123456789abcdef", c) - 1 }
            function xor4(a, b,   r, bit) { r = 0
                for (bit = 1; bit < 16; bit *= 2) if ((int(a / bit) % 2) != (int(b / bit) % 2)) r += bit
                return r }
            BEGIN { srand(1) }
            { fp = $1; d = NR % 4
              for (i = 0; i < d; i++) { p = 1 + int(rand() * 16); c = val1(substr(fp, p, 1))
                  fp = substr(fp, 1, p - 1) hex1(xor4(c, 2 ^ (i % 4))) substr(fp, p + 1) }
              print fp "\tnear" NR }'
        head -c $((8 * (Q - nq))) /dev/urandom | od -An -tx8 -w8 -v | awk '{ print $1 "\tq" NR }'
    } | shuf --random-source=<(yes) >queries.fp
fi

SHARDS=${SHARDS:-}
printf '| ranks | shards | fingerprints per shard | load (s) | batch wall (s) | check (s) | per-shard rate (queries/s) | one shard alone (s) | dup |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for R in $RANKS; do
    S=${SHARDS:-$R}
    st=store-$S
    if [ ! -s "$st/NEARDUP-SHARDS" ]; then
        rm -rf "$st"
        t=$(now)
        "$ND" shard init "$st" --shards "$S" --fingerprint-only --k "$K" --docs "$N" >/dev/null
        "$ND" shard import "$st" stored.fp >/dev/null
        for s in "$st"/shard-*; do "$ND" compact "$s" >/dev/null; done
        echo "$(since "$t")" >"$st.load"
    fi
    t=$(now)
    "$MPIRUN" --oversubscribe -np "$R" "$NDM" batch "$st" queries.fp --k "$K" >"out-$R.txt" 2>"err-$R.txt"
    wall=$(since "$t")
    check=$(sed -n 's/.*check \([0-9.]*\) s.*/\1/p' "err-$R.txt")
    dup=$(grep -c '^dup' "out-$R.txt" || true)
    # per shard: each rank checks S / R shards one after another
    rate=$(awk -v q="$Q" -v c="$check" -v s="$S" -v r="$R" 'BEGIN { printf "%.0f", q * (s / r) / c }')
    "$ND" batch "$st/shard-000" queries.fp --k "$K" >/dev/null 2>"alone-$R.err"
    alone=$(sed -n 's/.* in \([0-9.]*\) s.*/\1/p' "alone-$R.err")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$R" "$S" $((N / S)) "$(cat "$st.load")" \
        "$wall" "$check" "$rate" "$alone" "$dup"
    echo "bench_mpi: $R ranks: $(tail -1 "err-$R.txt")" >&2
done
first=$(set -- $RANKS; echo "$1")
for R in $RANKS; do
    cmp -s "out-$first.txt" "out-$R.txt" || echo "bench_mpi: WARNING: $R ranks differ from $first" >&2
done
if [ -z "$SHARDS" ] && [ -d store-1/shard-000 ]; then
    t=$(now)
    "$ND" batch store-1/shard-000 queries.fp --k "$K" >single.txt 2>single.err
    echo "bench_mpi: single-machine neardup batch on store-1/shard-000: $(since "$t") s wall; $(tail -1 single.err)" >&2
    cmp -s single.txt "out-1.txt" || echo "bench_mpi: WARNING: neardup batch differs from neardup-mpi" >&2
fi
