#!/bin/bash
# Heap allocations per notified event (issue 17 item 2): a count that, unlike
# the latency and the CPU time, does not depend on the machine's load. Runs
# pmix_event_bench.c under our pmixrun (16 ranks, one event every 20 ms),
# counts malloc and calloc calls (perf uprobes on libc) in pmixrun (the
# server) and in one rank (a receiver) over 2 s in the middle of the run, and
# divides by the events sent meanwhile (100).
# usage: bench/notify_allocs.sh <our build dir>      (root: perf probe)
# Prints figures only; nothing here asserts on time.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <our build dir>" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
LIBC=$(ldd "$BUILD/lib/libpmix.so.2" | awk '/libc\.so\.6/ {print $3}')
W=$(mktemp -d /tmp/notify_allocs.XXXXXX)
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -I"$SRC/include" "$HERE/pmix_event_bench.c" -o "$W/ours" -L"$BUILD/lib" -lpmix \
    -Wl,-rpath,"$BUILD/lib" -lpthread
perf probe -q -x "$LIBC" malloc 2> /dev/null || true
perf probe -q -x "$LIBC" calloc 2> /dev/null || true
env -u LD_LIBRARY_PATH -u LD_PRELOAD "$BUILD/bin/pmixrun" -n 16 --timeout 250 "$W/ours" 1 20000 \
    > "$W/out" 2>&1 &
RUN=$!
sleep 2
RANK=$(pgrep -P "$RUN" | sed -n 5p)
perf stat -x, -e probe_libc:malloc,probe_libc:calloc -p "$RUN" -o "$W/server" -- sleep 2 &
perf stat -x, -e probe_libc:malloc,probe_libc:calloc -p "$RANK" -o "$W/rank" -- sleep 2
wait
python3 - "$W" << 'PY'
import sys
def total(f):
    n = 0
    for line in open(f):
        p = line.split(',')
        if len(p) > 2 and p[0].strip().isdigit():
            n += int(p[0])
    return n
w = sys.argv[1]
print(f"allocations per event: server {total(w + '/server') / 100:.1f}, "
      f"one receiver {total(w + '/rank') / 100:.1f}")
PY
