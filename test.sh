#!/usr/bin/env bash
# Run the whole neardup test suite: the plain build (every suite but 'slow',
# valgrind and memlimit included), an ASan+UBSan build (every suite but
# 'slow', 'valgrind', 'memlimit', 'plain', 'crash' and 'mpi': kill -9
# rounds, MPI ranks, and tests of code the others run under the
# sanitizers too, or of text only; CI's 20 minutes), and a short libFuzzer
# run of each fuzz target when clang is present (tests/fuzz/run.sh; a
# crash found fails the run).
# Exits non-zero when any test fails.
#   NEARDUP_TEST_QUICK=1   plain build only (a fast local loop)
#   NEARDUP_TEST_SLOW=1    also the 'slow' suite (long crash modes) on the
#                          plain build
#   NEARDUP_FUZZ_SECONDS   seconds per fuzz target (default 6; 0 skips)
#   NEARDUP_BUILD, NEARDUP_ASAN_BUILD, FUZZ_BUILD
#                          build directories (default build, build-asan,
#                          build-fuzz); with NEARDUP_BUILD set, setup.sh is
#                          not run (packages are assumed installed)
set -uo pipefail
cd "$(dirname "$0")"
build=${NEARDUP_BUILD:-build}
asan=${NEARDUP_ASAN_BUILD:-build-asan}
start=$SECONDS
phase() { echo "== $1 ($((SECONDS - start)) s elapsed)"; }

if [ "$build" = build ]; then
    ./setup.sh >/dev/null || { echo "test: setup/build failed" >&2; exit 1; }
else
    { [ -d "$build" ] || meson setup "$build" >/dev/null; } && ninja -C "$build" >/dev/null ||
        { echo "test: build of $build failed" >&2; exit 1; }
fi

status=0
skip_slow=(--no-suite slow)
[ "${NEARDUP_TEST_SLOW:-0}" = 1 ] && skip_slow=()
phase "plain build: meson test"
meson test -C "$build" --print-errorlogs --no-rebuild --num-processes 2 "${skip_slow[@]}" || status=1

if [ "${NEARDUP_TEST_QUICK:-0}" != 1 ]; then
    phase "ASan + UBSan build: meson test"
    [ -d "$asan" ] || meson setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
    ninja -C "$asan" >/dev/null || { echo "test: sanitizer build failed" >&2; exit 1; }
    NEARDUP_TEST_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
        meson test -C "$asan" --print-errorlogs --no-rebuild --num-processes 2 \
        --no-suite slow --no-suite valgrind --no-suite memlimit --no-suite plain \
        --no-suite crash --no-suite mpi || status=1

    secs=${NEARDUP_FUZZ_SECONDS:-6}
    if [ "$secs" != 0 ]; then
        phase "libFuzzer: ${secs} s per target"
        tests/fuzz/run.sh "$secs" || status=1
    fi
fi

phase "done"
if [ $status -eq 0 ]; then echo "test: all suites passed"; else echo "test: FAILURES (see above)"; fi
exit $status
