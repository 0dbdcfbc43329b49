#!/bin/bash
# The topology's cost to a client (topology_bench.c) under our pmixrun.
# usage: bench/run_topology.sh <our build dir> [-n NPROCS] [-r REPEATS]
# Prints figures only; nothing here asserts on time.
set -euo pipefail
usage() { echo "usage: $0 <our build dir> [-n NPROCS] [-r REPEATS]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
NP=4 REPS=5
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -r) REPS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
CC=${CC:-cc}
W=$(mktemp -d /tmp/pmix_topology_bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
$CC -O2 -Wall -Wextra -I"$SRC/include" "$HERE/topology_bench.c" -o "$W/ours" \
    -L"$BUILD/lib" -lpmix -Wl,-rpath,"$BUILD/lib" -lhwloc
UNSET="-u LD_LIBRARY_PATH -u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
for ((i = 1; i <= REPS; ++i)); do
  echo "--- run $i/$REPS"
  env $UNSET timeout 120 "$BUILD/bin/pmixrun" -n "$NP" --timeout 100 "$W/ours"
done
echo "load after:  $(cat /proc/loadavg)"
