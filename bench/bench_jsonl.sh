#!/usr/bin/env bash
# bench/bench_jsonl.sh — JSONL input against plain text (TSV) on the same
# texts: `neardup fingerprint|add|import|batch|dedupe` on one core.
#
#   bench/bench_jsonl.sh [NEARDUP] [WORK_DIR] [RUNS]
#
# NEARDUP   the binary (default build-bench/cli/neardup, built release
#           from this tree when missing)
# WORK_DIR  where the corpus is built once and the databases go
#           (default /tmp/nd-bench-jsonl)
# RUNS      runs per cell, the median is reported (default 3)
#
# The corpus: every readable text file under /usr/share/doc,
# /usr/share/common-licenses and /usr/share/man (gzip decompressed, files
# with NUL bytes left out), repeated with new keys until it holds at least
# $CORPUS_MB MB (default 110) of text. It is written twice: corpus.jsonl
# ({"id":..., "text":...} with the texts' newlines, tabs and quotes escaped
# and UTF-8 as is, as corpora come) and corpus.tsv (KEY<TAB>TEXT, the same
# texts with newlines and tabs turned into spaces, which the fingerprint
# does not tell apart: the script checks that both give the same
# fingerprints). Each command runs under `taskset -c 0` with
# ND_BATCH_THREADS=1, the formats alternated; the table gives the median
# CPU seconds (user + system), MB/s of text (the TSV file's size per CPU
# second) for both formats, and JSONL's rate as a share of TSV's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
nd=${1:-$root/build-bench/cli/neardup}
work=${2:-/tmp/nd-bench-jsonl}
runs=${3:-3}
corpus_mb=${CORPUS_MB:-110}

if [ ! -x "$nd" ] && [ "$nd" = "$root/build-bench/cli/neardup" ]; then
    [ -f "$root/build-bench/build.ninja" ] || meson setup "$root/build-bench" "$root" -Dbuildtype=release >/dev/null
    ninja -C "$root/build-bench" cli/neardup >/dev/null
fi
nd=$(realpath "$nd")
mkdir -p "$work"
cd "$work"

if [ ! -s corpus.tsv ] || [ ! -s corpus.jsonl ]; then
    echo "bench_jsonl: building the corpus in $work" >&2
    python3 - "$corpus_mb" <<'EOF'
import gzip, json, os, random, sys
target = int(sys.argv[1]) * 1000000
texts = []
for top in ("/usr/share/common-licenses", "/usr/share/doc", "/usr/share/man"):
    for d, _, names in os.walk(top):
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            try:
                with open(p, "rb") as f:
                    b = f.read()
                if n.endswith(".gz"):
                    b = gzip.decompress(b)
            except (OSError, EOFError, gzip.BadGzipFile):
                continue
            if not b or b"\0" in b or len(b) > 4000000:
                continue
            texts.append((p, b.decode("utf-8", "replace")))
texts.sort()
rnd = random.Random(7)
size, rep = 0, 0
with open("corpus.jsonl", "w", encoding="utf-8") as fj, open("corpus.tsv", "w", encoding="utf-8") as ft:
    while size < target:
        order = list(range(len(texts)))
        rnd.shuffle(order)
        for i in order:
            p, t = texts[i]
            key = "%s#%d" % (p, rep)
            flat = t.replace("\r", " ").replace("\n", " ").replace("\t", " ")
            fj.write(json.dumps({"id": key, "text": t}, ensure_ascii=False) + "\n")
            ft.write(key + "\t" + flat + "\n")
            size += len(flat.encode("utf-8"))
            if size >= target:
                break
        rep += 1
EOF
fi
docs=$(wc -l < corpus.tsv)
mb=$(awk -v b="$(stat -c %s corpus.tsv)" 'BEGIN { printf "%.1f", b / 1e6 }')
mbj=$(awk -v b="$(stat -c %s corpus.jsonl)" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "bench_jsonl: $docs documents, corpus.tsv $mb MB, corpus.jsonl $mbj MB; $nd" >&2

# Same texts, same fingerprints (keys and fingerprints, in order).
"$nd" fingerprint --format tsv corpus.tsv > fp.tsv
"$nd" fingerprint --format jsonl corpus.jsonl > fp.jsonl
if ! cmp -s fp.tsv fp.jsonl; then
    echo "bench_jsonl: the two formats give different fingerprints" >&2
    exit 1
fi
rm -f fp.tsv fp.jsonl

export ND_BATCH_THREADS=1
# time_cmd FORMAT COMMAND: CPU seconds (user + system, every thread) of
# one run, databases made fresh before. CPU time rather than wall time:
# on one core of an idle machine they agree, and on a shared machine CPU
# time still measures the work.
time_cmd() {
    local fmt=$1 cmd=$2 in=corpus.$1
    rm -rf db time.out run.err
    case $cmd in add|import|batch) "$nd" init db --fingerprint-only --k 3 --docs 1e6 >/dev/null ;; esac
    case $cmd in
    fingerprint) set -- fingerprint --format "$fmt" "$in" ;;
    add)         set -- add db --format "$fmt" "$in" ;;
    import)      set -- import db --format "$fmt" "$in" ;;
    batch)       set -- batch db --format "$fmt" "$in" ;;
    dedupe)      set -- dedupe --format "$fmt" "$in" ;;
    esac
    /usr/bin/time -f '%U %S' -o time.out taskset -c 0 "$nd" "$@" >/dev/null 2>run.err ||
        { echo "bench_jsonl: $* failed:" >&2; cat run.err >&2; exit 1; }
    awk '{ printf "%.3f", $1 + $2 }' time.out
}
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '| command | TSV CPU s | TSV MB/s | JSONL CPU s | JSONL MB/s | JSONL / TSV |\n'
printf '|---|---|---|---|---|---|\n'
for cmd in fingerprint add import batch dedupe; do
    ts="" js=""
    for _ in $(seq "$runs"); do   # alternate the formats, so drift hits both
        ts="$ts $(time_cmd tsv "$cmd")"
        js="$js $(time_cmd jsonl "$cmd")"
    done
    t=$(echo $ts | median) j=$(echo $js | median)
    awk -v c="$cmd" -v t="$t" -v j="$j" -v mb="$mb" 'BEGIN {
        printf "| %s | %.2f | %.0f | %.2f | %.0f | %.0f%% |\n", c, t, mb / t, j, mb / j, 100 * t / j }'
done
rm -rf db time.out run.err
