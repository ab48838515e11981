#!/usr/bin/env bash
# run.sh — build the libFuzzer targets in build-fuzz and run each one (two
# at a time).
#
# usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
#   SECONDS  time per target (default 20)
#   TARGET   codec, reader, html, fingerprint, api (default: all; api
#            only in a build with the server, libmicrohttpd)
# Builds with clang, -Dfuzz=true, -fsanitize=fuzzer,address,undefined
# (build dir: $FUZZ_BUILD, default build-fuzz). Each target starts from its
# committed seeds (tests/fuzz/corpus/<target>/) plus what earlier runs
# found (build-fuzz/fuzz-corpus/<target>/, not committed). A crash, leak,
# sanitizer report or timeout leaves its input in
# build-fuzz/fuzz-artifacts/<target>/ and makes the script exit 1.
# Without clang (or its libFuzzer runtime) it prints a NOTICE and exits 0.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(codec reader html fingerprint api)
build=${FUZZ_BUILD:-build-fuzz}

probe=$(mktemp -d)
echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; (void)n; return 0; }' > "$probe/p.c"
if ! command -v clang >/dev/null || ! clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null; then
    rm -rf "$probe"
    echo "NOTICE: clang with libFuzzer not found: fuzz targets not built or run" >&2
    exit 0
fi
rm -rf "$probe"
if [ ! -f "$build/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$build" -Dfuzz=true -Dmpi=disabled \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link -Dcpp_args=-fsanitize=fuzzer-no-link >/dev/null ||
        { echo "fuzz: meson setup failed" >&2; exit 2; }
fi
# a target the build lacks (api without libmicrohttpd) is left out, said
have=()
for t in "${targets[@]}"; do
    if ninja -C "$build" -t query "tests/fuzz/fuzz_$t" >/dev/null 2>&1; then have+=("$t")
    else echo "NOTICE: fuzz $t: not in this build (the server needs libmicrohttpd): skipped" >&2; fi
done
targets=("${have[@]}")
[ ${#targets[@]} -gt 0 ] || exit 0
ninja -C "$build" $(printf 'tests/fuzz/fuzz_%s ' "${targets[@]}") >/dev/null ||
    { echo "fuzz: build failed" >&2; exit 2; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# fuzz_one TARGET: run it; its summary into $build/fuzz-TARGET.result,
# status 1 when it found something
fuzz_one() {
    local t=$1 work="$build/fuzz-corpus/$1" art="$build/fuzz-artifacts/$1/" rc runs cov
    local log="$build/fuzz-$t.log"
    mkdir -p "$work" "$art"
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -artifact_prefix="$art" -print_final_stats=1 \
        "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    runs=$(LC_ALL=C sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -ao 'cov: [0-9]*' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        echo "fuzz $t: ok, ${runs:-?} runs in ${secs}s, ${cov:-cov: ?}" > "$build/fuzz-$t.result"
        return 0
    fi
    { echo "fuzz $t: FAILED (exit $rc); input: $(ls -t "$art" | head -1 | sed "s|^|$art|")"
      grep -aE 'ERROR|SUMMARY|runtime error|#[0-9]+ 0x' "$log" | head -15; } > "$build/fuzz-$t.result"
    return 1
}

# two targets at a time (each runs on one core)
status=0 pids=()
for t in "${targets[@]}"; do
    if [ ${#pids[@]} -ge 2 ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
    fuzz_one "$t" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
for t in "${targets[@]}"; do cat "$build/fuzz-$t.result"; done
exit $status
