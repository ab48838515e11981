#!/bin/sh
# bench/run.sh SIZE [RUNS] -- neardup's database benchmarks at one size.
#
#   bench/run.sh 1M        # N = 1M stored fingerprints, 3 runs
#   bench/run.sh 10M 3
#
# Builds bench_db in $BUILD (default build-bench, release), runs it RUNS
# times (default 3) with fresh databases under bench/results/tmp/SIZE, runs
# the FAISS peers (bench/bdb_faiss.py) on the same data when python3-faiss
# is installed (else skips them with a note), then writes
# bench/results/<date>-SIZE.json (every run) and bench/results/<date>-SIZE.md
# (the record's table). bench/README.md's table of current figures is
# updated by hand from it.
# Extra bench_db options go in $BENCH_ARGS (e.g. BENCH_ARGS="--batch 100k"),
# extra bdb_faiss.py options in $FAISS_ARGS (e.g. FAISS_ARGS="--batch-q 20000",
# which the 100M size sets unless FAISS_ARGS is given). $LABEL names a
# variant: LABEL=k6plan BENCH_ARGS="--plan-k 6" bench/run.sh 100M 1 writes
# bench/results/<date>-100M-k6plan.json and .md, leaving the plain 100M
# record alone. NO_FAISS=1 leaves the FAISS peers
# out (a record of neardup and its in-process baselines only).
# Exit status: 0, or 1 when a check disagreed (the report still records it).
set -eu

size=${1:?usage: bench/run.sh SIZE [RUNS]}
runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD:-$root/build-bench}

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" -Dbuildtype=release
fi
ninja -C "$build" bench/bench_db >/dev/null
# What the binary was built from: HEAD, plus uncommitted library changes?
# (Records, bench/README.md and results/, are not code: a record taken
# right after another is not "uncommitted" for them.)
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=0
if [ -n "$(git -C "$root" status --porcelain -uno -- engine compaction include common \
        bench meson.build ':(exclude)bench/README.md' ':(exclude)bench/results' \
        2>/dev/null)" ]; then dirty=1; fi

label=$size${LABEL:+-$LABEL}
tmp=$here/results/tmp/$label
rm -rf "$tmp"
mkdir -p "$tmp/data" "$tmp/bin"
# Run a private copy of the binary and the library: the tree is shared, and
# a rebuild of $build during the runs must not change what is measured.
cp "$build/bench/bench_db" "$tmp/bin/"
soname=$(readelf -d "$build/bench/bench_db" | sed -n 's/.*Shared library: \[\(libneardup[^]]*\)\].*/\1/p')
cp -L "$build/$soname" "$tmp/bin/"
bench_db="$tmp/bin/bench_db"
export LD_LIBRARY_PATH="$tmp/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# A python with FAISS: Debian's python3-faiss lives in /usr/bin/python3.
# NO_FAISS=1 leaves the FAISS peers out even when they are installed.
faiss_py=
[ "${NO_FAISS:-0}" = 1 ] || for py in /usr/bin/python3 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import faiss' 2>/dev/null; then
        faiss_py=$py
        break
    fi
done

if [ "$size" = 100M ] && [ -z "${FAISS_ARGS+x}" ]; then FAISS_ARGS="--batch-q 20000"; fi
status=0
faiss_files=
faiss_note=
r=1
while [ "$r" -le "$runs" ]; do
    echo "== run $r/$runs: bench_db --n $size ${BENCH_ARGS:-}" >&2
    dump=
    if [ "$r" -eq 1 ] && [ -n "$faiss_py" ]; then dump="--dump $tmp/data"; fi
    # shellcheck disable=SC2086
    "$bench_db" --n "$size" --dir "$tmp/db" --out "$tmp/run$r.json" \
        $dump ${BENCH_ARGS:-} || status=1
    rm -rf "$tmp/db"
    if [ -n "$faiss_py" ]; then
        echo "== run $r/$runs: FAISS" >&2
        # shellcheck disable=SC2086
        "$faiss_py" "$here/bdb_faiss.py" "$tmp/data" "$tmp/faiss$r.json" ${FAISS_ARGS:-} ||
            status=1
        faiss_files="$faiss_files $tmp/faiss$r.json"
    fi
    r=$((r + 1))
done
if [ "${NO_FAISS:-0}" = 1 ]; then
    faiss_note="FAISS left out (NO_FAISS=1)"
    echo "bench/run.sh: $faiss_note" >&2
elif [ -z "$faiss_py" ]; then
    faiss_note="FAISS skipped: python3-faiss is not installed (apt-get install python3-faiss)"
    echo "bench/run.sh: $faiss_note" >&2
fi
rm -rf "$tmp/data"

out=$here/results/$(date -u +%Y-%m-%d)-$label.json
runfiles=
r=1
while [ "$r" -le "$runs" ]; do runfiles="$runfiles $tmp/run$r.json"; r=$((r + 1)); done
# shellcheck disable=SC2086
python3 "$here/bdb_report.py" --size "$label" --out "$out" --md "${out%.json}.md" \
    --commit "$commit" --dirty "$dirty" \
    ${faiss_note:+--faiss-note "$faiss_note"} $runfiles ${faiss_files:+--faiss $faiss_files}
echo "bench/run.sh: wrote $out and ${out%.json}.md" >&2
exit $status
