#!/usr/bin/env bash
# Builds pmixpp from scratch and runs the whole test suite twice:
#   1. build/       RelWithDebInfo, warnings as errors
#   2. build-asan/  ASan+UBSan, warnings as errors
#   3. build-fuzz/  the libFuzzer targets (clang), each run for a short fixed
#                   time (PMIXPP_FUZZ_SECONDS, default 10; 0 skips it)
# Usage: scripts/test.sh [--quick]   (--quick: only the first configuration)
#        scripts/test.sh --tsan      (only a third: build-tsan/, ThreadSanitizer at -O1,
#                                     scripts/tsan.supp; docs/building.md, "ThreadSanitizer")
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export CTEST_OUTPUT_ON_FAILURE=1

configure_build_test() {
    local dir=$1; shift
    cmake -S . -B "$dir" -DPMIXPP_WERROR=ON "$@"
    cmake --build "$dir" -j"$jobs"
    ctest --test-dir "$dir" -j"$jobs" --timeout 300
}

if [ "${1:-}" = "--tsan" ]; then
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
        configure_build_test build-tsan -DCMAKE_BUILD_TYPE=None "-DCMAKE_C_FLAGS=-O1 -g1" \
        "-DCMAKE_CXX_FLAGS=-O1 -g1" -DPMIXPP_SANITIZE=thread
    exit 0
fi
configure_build_test build -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${1:-}" != "--quick" ]; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        configure_build_test build-asan -DCMAKE_BUILD_TYPE=Debug -DPMIXPP_SANITIZE=address,undefined
fi

# faults (issue 19 item 2): each fuzz target for a short fixed time on its
# corpus in tests/fuzz/corpus (docs/fuzzing.md); fails on any crash, leak or
# sanitizer report.
if [ "${1:-}" != "--quick" ] && [ "${PMIXPP_FUZZ_SECONDS:-10}" != 0 ]; then
    JOBS=$jobs scripts/fuzz.sh "${PMIXPP_FUZZ_SECONDS:-10}" fuzz_frame fuzz_handshake fuzz_codec \
        fuzz_regex
fi
