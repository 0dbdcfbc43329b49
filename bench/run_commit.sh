#!/bin/bash
# Put, Commit and the collecting Fence timed apart (bench/commit_bench.c),
# built ONCE against Debian's OpenPMIx 4.2.2 headers and run in alternating
# rounds, as run_table.sh does:
#   openpmix: Debian mpirun, LD_LIBRARY_PATH = a copy of Debian's libpmix.so.2
#   ours:     the same mpirun, LD_LIBRARY_PATH = <our build dir>/lib
#   pmixrun:  our pmixrun, LD_LIBRARY_PATH = <our build dir>/lib
# and, with -b <another build dir> (an older commit of ours, for an A/B),
#   base:     the same mpirun on that build's lib
#   base-pmixrun: that build's pmixrun
#
# usage: bench/run_commit.sh <our build dir> [-n NPROCS] [-r ROUNDS] [-s SIZE] [-k CALLS]
#                            [-w WARMUP] [-b BASE_BUILD]
#   -n processes (default 16)   -r rounds of each variant (default 5)
#   -s bytes Put per call (default 65536)   -k calls timed per run (default 400)
#   -w 8-byte rounds before them (default 0)
# Prints each run's RESULT lines, the load before/after and the medians over
# the rounds (rank 0's medians of each call; "cpu": the process CPU time per
# round, all threads, which the load does not inflate). Nothing asserts on time.
set -euo pipefail

usage() {
  echo "usage: $0 <our build dir> [-n NPROCS] [-r ROUNDS] [-s SIZE] [-k CALLS] [-w WARMUP] [-b BASE_BUILD]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd) || usage
shift
NP=16 REPS=5 SIZE=65536 CALLS=400 WARM=0 BASE=
while [ $# -gt 0 ]; do
  case $1 in
    -n) NP=${2:?}; shift 2 ;;
    -r) REPS=${2:?}; shift 2 ;;
    -s) SIZE=${2:?}; shift 2 ;;
    -k) CALLS=${2:?}; shift 2 ;;
    -w) WARM=${2:?}; shift 2 ;;
    -b) BASE=$(cd "${2:?}" && pwd); shift 2 ;;
    *) usage ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
OPMIX=/usr/lib/x86_64-linux-gnu/pmix2
for f in "$BUILD/lib/libpmix.so.2" "$BUILD/bin/pmixrun" "$OPMIX/include/pmix.h" "$OPMIX/lib/libpmix.so.2" \
    ${BASE:+"$BASE/lib/libpmix.so.2" "$BASE/bin/pmixrun"}; do
  [ -e "$f" ] || { echo "$0: missing $f" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "$0: mpirun not found (apt install openmpi-bin)" >&2; exit 1; }

W=$(mktemp -d /tmp/pmix_commit.XXXXXX)
trap 'rm -rf "$W"' EXIT
${CC:-cc} -O2 -Wall -Wextra -I"$OPMIX/include" "$HERE/commit_bench.c" -o "$W/cb" \
    -L"$OPMIX/lib" -lpmix
mkdir "$W/openpmix"
cp -L "$OPMIX/lib/libpmix.so.2" "$W/openpmix/libpmix.so.2"
UNSET="-u LD_PRELOAD $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"

run() {  # run <variant> <round>
  local out="$W/$1.$2" rc=0 lib= host=mpirun
  case $1 in
    openpmix) lib=$W/openpmix ;;
    ours) lib=$BUILD/lib ;;
    pmixrun) lib=$BUILD/lib host=$BUILD/bin/pmixrun ;;
    base) lib=$BASE/lib ;;
    base-pmixrun) lib=$BASE/lib host=$BASE/bin/pmixrun ;;
  esac
  if [ "$host" = mpirun ]; then
    (cd "$W" && env $UNSET LD_LIBRARY_PATH="$lib" timeout 900 mpirun --allow-run-as-root \
        --oversubscribe --mca pmix ext3x -x LD_LIBRARY_PATH -np "$NP" ./cb "$SIZE" "$CALLS" "$WARM") \
        > "$out" 2>&1 || rc=$?
  else
    env $UNSET LD_LIBRARY_PATH="$lib" timeout 900 "$host" -n "$NP" --timeout 850 \
        "$W/cb" "$SIZE" "$CALLS" "$WARM" > "$out" 2>&1 || rc=$?
  fi
  if [ "$rc" != 0 ] || ! grep -q '^RESULT cpu' "$out"; then
    echo "$0: $1 round $2 failed (exit $rc):" >&2
    tail -20 "$out" >&2
    exit 1
  fi
  echo "--- $1 round $2 ($(cut -d' ' -f1-3 /proc/loadavg))"
  grep -E '^(RESULT|commit_bench)' "$out"
}

VARIANTS="openpmix ours pmixrun${BASE:+ base base-pmixrun}"
echo "load before: $(cat /proc/loadavg)   cores: $(nproc)   $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command: $0 $BUILD -n $NP -r $REPS -s $SIZE -k $CALLS -w $WARM${BASE:+ -b $BASE}"
for ((i = 1; i <= REPS; ++i)); do
  for v in $VARIANTS; do run "$v" "$i"; done
done
echo "load after:  $(cat /proc/loadavg)"
echo

python3 - "$W" "$REPS" "$NP" "$SIZE" $VARIANTS << 'EOF'
import statistics, sys
w, reps, np, size, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]

def med(variant, key):
    vals = []
    for i in range(1, reps + 1):
        for line in open(f"{w}/{variant}.{i}"):
            p = line.split()
            if len(p) == 3 and p[0] == "RESULT" and p[1] == key:
                vals.append(int(p[2]))
    return statistics.median(vals) if vals else None

def fmt(ns):
    if ns is None: return "-"
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} us"

print(f"{np} processes, {size} bytes per Put, median of {reps} alternating rounds")
hdr = f"{'figure':26}" + "".join(f"{v:>14}" for v in variants)
print(hdr)
print("-" * len(hdr))
for key, label in (("put", "PMIx_Put"), ("commit", "PMIx_Commit"),
                   ("fence", "collecting PMIx_Fence"), ("cpu", "CPU per round (process)")):
    print(f"{label:26}" + "".join(f"{fmt(med(v, key)):>14}" for v in variants))
EOF
