#!/usr/bin/env bash
# fault_read.sh — an input that fails to read (issue 44, point 6: "`query -`
# reports a failed read as an error"): io_fault.so, preloaded, fails the
# second read(2) of the input file, and every later one, with EIO, as a
# broken disk or a dead network file system would. Every command that
# reads records (add, import, import --steps, batch, batch --add, query -,
# dedupe, dedupe --db, fingerprint, shard import), from a path and from
# stdin, must then exit non-zero with "read error: Input/output error"
# naming the input — never exit 0 as if the input had ended — and a store
# it wrote to must verify and open for writing, holding no document that
# was not in the input; an import (all or nothing) holds none.
# usage: fault_read.sh NEARDUP IO_FAULT_SO
set -uo pipefail
ND=${1:?neardup binary}
SHIM=${2:?io_fault.so}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
docs() { "$ND" stats "$1" --json | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p'; }

# 40,000 fingerprint records (1 MB: several reads) and 3,000 texts
awk 'BEGIN { srand(5); for (i = 0; i < 40000; i++)
    printf "%04x%04x%04x%04x\tk%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, i }' \
    > "$work/in.fp"
cut -f1 "$work/in.fp" > "$work/in.q"
awk 'BEGIN { srand(6); for (i = 0; i < 3000; i++) { printf "t%d\t", i
    for (j = 0; j < 60; j++) printf "w%d ", int(rand() * 5000); printf "\n" } }' > "$work/in.tsv"

# failing WHAT STORE-OR-- CMD...: CMD with the input's reads failing
failing() {
    local what=$1 store=$2 before=0 rc
    shift 2
    [ "$store" = - ] || before=$(docs "$store")
    LD_PRELOAD=$SHIM NEARDUP_FAULT_READ_PATH="$work/in." NEARDUP_FAULT_READ_N=2 \
        "$@" > "$work/out" 2> "$work/err" < "${STDIN:-/dev/null}"
    rc=$?
    if [ "$rc" -ne 0 ] && grep -q 'read error: Input/output error' "$work/err"; then ok
    else bad "$what: exit $rc, stderr [$(head -c 300 "$work/err")]"; fi
    if [ -n "${NAMED:-}" ]; then
        grep -qF "$NAMED" "$work/err" && ok || bad "$what: the message names $NAMED [$(head -c 300 "$work/err")]"
    fi
    [ "$store" = - ] && return
    "$ND" verify "$store" >/dev/null 2>&1 && ok || bad "$what: the store does not verify"
    local after
    after=$(docs "$store")
    case $what in
    import*) [ "$after" = "$before" ] && ok || bad "$what: an import kept $after of $before" ;;
    *) [ "$after" -ge "$before" ] && [ "$after" -le $((before + 40000)) ] && ok ||
        bad "$what: $after documents (before $before)" ;;
    esac
    "$ND" compact "$store" >/dev/null 2>&1 && ok || bad "$what: the store does not open for writing"
}

"$ND" init "$work/fs" --fingerprint-only --k 3 --docs 1e5 >/dev/null
"$ND" init "$work/rs" --k 3 --docs 1e5 >/dev/null
"$ND" shard init "$work/sh" --shards 2 --fingerprint-only --k 3 --docs 1e5 >/dev/null
for src in path stdin; do
    if [ "$src" = path ]; then fp=("$work/in.fp"); tsv=("$work/in.tsv"); NAMED_FP=$work/in.fp NAMED_TSV=$work/in.tsv
    else fp=(-); tsv=(-); NAMED_FP='<stdin>' NAMED_TSV='<stdin>'; fi
    stdin_of() { [ "$src" = stdin ] && echo "$1" || echo /dev/null; }
    NAMED=$NAMED_FP STDIN=$(stdin_of "$work/in.fp") failing "add ($src)" "$work/fs" "$ND" add "$work/fs" --format fp "${fp[@]}"
    NAMED=$NAMED_FP STDIN=$(stdin_of "$work/in.fp") failing "import ($src)" "$work/fs" "$ND" import "$work/fs" --format fp "${fp[@]}"
    NAMED=$NAMED_FP STDIN=$(stdin_of "$work/in.fp") failing "import --steps ($src)" "$work/fs" "$ND" import "$work/fs" --steps --chunk 1000 --format fp "${fp[@]}"
    NAMED=$NAMED_FP STDIN=$(stdin_of "$work/in.fp") failing "batch ($src)" - "$ND" batch "$work/fs" --format fp "${fp[@]}"
    NAMED=$NAMED_FP STDIN=$(stdin_of "$work/in.fp") failing "batch --add ($src)" "$work/fs" "$ND" batch "$work/fs" --add --format fp "${fp[@]}"
    # (query reads fingerprints from its arguments or stdin only)
    [ "$src" = stdin ] && NAMED='<stdin>' STDIN=$work/in.q failing "query -" - "$ND" query "$work/fs" -
    NAMED=$NAMED_TSV STDIN=$(stdin_of "$work/in.tsv") failing "add of texts ($src)" "$work/rs" "$ND" add "$work/rs" --format tsv "${tsv[@]}"
    NAMED=$NAMED_TSV STDIN=$(stdin_of "$work/in.tsv") failing "dedupe ($src)" - "$ND" dedupe --format tsv "${tsv[@]}"
    rm -rf "$work/dd"
    NAMED=$NAMED_TSV STDIN=$(stdin_of "$work/in.tsv") failing "dedupe --db ($src)" - "$ND" dedupe --db "$work/dd" --format tsv "${tsv[@]}"
    NAMED=$NAMED_TSV STDIN=$(stdin_of "$work/in.tsv") failing "fingerprint ($src)" - "$ND" fingerprint --format tsv "${tsv[@]}"
    NAMED=$NAMED_FP STDIN=$(stdin_of "$work/in.fp") failing "shard import ($src)" - "$ND" shard import "$work/sh" --format fp "${fp[@]}"
done
for s in "$work"/sh/shard-*; do
    "$ND" verify "$s" >/dev/null 2>&1 && ok || bad "shard import: $s does not verify"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
