#!/usr/bin/env bash
# Run the whole neardup test suite, each test once, in the build that
# checks it most: under ASan+UBSan every test that runs there (all but
# the suites 'slow', 'valgrind', 'memlimit', 'plain', 'crash' and 'mpi':
# kill -9 rounds, MPI ranks, signals and timing, and tests of code the
# others run under the sanitizers too, or of text only; the Python tests,
# which a sanitized build leaves out), and in the plain build the rest
# (running both would double CI's time for checks the sanitized run
# already makes). Then a short libFuzzer run of each fuzz target when
# clang is present (tests/fuzz/run.sh; a crash found fails the run).
# CI's bound: 20 minutes on 2 cores.
# Exits non-zero when any test fails.
#   NEARDUP_TEST_QUICK=1   plain build only, every test (a fast local loop)
#   NEARDUP_TEST_SLOW=1    also the 'slow' suite (long crash modes) on the
#                          plain build
#   NEARDUP_FUZZ_SECONDS   seconds per fuzz target (default 4; 0 skips)
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
asan_only=(--no-suite slow --no-suite valgrind --no-suite memlimit --no-suite plain
           --no-suite crash --no-suite mpi)
plain_tests=()  # none named: every test
if [ "${NEARDUP_TEST_QUICK:-0}" != 1 ]; then
    phase "ASan + UBSan build"
    # (without variable tracking, GCC's pass for debuggers' variable
    # locations: under the sanitizers it took 20 s of fp_html.c's 26, and
    # the whole build 340 CPU-seconds against 197; reports keep their lines)
    [ -d "$asan" ] || meson setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fno-var-tracking-assignments -Dcpp_args=-fno-var-tracking-assignments >/dev/null
    ninja -C "$asan" >/dev/null || { echo "test: sanitizer build failed" >&2; exit 1; }
    # the plain build's tests less those the sanitized run makes
    # ("project:suite / name" -> name)
    names() { meson test -C "$1" --no-rebuild --list "${@:2}" 2>/dev/null | sed -n 's|^[^ ]* / ||p'; }
    # in the order of their priority (meson runs named tests in the order
    # named): the longest first, so that both processes end together
    mapfile -t plain_tests < <(comm -23 <(names "$build" "${skip_slow[@]}" | sort) \
                                        <(names "$asan" "${asan_only[@]}" | sort))
    mapfile -t plain_tests < <(meson introspect "$build" --tests | python3 -c '
import json, sys
want = set(sys.argv[1:])
tests = [t for t in json.load(sys.stdin) if t["name"] in want]
for t in sorted(tests, key=lambda t: -t.get("priority", 0)): print(t["name"])' "${plain_tests[@]}")
    [ ${#plain_tests[@]} -gt 0 ] || { echo "test: no test left for the plain build" >&2; exit 1; }
fi
phase "plain build: meson test"
meson test -C "$build" --print-errorlogs --no-rebuild --num-processes 2 "${skip_slow[@]}" \
    "${plain_tests[@]}" || status=1

if [ "${NEARDUP_TEST_QUICK:-0}" != 1 ]; then
    phase "ASan + UBSan build: meson test"
    # (allocation stacks of 8 frames, not 30: a tenth of the CPU time of
    # allocation-heavy tests; the faulting access keeps its whole stack)
    NEARDUP_TEST_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=8 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
        meson test -C "$asan" --print-errorlogs --no-rebuild --num-processes 2 "${asan_only[@]}" ||
        status=1

    secs=${NEARDUP_FUZZ_SECONDS:-4}
    if [ "$secs" != 0 ]; then
        phase "libFuzzer: ${secs} s per target"
        tests/fuzz/run.sh "$secs" || status=1
    fi
fi

phase "done"
if [ $status -eq 0 ]; then echo "test: all suites passed"; else echo "test: FAILURES (see above)"; fi
exit $status
