#!/usr/bin/env bash
# fault_io.sh — failing writes and fsyncs: each writing command runs with
# io_fault.so preloaded, which from its Nth write-side call on the store's
# files (write, pwrite, fsync, fdatasync, ftruncate, fallocate, ...) fails
# with ENOSPC or EIO, as a full or broken disk would. Then, without the
# shim:
#   - the command exited 0, or 2 with a message naming the error;
#   - the store opens and `neardup verify` passes;
#   - every document acknowledged before (the base store, and each `new`
#     line `add --sync` printed) is there; an import is all or nothing;
#     compact keeps the count; expire removes its documents or none... or
#     some (each deletion is atomic), never a kept one; a backup that
#     succeeded verifies and holds everything.
# usage: fault_io.sh NEARDUP IO_FAULT_SO [RUNS]
#   RUNS  values of N per command (default 8), spread evenly from the
#         first call to the last one the command makes; ENOSPC and EIO
#         alternate.
set -uo pipefail
ND=${1:?neardup binary}
SHIM=${2:?io_fault.so}
RUNS=${3:-8}
work=$(mktemp -d)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
docs() { "$ND" stats "$1" --json | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p'; }
# ASan's runtime must come first unless told not to mind the shim.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# gen PREFIX N: N documents HEX16<TAB>PREFIX-i with random fingerprints.
gen() {
    awk -v p="$1" -v n="$2" -v seed="${#1}$2" 'BEGIN { srand(seed + length(p) * 7919);
        for (i = 0; i < n; i++)
            printf "%04x%04x%04x%04x\t%s-%d\n", rand()*65536, rand()*65536, rand()*65536, rand()*65536, p, i }'
}

# A base store: 300 old documents (time 1000, expired by the expire
# step) and 300 kept ones, partly folded into the tables, partly fresh.
"$ND" init "$work/base" --k 3 --docs 1e5 --run-size 8 --fingerprint-only >/dev/null || { echo "init failed"; exit 1; }
gen old 300 > "$work/old"
gen keep 300 > "$work/keep"
gen add 200 > "$work/add"
gen imp 400 > "$work/imp"
"$ND" import "$work/base" --time 1000 "$work/old" >/dev/null &&
    "$ND" add "$work/base" --k 0 --time 2000000000 "$work/keep" >/dev/null ||
    { echo "base store failed"; exit 1; }
cut -f2 "$work/keep" > "$work/keep.keys"
base=$(docs "$work/base")

# check_keys DB FILE WHAT: every key of FILE is stored in DB.
check_keys() {
    [ -s "$2" ] || return 0
    if xargs -d '\n' -n 500 "$ND" get "$1" < "$2" >/dev/null 2>"$work/gerr"; then ok; else
        bad "$3: acknowledged documents missing: $(head -2 "$work/gerr")"; fi
}

# run NAME N ERRNO CMD...: run CMD on a fresh copy of the base store
# ($work/s/db; a backup goes to $work/s/bk) with the Nth call on a file
# under $work/s failing (0: none; NEARDUP_FAULT_IO_LOG counts the calls);
# leaves the exit status in rc and checks the exit and the error message.
run() {
    local name=$1 n=$2 err=$3
    shift 3
    rm -rf "$work/s"
    mkdir "$work/s"
    cp -a "$work/base" "$work/s/db"
    rm -f "$work/count"
    LD_PRELOAD="$SHIM" NEARDUP_FAULT_IO_N=$n NEARDUP_FAULT_IO_ERRNO=$err \
        NEARDUP_FAULT_IO_PATH="$work/s/" NEARDUP_FAULT_IO_LOG="$work/count" \
        "$@" > "$work/out" 2> "$work/err"
    rc=$?
    what="$name, call $n failing with $err"
    if [ "$rc" -eq 134 ] && grep -q 'AssertFalseAndGetStatusForPrevError' "$work/err"; then
        # RocksDB 7.8's own assertion (Debian builds it with asserts on): a
        # log writer that saw the failed write is flushed once more by its
        # destructor when the database closes. Rare (it depends on which
        # file the Nth call lands in); the store must still verify and
        # hold everything acknowledged, checked below. docs/operating.md, "Limits".
        echo "note: $what: RocksDB 7.8 asserted at close (known, docs/operating.md, Limits)"
        ok
    elif [ "$rc" -eq 0 ]; then ok
    elif [ "$rc" -ne 2 ]; then bad "$what: exit $rc: $(tail -2 "$work/err")"
    elif [ "$err" = ENOSPC ] && grep -qi 'no space left' "$work/err"; then ok
    elif [ "$err" = EIO ] && grep -qiE 'i/o error|input/output error' "$work/err"; then ok
    else bad "$what: exit 2 without naming $err: $(tail -2 "$work/err")"; fi
    if "$ND" verify "$work/s/db" >/dev/null 2>"$work/verr"; then ok; else
        bad "$what: verify: $(cat "$work/verr")"; return 1; fi
    check_keys "$work/s/db" "$work/keep.keys" "$what"
}

