#!/bin/bash
# Notify-to-handler latency (pmix_event_bench.c), ours under pmixrun and, with
# -o, OpenPMIx 4.2.2 under Debian's mpirun, in the style of run.sh.
# usage: bench/run_events.sh <our build dir> [-n NPROCS] [-r REPEATS] [-s SCALE] [-g GAP_US] [-o]
# Each round first runs bench/wake_floor.c (the same shape without PMIx: a
# relay process and NP receivers over AF_UNIX sockets, the notifier writing
# from its own thread) with the same count and gap, then ours: the last lines
# give the median of each over the rounds and their ratio (issue 17 item 2:
# ours <= 1.5x the floor).
# Prints figures only; nothing here asserts on time.
set -euo pipefail
usage() { echo "usage: $0 <our build dir> [-n NPROCS] [-r REPEATS] [-s SCALE] [-g GAP_US] [-o]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
NP=16 REPS=3 SCALE=1 GAP=2000 OPENPMIX=0
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -r) REPS=${2:?}; shift 2 ;;
    -s) SCALE=${2:?}; shift 2 ;;
    -g) GAP=${2:?}; shift 2 ;;
    -o) OPENPMIX=1; shift ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
OPMIX=/usr/lib/x86_64-linux-gnu/pmix2
CC=${CC:-cc}
W=$(mktemp -d /tmp/pmix_event_bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
$CC -O2 -Wall -Wextra -I"$SRC/include" "$HERE/pmix_event_bench.c" -o "$W/ours" \
    -L"$BUILD/lib" -lpmix -Wl,-rpath,"$BUILD/lib" -lpthread
$CC -O2 -Wall -Wextra "$HERE/wake_floor.c" -o "$W/wake_floor" -lpthread
UNSET="-u LD_LIBRARY_PATH -u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
for ((i = 1; i <= REPS; ++i)); do
  echo "--- run $i/$REPS: wake floor ($(cut -d' ' -f1-3 /proc/loadavg))"
  EVENTS=$((400 / SCALE)); [ "$EVENTS" -ge 5 ] || EVENTS=5
  "$W/wake_floor" "$NP" "$EVENTS" "$GAP" | tee "$W/floor.$i"
  echo "--- run $i/$REPS: ours ($(cut -d' ' -f1-3 /proc/loadavg))"
  env $UNSET timeout 300 "$BUILD/bin/pmixrun" -n "$NP" --timeout 250 "$W/ours" "$SCALE" "$GAP" \
      | tee "$W/ours.$i"
  if [ "$OPENPMIX" = 1 ]; then
    [ -f "$W/openpmix" ] || $CC -O2 -Wall -Wextra -I"$OPMIX/include" "$HERE/pmix_event_bench.c" \
        -o "$W/openpmix" -L"$OPMIX/lib" -lpmix -Wl,-rpath,"$OPMIX/lib" -lpthread
    echo "--- run $i/$REPS: OpenPMIx 4.2.2"
    env $UNSET timeout 120 mpirun -np "$NP" --oversubscribe --allow-run-as-root --mca pmix ext3x \
        "$W/openpmix" "$SCALE" "$GAP" || echo "(OpenPMIx run failed or timed out: $?)"
  fi
done
echo "load after:  $(cat /proc/loadavg)"
python3 - "$W" "$REPS" << 'EOF'
import statistics, sys
w, reps = sys.argv[1], int(sys.argv[2])
def med(prefix, key):
    vals = []
    for i in range(1, reps + 1):
        for line in open(f"{w}/{prefix}.{i}"):
            p = line.split()
            if len(p) == 3 and p[:2] == ["RESULT", key]:
                vals.append(int(p[2]))
    return statistics.median(vals) if vals else None
f, o = med("floor", "floor_median"), med("ours", "event_median")
fp, op = med("floor", "floor_p90"), med("ours", "event_p90")
print(f"median of {reps} rounds: wake floor {f / 1e3:.0f} us (p90 {fp / 1e3:.0f} us), "
      f"ours {o / 1e3:.0f} us (p90 {op / 1e3:.0f} us): ours / floor = {o / f:.2f} (target <= 1.5)")
EOF
