#!/bin/bash
# CPU per event of each hop of a notification (issue 17 item 2), which unlike
# the latency does not depend much on the machine's load: runs
# pmix_event_bench.c under our pmixrun (16 ranks, one event every GAP_US,
# default 20 ms), reads every thread's run time (/proc/PID/task/TID/schedstat)
# of pmixrun and of the ranks at two moments 3 s apart in the middle of the
# run, and divides by the events sent in between.
# usage: bench/notify_cpu.sh <our build dir> [GAP_US]
# Prints figures only; nothing here asserts on time.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <our build dir> [GAP_US]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
GAP=${2:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
W=$(mktemp -d /tmp/notify_cpu.XXXXXX)
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -I"$SRC/include" "$HERE/pmix_event_bench.c" -o "$W/ours" -L"$BUILD/lib" -lpmix \
    -Wl,-rpath,"$BUILD/lib" -lpthread
env -u LD_LIBRARY_PATH -u LD_PRELOAD "$BUILD/bin/pmixrun" -n 16 --timeout 250 "$W/ours" 1 "$GAP" \
    > "$W/out" 2>&1 &
RUN=$!
snap() {
  for p in $(pgrep -P "$RUN") "$RUN"; do
    for t in /proc/"$p"/task/*; do
      echo "$p $(basename "$t") $(cut -d' ' -f1 "$t"/schedstat 2> /dev/null)"
    done
  done
}
sleep 2.5
snap > "$W/a"
sleep 3
snap > "$W/b"
wait "$RUN"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W" "$RUN" "$GAP" << 'PY'
import statistics, sys
w, run, gap = sys.argv[1], sys.argv[2], int(sys.argv[3])
def read(f):
    d = {}
    for line in open(f):
        p = line.split()
        if len(p) == 3:
            d[(p[0], p[1])] = int(p[2])
    return d
a, b = read(w + "/a"), read(w + "/b")
events = 3.0 / (gap / 1e6)
procs = {}
for k in b:
    if k in a:
        procs.setdefault(k[0], []).append((b[k] - a[k]) / events / 1000)
server = sorted(procs.pop(run, []), reverse=True)
ranks = sorted(max(t) for t in procs.values())
print("pmixrun threads, us per event (busiest first):", " ".join(f"{x:.1f}" for x in server[:3]))
if ranks:
    print(f"ranks' busiest thread, us per event: median {statistics.median(ranks):.1f}, "
          f"min {ranks[0]:.1f}, max {ranks[-1]:.1f}")
PY
grep '^RESULT' "$W/out" || true
