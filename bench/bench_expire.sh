#!/usr/bin/env bash
# bench_expire.sh — how long `neardup expire` takes to remove 10% of a
# store (issue 49, point 3), fingerprint-only and resemblance.
#
#   bench/bench_expire.sh [--kind fp|rs] [--n N] [--rounds R] [--dir D]
#                         [--neardup PATH] [--baseline PATH] [--verify-rounds V]
#
# fp: N documents of random fingerprints (one in 50 sharing one of 7, so
#     some fingerprints have many documents), 10% of them last seen 100
#     days ago, loaded by `import --format dump` into a fingerprint-only
#     store (k=3, the planner's tables for N).
# rs: N texts of bench_resemble's generator (--jsonl), the first 10%
#     imported last seen 100 days ago, the rest now, into a resemblance
#     store (the default kind).
# Each round expires a fresh copy of the store (`--older-than 30d`) and
# times it. The check in every round: the surviving documents are exactly
# the input's recent ones (their keys, from `dump`, against the input's),
# the expired count is exactly the old ones, and `verify` passes
# (queries against the brute-force scan after an expiry: test_expire).
# Prints the median seconds and documents a second, the disk before
# and after, and each round's peak RSS. --baseline: another build's
# neardup expires a copy too in each round (the two alternate in order),
# with the same checks but `verify`, and the medians' ratio is printed.
# --verify-rounds V: `verify` in the first V rounds only (at 100M it
# takes about 14 minutes; the count and survivor checks stay in every
# round).
set -euo pipefail
kind=fp n=1000000 rounds=3 dir=${TMPDIR:-/tmp}/nd-bench-expire base="" vrounds=1000000
nd=$(dirname "$0")/../build/cli/neardup
gen=$(dirname "$0")/../build/bench/bench_resemble
while [ $# -gt 0 ]; do
    case $1 in
    --kind) kind=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --neardup) nd=$2; gen=$(dirname "$2")/../bench/bench_resemble; shift 2 ;;
    --baseline) base=$(realpath "$2"); shift 2 ;;
    --verify-rounds) vrounds=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_expire: unknown option $1" >&2; exit 1 ;;
    esac
done
nd=$(realpath "$nd") gen=$(realpath "$gen")
now=1700000000 old=$((1700000000 - 100 * 86400))
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
case $kind in
fp)
    python3 - "$n" "$now" "$old" <<'PY'
import random, sys
n, now, old = map(int, sys.argv[1:4])
r = random.Random(7)
with open('in.dump', 'w') as f, open('keep.keys', 'w') as k:
    for i in range(n):
        fp = r.getrandbits(64) if i % 50 else 0x1234567890abcdef ^ (i % 7)
        t = old if r.random() < 0.1 else now - 3600
        key = 'https://example.com/page/%09d' % i
        f.write('%s\t%016x\t1\t%d\n' % (key, fp, t))
        if t != old: k.write(key + '\n')
PY
    "$nd" init store --fingerprint-only --k 3 --docs "$n" >/dev/null
    /usr/bin/time -f '%e' -o load.s "$nd" import store --format dump in.dump >/dev/null 2>&1 ;;
rs)
    # texts of about 4 KB (5 MB a thousand, to be sure), in two files (old, new)
    "$gen" --jsonl all.jsonl --mb $((n * 5 / 1000 + 1)) --seed 11 >/dev/null
    head -n "$n" all.jsonl > in.jsonl
    [ "$(wc -l < in.jsonl)" -eq "$n" ] || { echo "bench_expire: generator gave too few texts" >&2; exit 1; }
    head -n $((n / 10)) in.jsonl > old.jsonl
    tail -n +$((n / 10 + 1)) in.jsonl > new.jsonl
    python3 -c "
import json, sys
for line in open('new.jsonl'): print(json.loads(line)['id'])" > keep.keys
    "$nd" init store --k 3 --docs "$n" >/dev/null
    /usr/bin/time -f '%e' -o load.s sh -c "'$nd' import store --format jsonl --time $old old.jsonl &&
        '$nd' import store --format jsonl --time $((now - 3600)) new.jsonl" >/dev/null 2>&1 ;;
*) echo "bench_expire: --kind fp or rs" >&2; exit 1 ;;
esac
LC_ALL=C sort keep.keys > keep.sorted
total=$("$nd" stats store | awk '$1 == "documents" { print $2 }')
want_gone=$((total - $(wc -l < keep.sorted)))
before=$(du -sb store | cut -f1)
echo "kind $kind: $total documents ($(cat load.s) s to load), $want_gone to expire, $before bytes"
# One expiry of a fresh copy by binary $1 in round $2: seconds into $s.
expire_once() {
    local bin=$1 r=$2 start end after
    rm -rf work
    cp -a store work
    sync
    start=$(date +%s.%N)
    out=$(/usr/bin/time -f '%M' -o rss.kb "$bin" expire work --older-than 30d --now "$now")
    end=$(date +%s.%N)
    s=$(echo "$end - $start" | bc)
    [ "$out" = "expired	$want_gone" ] || { echo "bench_expire: round $r ($bin): '$out', want $want_gone" >&2; exit 1; }
    # dump walks docs in key order (bytewise): sorted already, unless not
    "$nd" dump work 2>/dev/null | cut -f1 | cmp -s - keep.sorted ||
        "$nd" dump work 2>/dev/null | cut -f1 | LC_ALL=C sort | cmp -s - keep.sorted ||
        { echo "bench_expire: round $r ($bin): the survivors differ from the recent input" >&2; exit 1; }
    if [ "$r" -le "$vrounds" ] && [ "$bin" = "$nd" ]; then
        "$nd" verify work >/dev/null || { echo "bench_expire: round $r ($bin): verify failed" >&2; exit 1; }
    fi
    after=$(du -sb work | cut -f1)
    printf 'round %d%s: %.2f s (%.0f documents/s), %d bytes after, peak RSS %d MB\n' "$r" \
        "$([ "$bin" = "$nd" ] || echo ' baseline')" "$s" "$(echo "$want_gone / $s" | bc -l)" \
        "$after" "$(($(cat rss.kb) / 1024))"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
secs=() bsecs=()
for r in $(seq 1 "$rounds"); do
    if [ -n "$base" ] && [ $((r % 2)) -eq 0 ]; then
        expire_once "$base" "$r"; bsecs+=("$s")
    fi
    expire_once "$nd" "$r"; secs+=("$s")
    if [ -n "$base" ] && [ $((r % 2)) -eq 1 ]; then
        expire_once "$base" "$r"; bsecs+=("$s")
    fi
done
med=$(median "${secs[@]}")
printf 'median: %.2f s, %.0f documents/s expired (checks passed in every round)\n' "$med" \
    "$(echo "$want_gone / $med" | bc -l)"
if [ -n "$base" ]; then
    bmed=$(median "${bsecs[@]}")
    printf 'baseline median: %.2f s; baseline / this: %.2fx\n' "$bmed" "$(echo "$bmed / $med" | bc -l)"
fi
rm -rf work
