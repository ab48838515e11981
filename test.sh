#!/usr/bin/env bash
# Run the whole neardup test suite: the plain build and an ASan+UBSan build.
# Exits non-zero when any test fails. NEARDUP_TEST_QUICK=1 skips the
# sanitizer build (for a fast local loop).
set -uo pipefail
cd "$(dirname "$0")"
./setup.sh >/dev/null || { echo "test: setup/build failed" >&2; exit 1; }

status=0
echo "== plain build: meson test"
meson test -C build --print-errorlogs --no-rebuild --num-processes 2 || status=1

if [ "${NEARDUP_TEST_QUICK:-0}" != 1 ]; then
    echo "== ASan + UBSan build: meson test"
    [ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
    ninja -C build-asan >/dev/null || { echo "test: sanitizer build failed" >&2; exit 1; }
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C build-asan --print-errorlogs --no-rebuild --num-processes 2 \
        --no-suite slow || status=1
fi

if [ $status -eq 0 ]; then echo "test: all suites passed"; else echo "test: FAILURES (see above)"; fi
exit $status
