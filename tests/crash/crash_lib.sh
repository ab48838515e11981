# crash_lib.sh — what the crash_*.sh scripts share, sourced with their
# arguments (NEARDUP KILLS [SEED]): the arguments, a scratch directory,
# pass/fail counters, the database's document count, killing a background
# command after a delay, and the closing summary.
ND=${1:?neardup binary}
KILLS=${2:-5}
SEED=${3:-$(( $(date +%s) % 100000 ))}
work=$(mktemp -d)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
docs() { "$ND" stats "$work/db" --json | sed -n 's/.*"documents":\([0-9]*\),.*/\1/p'; }

# kill_after PID MS: wait MS milliseconds, kill -9 PID and reap it; its exit
# status is left in rc (137 when the kill landed).
kill_after() {
    sleep "$(printf '%d.%03d' $(($2 / 1000)) $(($2 % 1000)))"
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    rc=$?
}

# finish NAME: print the counts; keep the scratch directory only when
# something failed; succeed when nothing did.
finish() {
    echo "$pass passed, $fail failed"
    if [ "$fail" -eq 0 ]; then rm -rf "$work"; else echo "$1: kept $work" >&2; fi
    [ "$fail" -eq 0 ]
}
