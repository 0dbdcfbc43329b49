#!/bin/bash
# Wall time of `mpirun -np N hello` (mpi_hello.c) with our libpmix.so.2 next to
# Debian's OpenPMIx 4.2.2: the same Debian Open MPI 4.1 mpirun, the same hello
# binary, only LD_LIBRARY_PATH differs, as in the drop-in acceptance run
# (/work/shared/abi/mpi_tests/run_acceptance.sh):
#   ours:     LD_LIBRARY_PATH=<build dir>/lib (libpmix.so.2 + its lib/pmix components)
#   OpenPMIx: LD_LIBRARY_PATH=<tmp> holding a copy of Debian's libpmix.so.2; the
#             copy still loads its three DSO components from its compiled-in
#             prefix (/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix)
#
# usage: bench/run_mpirun.sh <our build dir> [-r REPEATS] [-n "1 2 4 8 16 32"]
#   -r  runs of each variant per N, alternating ours/OpenPMIx (default 5)
#   -n  the process counts (default "1 2 4 8 16 32")
# Each run must exit 0 and print N "hello" lines, else the script stops.
# Prints, per N, the median wall time of each variant and the ratio; nothing
# here asserts on time. On a shared 2-core machine look at /proc/loadavg
# (printed before and after) and repeat.
set -euo pipefail

usage() { echo "usage: $0 <our build dir> [-r REPEATS] [-n \"1 2 4 8 16 32\"]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
REPS=5 NS="1 2 4 8 16 32"
while [ $# -gt 0 ]; do
  case $1 in
    -r) REPS=${2:?}; shift 2 ;;
    -n) NS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
OPMIX=/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2
for f in "$BUILD/lib/libpmix.so.2" "$OPMIX"; do
  [ -e "$f" ] || { echo "$0: missing $f" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "$0: mpirun not found (apt install openmpi-bin)" >&2; exit 1; }
command -v mpicc > /dev/null || { echo "$0: mpicc not found (apt install libopenmpi-dev)" >&2; exit 1; }

W=$(mktemp -d /tmp/pmix_mpirun_bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
mpicc -O2 -Wall -Wextra "$HERE/mpi_hello.c" -o "$W/hello"
mkdir "$W/openpmix"
cp -L "$OPMIX" "$W/openpmix/libpmix.so.2"
OURS_DIR="$BUILD/lib"
THEIRS_DIR="$W/openpmix"

# No LD_PRELOAD and no PMIx settings inherited from the caller; LD_LIBRARY_PATH
# is set to exactly one directory per variant.
UNSET="-u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"

# run_one <variant> <libdir> <N> <i>: appends "<variant> <N> <microseconds>" to $W/times
run_one() {
  local variant=$1 dir=$2 np=$3 i=$4 out="$W/out.$1.$3.$4" t0 t1 rc lines
  t0=$EPOCHREALTIME
  rc=0
  (cd "$W" && env $UNSET LD_LIBRARY_PATH="$dir" timeout 300 mpirun --allow-run-as-root \
      --oversubscribe --mca pmix ext3x -np "$np" ./hello) > "$out" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  lines=$(grep -c "^hello [0-9]*/$np\$" "$out" || true)
  if [ "$rc" != 0 ] || [ "$lines" != "$np" ]; then
    echo "$0: $variant -np $np run $i: exit $rc, $lines/$np hello lines:" >&2
    tail -20 "$out" >&2
    exit 1
  fi
  echo "$variant $np $(( ${t1/./} - ${t0/./} ))" >> "$W/times"
  rm -f "$out"
}

# One warm-up of each variant (page cache, dynamic loader) before timing.
run_one ours "$OURS_DIR" 1 0
run_one openpmix "$THEIRS_DIR" 1 0
: > "$W/times"

echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
for np in $NS; do
  for ((i = 1; i <= REPS; ++i)); do
    run_one ours "$OURS_DIR" "$np" "$i"
    run_one openpmix "$THEIRS_DIR" "$np" "$i"
  done
  echo "N=$np done: $(grep -c " $np " "$W/times") runs"
done
echo "load after:  $(cat /proc/loadavg)"
echo

python3 - "$W/times" "$REPS" "$NS" << 'EOF'
import statistics, sys
path, reps, ns = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3].split()]
t = {}
for line in open(path):
    v, n, us = line.split()
    t.setdefault((v, int(n)), []).append(int(us) / 1e3)
print(f"mpirun -np N hello, wall time, median of {reps} runs of each variant (min-max in brackets)")
hdr = f"{'N':>3} {'ours ms':>8} {'(range)':>15} {'OpenPMIx ms':>12} {'(range)':>15} {'ours/OpenPMIx':>14}"
print(hdr)
print("-" * len(hdr))
for n in ns:
    o, p = t[("ours", n)], t[("openpmix", n)]
    mo, mp = statistics.median(o), statistics.median(p)
    print(f"{n:>3} {mo:8.0f} {f'({min(o):.0f}-{max(o):.0f})':>15} {mp:12.0f} "
          f"{f'({min(p):.0f}-{max(p):.0f})':>15} {mo / mp:14.2f}")
EOF