# check_NAME: what each command must leave (after run, rc set).
check_add() {
    awk -F'\t' '$1 == "new" {print $2}' "$work/out" > "$work/acked"
    check_keys "$work/s/db" "$work/acked" "$what"
}
check_import() {
    local n
    n=$(docs "$work/s/db")
    if [ "$n" -eq $((base + 400)) ] || { [ "$rc" -ne 0 ] && [ "$n" -eq "$base" ]; }; then ok; else
        bad "$what: $n documents after the import (base $base, exit $rc)"; fi
}
check_compact() {
    local n
    n=$(docs "$work/s/db")
    if [ "$n" -eq "$base" ]; then ok; else bad "$what: $n documents, want $base"; fi
}
check_expire() {
    local n
    n=$(docs "$work/s/db")
    if [ "$n" -eq $((base - 300)) ] || { [ "$rc" -ne 0 ] && [ "$n" -le "$base" ]; }; then ok; else
        bad "$what: $n documents after the expire (base $base, exit $rc)"; fi
}
check_backup() {
    if [ "$rc" -ne 0 ]; then
        # a failed backup leaves no target that a retry would refuse
        if [ -e "$work/s/bk" ]; then bad "$what: a failed backup left $work/s/bk"; return; fi
        ok
        "$ND" backup "$work/s/db" "$work/s/bk" >/dev/null 2>"$work/berr" ||
            { bad "$what: the retry failed: $(cat "$work/berr")"; return; }
    fi
    if "$ND" verify "$work/s/bk" >/dev/null 2>"$work/verr"; then ok; else
        bad "$what: the backup does not verify: $(cat "$work/verr")"; fi
    check_keys "$work/s/bk" "$work/keep.keys" "$what (backup)"
}

# each NAME CMD...: count the command's calls, then fail N = 1 .. calls in
# RUNS even steps, ENOSPC and EIO in turn.
each() {
    local name=$1 total step i=0 n err
    shift
    run "$name" 0 ENOSPC "$@" && "check_$name"
    total=$(cat "$work/count" 2>/dev/null || echo 0)
    [ "$total" -gt 0 ] || { bad "$name: no write-side call counted"; return; }
    step=$(( (total + RUNS - 1) / RUNS ))
    for ((n = 1; n <= total; n += step)); do
        err=ENOSPC; [ $((i++ % 2)) -eq 1 ] && err=EIO
        run "$name" "$n" "$err" "$@" && "check_$name"
    done
    # and the last call (a backup's is the fsync of the directory it made)
    if [ $(( (total - 1) % step )) -ne 0 ]; then
        err=EIO; i=$((i + 1))
        run "$name" "$total" "$err" "$@" && "check_$name"
    fi
    echo "$name: $total write-side calls, $i failed at N = 1..$total step $step"
}

# FAULT_IO_COMMANDS: which commands (default: all five). A failed write
# during `import` used to leave a store whose CURRENT named a MANIFEST
# RocksDB had deleted (RocksDB 7.8 rolls to a new MANIFEST it cannot
# write, then deletes the current one): the key-value adapter now stops
# file deletions at the first failed write (write_error in cmp_kv_impl.h).
for c in ${FAULT_IO_COMMANDS:-add compact expire backup import}; do
    case $c in
    add) each add "$ND" add "$work/s/db" --sync --k 0 --time 2000000000 "$work/add" ;;
    import) each import "$ND" import "$work/s/db" --time 2000000000 "$work/imp" ;;
    compact) each compact "$ND" compact "$work/s/db" ;;
    expire) each expire "$ND" expire "$work/s/db" --older-than 1d --now 1000000 ;;
    backup) each backup "$ND" backup "$work/s/db" "$work/s/bk" ;;
    *) bad "FAULT_IO_COMMANDS: unknown command '$c'" ;;
    esac
done

echo "$pass passed, $fail failed"
if [ "$fail" -eq 0 ]; then rm -rf "$work"; else echo "fault_io: kept $work" >&2; fi
[ "$fail" -eq 0 ]
