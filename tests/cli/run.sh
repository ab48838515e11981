#!/usr/bin/env bash
# run.sh — harness of the shell-driven CLI tests (in the spirit of zstd's
# playTests.sh).
#
# usage: run.sh TEST_FILE...   with $NEARDUP pointing at the binary.
# A test file is sourced in a fresh temporary directory ($T) and uses:
#   run CMD...                 run, capturing $out, $err and $code (stdin
#                              from the file $STDIN, else /dev/null)
#   expect_exit N CMD...       run and check the exit code
#   expect_out_eq TEXT         $out equals TEXT exactly
#   expect_out_match REGEX     $out matches (grep -E)
#   expect_err_match REGEX     $err matches (grep -E)
#   expect_lines N             $out has N lines
#   check NAME CONDITION...    a free assertion (test CONDITION)
# It prints one line per failure and, last, "N passed, N failed"; the
# exit status is non-zero when anything failed.
set -u
ND=${NEARDUP:?set NEARDUP to the neardup binary}
pass=0
fail=0
cur=""
out="" err="" code=0

_fail() { fail=$((fail + 1)); printf 'FAIL [%s:%s] %s\n' "$cur" "${BASH_LINENO[1]}" "$*"; }
_pass() { pass=$((pass + 1)); }

run() {
    out=$("$@" 2>"$T/.err" <"${STDIN:-/dev/null}"); code=$?
    err=$(cat "$T/.err")
}
expect_exit() {
    local want=$1; shift
    run "$@"
    if [ "$code" -eq "$want" ]; then _pass; else _fail "exit $code, want $want: $* :: $err"; fi
}
expect_out_eq() { if [ "$out" == "$1" ]; then _pass; else _fail "stdout: got [$out] want [$1]"; fi; }
expect_out_match() { if printf '%s\n' "$out" | grep -Eq -- "$1"; then _pass; else _fail "stdout lacks /$1/: [$out]"; fi; }
expect_err_match() { if printf '%s\n' "$err" | grep -Eq -- "$1"; then _pass; else _fail "stderr lacks /$1/: [$err]"; fi; }
expect_lines() {
    local n=0
    [ -n "$out" ] && n=$(printf '%s\n' "$out" | wc -l)
    if [ "$n" -eq "$1" ]; then _pass; else _fail "stdout has $n lines, want $1"; fi
}
check() { local name=$1; shift; if test "$@"; then _pass; else _fail "$name"; fi; }

for f in "$@"; do
    cur=$(basename "$f")
    T=$(mktemp -d)
    src=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
    pushd "$T" >/dev/null || exit 2
    # shellcheck disable=SC1090
    source "$src"
    popd >/dev/null || exit 2
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
