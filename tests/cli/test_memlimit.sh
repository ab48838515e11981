# test_memlimit.sh — commands under an address space limit (`ulimit -v`)
# never abort (issue 37, point 3): each succeeds or ends with exit 2 and
# a message; afterwards, without the limit, `verify` passes, everything
# acknowledged is there and a failed import left nothing of its input.
#
# The store is large enough that RocksDB flushes and compacts on its own
# threads while the commands run (200k documents, 10 tables): before the
# memory plan (compaction/cmp_kv_mem.h) `import` and `compact` died there
# with exit 134 (std::bad_alloc) or 139 (LZ4's unchecked allocation)
# between 100 and 200 MB.
#
# An AddressSanitizer build reserves terabytes of address space at start:
# under any limit the sanitizer fails before neardup runs. Plain build
# only (suite 'memlimit', which test.sh leaves out of the ASan run; the
# check below is for a direct run).
if ldd "$ND" 2>/dev/null | grep -q libasan; then
    echo "memory limits: skipped under AddressSanitizer (checked in the plain build)"
    return 0
fi

python3 -c "
import random
r = random.Random(37)
def w(name, prefix, n):
    with open(name, 'w') as f:
        for i in range(n): f.write('%016x\t%s%d\n' % (r.getrandbits(64), prefix, i))
w('base.txt', 'b', 200000)
w('imp.txt', 'i', 40000)
w('add.txt', 'a', 1500)
w('ded.txt', 'd', 1500)"
cut -f1 add.txt > q.txt

"$ND" init base --fingerprint-only >/dev/null
expect_exit 0 "$ND" import base base.txt

# limited CMD...: run CMD under `ulimit -v $v`; exit 0 or 2 (with a
# message), never an abort (134), a crash or a hang (killed after 100 s:
# an exception caught in the middle of RocksDB's write path once left
# its write queue taken, and the next call waited forever)
limited() {
    run timeout -s KILL 100 bash -c "ulimit -v $v; exec \"\$@\"" limited "$@"
    check "ulimit -v $v $*: exit $code (0 or 2; 134 is an abort, 137 a hang)" \
        "$code" -eq 0 -o "$code" -eq 2
    if [ "$code" -eq 2 ]; then check "ulimit -v $v $*: exit 2 without a message" -n "$err"; fi
    # the error's name once, not "out of memory: out of memory ..."
    check "ulimit -v $v $*: a message repeats itself: $err" \
        "$(printf '%s' "$err" | grep -c 'out of memory: out of memory')" -eq 0
}
# every key of column 2 of FILE is in keys.txt
all_there() { [ -z "$(cut -f2 "$1" | grep -vxFf keys.txt | head -n1)" ]; }

for v in 80000 120000 160000 200000 300000 1000000; do
    rm -rf db; cp -a base db
    limited "$ND" import db imp.txt; imported=$code
    STDIN=add.txt limited "$ND" add db -; printf '%s\n' "$out" | grep -E '^new' > acked.txt
    STDIN=q.txt limited "$ND" query db -
    limited "$ND" stats db
    limited "$ND" verify db
    limited "$ND" compact db
    limited "$ND" dedupe --db db --format fp ded.txt; deduped=$code
    # without the limit: whole, and what was acknowledged is there
    expect_exit 0 "$ND" verify db
    run "$ND" dump db
    printf '%s\n' "$out" | cut -f1 > keys.txt
    check "ulimit -v $v: base documents lost" -n "$(all_there base.txt && echo y)"
    if [ "$imported" -eq 0 ]; then
        check "ulimit -v $v: imported documents lost" -n "$(all_there imp.txt && echo y)"
    else
        check "ulimit -v $v: a failed import left documents" "$(grep -c '^i' keys.txt)" -eq 0
    fi
    check "ulimit -v $v: acknowledged adds lost" -n "$(all_there acked.txt && echo y)"
    if [ "$deduped" -eq 0 ]; then
        check "ulimit -v $v: dedupe --db documents lost" -n "$(all_there ded.txt && echo y)"
    fi
done

# Read-only opens (issue 44, point 6): before readers had a memory plan
# of their own, `verify`, `query`, `stats`, `dump` and `batch` ended with
# exit 134 (an allocation failing while the open built a family's
# memtable: Arena::~Arena's assertion) at 199-204 MB and 139 (RocksDB's
# unchecked malloc in LRUCacheShard::Insert, once its two threads' malloc
# arenas had taken 128 MB) at 205-250 MB. Each limit: exit 0, or 2 with
# `out of memory`; never a crash.
head -n 500 add.txt > batch.txt
# (ten limits, dense where the crashes were: 20 took twice the time and
# found nothing more)
for v in 80000 120000 160000 196000 200000 204000 208000 230000 300000 1000000; do
    for cmd in verify stats dump; do
        limited "$ND" "$cmd" base
        if [ "$code" -eq 2 ]; then expect_err_match 'out of memory'; fi
    done
    STDIN=q.txt limited "$ND" query base -
    STDIN=batch.txt limited "$ND" batch base -
    run timeout -s KILL 100 bash -c "ulimit -v $v; exec \"\$@\"" limited "$ND" get base b1 b77 nosuch
    check "ulimit -v $v get: exit $code (1: a key missing, or 2)" "$code" -eq 1 -o "$code" -eq 2
done
expect_exit 0 "$ND" verify base

# A zstd bomb (issue 47): 10 KB that expand to 300 MB without a newline.
# The decoded bytes go through the line buffer and its 64 MiB limit like
# plain input (peak RSS 144 MB, the same as a plain 300 MB line; the
# decoder's window is held to 128 MiB whatever a frame claims), so under
# 300 MB of address space (600 MB beside an open store) it is a bad line
# naming the file, not an abort.
head -c 300000000 /dev/zero | tr '\0' 'a' | zstd -q -1 > bomb.zst
for cmd in "300000 fingerprint --format tsv" "300000 dedupe --format jsonl" "600000 add db"; do
    v=${cmd%% *}
    # shellcheck disable=SC2086
    run timeout -s KILL 100 bash -c 'ulimit -v '"$v"'; exec "$@"' limited "$ND" ${cmd#* } bomb.zst
    check "zstd bomb under ulimit -v $cmd: exit $code, want 1" "$code" -eq 1
    expect_err_match '^neardup: bomb.zst:1: line longer than the 64 MiB limit$'
done
rm -f bomb.zst
