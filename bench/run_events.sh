#!/bin/bash
# Notify-to-handler latency (pmix_event_bench.c), ours under pmixrun and, with
# -o, OpenPMIx 4.2.2 under Debian's mpirun, in the style of run.sh.
# usage: bench/run_events.sh <our build dir> [-n NPROCS] [-r REPEATS] [-s SCALE] [-g GAP_US] [-o]
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
UNSET="-u LD_LIBRARY_PATH -u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
for ((i = 1; i <= REPS; ++i)); do
  echo "--- run $i/$REPS: ours"
  env $UNSET timeout 300 "$BUILD/bin/pmixrun" -n "$NP" --timeout 250 "$W/ours" "$SCALE" "$GAP"
  if [ "$OPENPMIX" = 1 ]; then
    [ -f "$W/openpmix" ] || $CC -O2 -Wall -Wextra -I"$OPMIX/include" "$HERE/pmix_event_bench.c" \
        -o "$W/openpmix" -L"$OPMIX/lib" -lpmix -Wl,-rpath,"$OPMIX/lib" -lpthread
    echo "--- run $i/$REPS: OpenPMIx 4.2.2"
    env $UNSET timeout 120 mpirun -np "$NP" --oversubscribe --allow-run-as-root --mca pmix ext3x \
        "$W/openpmix" "$SCALE" "$GAP" || echo "(OpenPMIx run failed or timed out: $?)"
  fi
done
echo "load after:  $(cat /proc/loadavg)"
