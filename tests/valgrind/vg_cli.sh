#!/usr/bin/env bash
# vg_cli.sh — a CLI smoke run under valgrind: init, add, query, get,
# compact, verify, stats, fingerprint (JSONL and gzip input too), expire,
# import, a bad input,
# cluster (with --apply), dedupe (partitioned self-join), shard init and
# shard import (a loader per shard, chunks spilled). Each command must
# exit as expected with no invalid read or write, no use of
# uninitialised memory and no definite or indirect leak ("still reachable"
# and "possibly lost" blocks, which RocksDB's static state leaves, do not
# count).
#
# usage: vg_cli.sh NEARDUP
# Note: RocksDB sets write hints with fcntl commands valgrind does not
# model; its warnings about them are ignored.
# Exits 77 (meson: skipped) with a NOTICE when valgrind is missing.
set -uo pipefail
ND=${1:?neardup binary}
if ! command -v valgrind >/dev/null; then
    echo "NOTICE: valgrind not found: the valgrind smoke run did not run" >&2
    exit 77
fi
supp=$(cd "$(dirname "$0")" && pwd)/vg.supp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
pass=0 fail=0

# vg WANT_EXIT CMD...: run CMD under valgrind; 99 means valgrind found errors.
vg() {
    local want=$1; shift
    valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
        --suppressions="$supp" --log-file=vg.log "$ND" "$@" >out 2>err
    local rc=$?
    # valgrind's notes on fcntl commands it does not model are not findings
    grep -v 'Warning: unimplemented fcntl command' vg.log > vg.found
    if [ "$rc" -eq "$want" ] && ! [ -s vg.found ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: neardup $* : exit $rc (want $want)" >&2
        head -60 vg.found >&2
        head -3 err >&2
    fi
}

awk 'BEGIN { srand(11); for (i = 0; i < 500; i++) printf "%04x%04x%04x%04x\tk%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' > docs.fp
printf 'a\tthe quick brown fox jumps over the lazy dog\nb\tthe quick brown fox jumped over the lazy dog\nc\tsomething else entirely, words and more words\n' > texts.tsv
printf '<html><head><title>T</title><script>x()</script></head><body><p>Hello &amp; welcome</p></body></html>' > page.html

vg 0 init db --k 3 --docs 1e5 --fingerprint-only
vg 0 add db --format fp --time 1000 docs.fp
vg 0 add db --format tsv --sync --time 5000 texts.tsv
vg 0 query db --k 3 "$(head -c 16 docs.fp)"
vg 0 get db k1 k2 a
vg 0 compact db
vg 0 verify db
vg 0 stats db --json
vg 0 fingerprint --format tsv texts.tsv
vg 0 fingerprint --html page.html
# JSONL through both parsers (simdjson; jansson for the bad line), gzip input
printf '{"id":"j1","text":"caf\\u00e9 \\ud83d\\ude00 the quick brown fox","score":2}\n{"id":7,"fp":"00000000000000ff","x":[1,{"y":null}]}\n' > texts.jsonl
printf '{"id":"j2","text":"\\ud800"}\n' > bad.jsonl
gzip -c texts.tsv > texts.tsv.gz
vg 0 fingerprint --format jsonl texts.jsonl
vg 1 fingerprint --format jsonl bad.jsonl
vg 0 fingerprint --format tsv texts.tsv.gz
vg 0 expire db --older-than 1000s --now 4000
vg 0 import db --format tsv texts.tsv
vg 1 add db --format fp texts.tsv
printf 'q1\t1\ta\nq1\t2\tb\t1.5\nq1\t3\tc\nq2\t1\tc\nq2\t2\ta\n' > results.tsv
vg 0 cluster --db db --k 8 --top 10 --apply results.tsv
vg 0 dedupe --format tsv --out clusters --memory 0.001 texts.tsv
vg 0 shard init st --shards 2 --fingerprint-only --k 3 --docs 1000
vg 0 shard import st --chunk 100 docs.fp

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
