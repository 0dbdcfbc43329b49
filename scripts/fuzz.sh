#!/bin/sh
# Build the libFuzzer targets (tests/fuzz) in build-fuzz with clang and run each
# for SECONDS (default 30) on a copy of its seed corpus. Fails on any crash,
# leak, timeout or sanitizer report (libFuzzer exits non-zero). docs/fuzzing.md.
#   scripts/fuzz.sh [seconds] [target...]
set -eu
cd "$(dirname "$0")/.."
secs=${1:-30}
[ $# -gt 0 ] && shift
targets=${*:-"fuzz_frame fuzz_handshake fuzz_codec fuzz_regex"}
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DPMIXPP_FUZZ=ON -DPMIXPP_WERROR=ON -DPMIXPP_BUILD_TESTS=OFF -DPMIXPP_BUILD_EXAMPLES=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
cmake --build build-fuzz -j"${JOBS:-2}" --target $targets
for t in $targets; do
    work=build-fuzz/tests/fuzz/corpus-$t
    mkdir -p "$work"
    echo "== $t: $secs s"
    status=0
    build-fuzz/tests/fuzz/$t -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "$work" "tests/fuzz/corpus/$t" >"$work.log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|INFO: Seed|Done )' "$work.log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$work.log"
        echo "== $t FAILED (exit $status; log $work.log)"
        failed=1
    fi
done
exit "${failed:-0}"
